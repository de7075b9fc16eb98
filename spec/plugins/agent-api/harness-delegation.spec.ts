import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { OperationRecord } from '../../../kernel/store.js';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { HarnessOptionsError } from '../../../plugins/agent-api/agent-errors.js';
import { runFrameworkTool } from '../../../plugins/agent-api/agent-resources.js';
import { defineSubagent } from '../../../plugins/agent-api/define-subagent.js';
import { defineTool } from '../../../plugins/agent-api/define-tool.js';
import type { Harness } from '../../../plugins/agent-api/harness.js';
import { init } from '../../../plugins/agent-api/init.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useSubagent } from '../../../plugins/agent-api/use-subagent.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { allow, deny, RecordingReceiver } from '../../helpers/webhook-receiver.js';

const USE_HARNESS = [{ toolCalls: [{ identifier: 'agent', apiName: 'work', args: {} }] }, { text: 'agent done' }];
const TASK_TURN = { toolCalls: [{ identifier: 'agent', apiName: 'task', args: { agent: 'researcher', prompt: 'find the release date' } }] };

/** Document 001: "The conversation can delegate to the agent's declared subagents via the task tool" (harness.prompt). */
describe('agent-api: task delegation inside harness conversations', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-harness-task-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const researcher = defineSubagent({ name: 'researcher', description: 'Digs up facts.', agent: () => 'You research.', model: { provider: 'scripted', name: 'child', turns: [{ text: 'It shipped on May 4.' }] } });

  async function run(work: (harness: Harness) => Promise<unknown>, env: Record<string, string> = {}): Promise<{ agentOp: OperationRecord; harnessOps: OperationRecord[]; all: OperationRecord[] }> {
    function Lead(): void {
      useModel({ provider: 'scripted', turns: USE_HARNESS });
      useSubagent(researcher);
      useTool(defineTool({ name: 'work', description: 'Uses the harness', harness: true, run: async ({ harness }) => work(harness!) }));
    }
    runtime = await start({ agents: [Lead], env, config: { cwd: dir } });
    await init(Lead, { id: 'l-1' }).dispatch('go');
    const [agentOp] = await runtime.kernel.store.listThreadOperations('agent:Lead:l-1');
    const all = await runtime.kernel.store.listOperations({});
    const harnessOps = all.filter((o) => o.parentOperationId === agentOp!.id).sort((a, b) => (a.id < b.id ? -1 : 1));
    return { agentOp: agentOp!, harnessOps, all };
  }

  it("a scratch model's task call runs the agent's subagent as a child of the prompt's operation; its answer is the tool result", async () => {
    let answer = '';
    const { agentOp, harnessOps, all } = await run(async (harness) => {
      answer = (await harness.prompt('when did it ship?', { model: { provider: 'scripted', name: 'scratch', turns: [TASK_TURN, { text: 'May 4, says the researcher' }] } })).text;
      return answer;
    });
    assert.equal(answer, 'May 4, says the researcher');
    assert.equal(harnessOps.length, 1);
    const prompt = harnessOps[0]!;
    const children = all.filter((o) => o.parentOperationId === prompt.id);
    assert.equal(children.length, 1, 'one child, linked to the prompt operation');
    assert.deepEqual([children[0]!.agentId, children[0]!.status], ['Lead.researcher', 'done']);
    assert.equal(prompt.parentOperationId, agentOp.id);
    const tool = (await runtime!.kernel.store.listMessages(prompt.id)).find((m) => m.role === 'tool')!;
    assert.deepEqual([tool.toolResult?.success, tool.content], [true, 'It shipped on May 4.']);
    // The task tool the scratch model was offered lists the roster.
    const offered = (prompt.agent as { tools: string[] }).tools;
    assert.ok(offered.includes('agent/task'), `allow-list: ${offered.join(', ')}`);
    const childMessages = (await runtime!.kernel.store.listMessages(children[0]!.id)).map((m) => `${m.role}: ${m.content}`);
    assert.deepEqual(childMessages.slice(-2), ['user: find the release date', 'assistant: It shipped on May 4.']);
  });

  it('a policy denying agent/task keeps the subagent from running: the gate is the one every tool call passes', async () => {
    const packs = path.join(dir, 'packs');
    await mkdir(packs, { recursive: true });
    await writeFile(path.join(packs, 'no-tasks.yaml'), `name: no-tasks\npolicies:\n  - id: no-tasks\n    events: [beforeToolCall]\n    match: '^agent/task$'\n    effect: deny\n    reason: delegation is off here\n`);
    const { harnessOps, all } = await run(
      async (harness) => (await harness.prompt('when?', { model: { provider: 'scripted', name: 'scratch', turns: [TASK_TURN, { text: 'could not delegate' }] } })).text,
      { HOOKGATE_POLICIES__PATHS: packs },
    );
    const prompt = harnessOps[0]!;
    assert.equal(all.filter((o) => o.parentOperationId === prompt.id).length, 0, 'no child operation');
    const tool = (await runtime!.kernel.store.listMessages(prompt.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.error, 'hook_denied');
    assert.match(tool.content, /delegation is off here/);
  });

  it('a webhook control (environment hook) denying agent/task keeps the subagent from running, and sees the call with the prompt operation', async () => {
    const receiver = await RecordingReceiver.start();
    try {
      receiver.route('/env', (req) => (req.body?.apiName === 'task' ? deny('no delegating from scratch') : allow()));
      const { harnessOps, all } = await run(
        async (harness) => (await harness.prompt('when?', { model: { provider: 'scripted', name: 'scratch', turns: [TASK_TURN, { text: 'denied' }] } })).text,
        { AGENT_HOOK_WEBHOOK_URL: receiver.url('/env'), AGENT_HOOK_WEBHOOK_TOKEN: 'spec-token-9f', AGENT_HOOK_WEBHOOK_EVENTS: 'beforeToolCall', AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING: 'toolCall' },
      );
      const prompt = harnessOps[0]!;
      assert.equal(all.filter((o) => o.parentOperationId === prompt.id).length, 0, 'no child operation');
      const tool = (await runtime!.kernel.store.listMessages(prompt.id)).find((m) => m.role === 'tool')!;
      assert.equal(tool.toolResult?.success, false);
      assert.match(tool.content, /no delegating from scratch/);
      const seen = receiver.requests.filter((r) => (r.body as { apiName?: string } | undefined)?.apiName === 'task');
      assert.equal(seen.length, 1);
      assert.equal((seen[0]!.body as { operationId?: string }).operationId, prompt.id);
    } finally {
      await receiver.close();
    }
  });

  it('an unknown subagent name is a factual miss listing the live set; a prompt tool named task is refused while the agent declares subagents', async () => {
    let refused: unknown;
    const { harnessOps, all } = await run(async (harness) => {
      refused = await harness.prompt('x', { model: 'scripted/scratch', tools: [defineTool({ name: 'task', description: 'Mine', run: () => 1 })] }).catch((e: unknown) => e);
      const miss = { toolCalls: [{ identifier: 'agent', apiName: 'task', args: { agent: 'nobody', prompt: 'hi' } }] };
      return (await harness.prompt('delegate', { model: { provider: 'scripted', name: 'scratch', turns: [miss, { text: 'ok' }] } })).text;
    });
    assert.ok(refused instanceof HarnessOptionsError, String(refused));
    assert.match((refused as Error).message, /tools\[0\] is named "task"/);
    const prompt = harnessOps[0]!;
    assert.equal(all.filter((o) => o.parentOperationId === prompt.id).length, 0);
    const tool = (await runtime!.kernel.store.listMessages(prompt.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.content, 'Subagent "nobody" is not declared. Available subagents: researcher.');
  });

  it('a harness conversation counts as one level against the delegation-depth cap', () => {
    const Deep = () => (useSubagent(researcher), undefined);
    const rendered = renderAgent(Deep as Agent, { kind: 'subagent' });
    // Three delegations deep: the agent itself may still delegate (depth 3 < 4), its harness conversation may not (3 + 1).
    assert.deepEqual(runFrameworkTool(rendered, 'A.b.c.d', 'task', { agent: 'researcher', prompt: 'p' }), { delegate: { agentSource: 'agent-functions', agentId: 'A.b.c.d.researcher', prompt: 'p' } });
    assert.throws(() => runFrameworkTool(rendered, 'A.b.c.d', 'task', { agent: 'researcher', prompt: 'p' }, 1), /Maximum delegation depth \(4\) exceeded: agent "A\.b\.c\.d" \(counting 1 harness conversation\) is 4 delegations deep/);
  });
});
