import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defineSubagent } from '../../../plugins/agent-api/define-subagent.js';
import { defineTool } from '../../../plugins/agent-api/define-tool.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useSubagent } from '../../../plugins/agent-api/use-subagent.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import type { SubagentDefinition } from '../../../plugins/agent-api/define-subagent.js';

const task = (agent: string) => ({ toolCalls: [{ identifier: 'agent', apiName: 'task', args: { agent, prompt: `go, ${agent}` } }] });

/**
 * A subagent named `name` that delegates to `next` with a plain task call
 * (its scripted model asks once, then answers), or a leaf that answers.
 */
function hop(name: string, next?: SubagentDefinition): SubagentDefinition {
  return defineSubagent({
    name,
    description: `Hop ${name}.`,
    agent: () => {
      if (next !== undefined) useSubagent(next);
      return `You are ${name}.`;
    },
    model: { provider: 'scripted', name, turns: next !== undefined ? [task(next.name), { text: `${name} done` }] : [{ text: `${name} reached` }] },
  });
}

/**
 * Attack (review): a harness conversation counts as one level against the
 * delegation-depth cap (document 001), so the levels it adds must still count
 * for the children it opens. A model that delegates from a scratch
 * conversation and keeps delegating with plain task calls must stop at the
 * cap (4 levels, a harness being one), not one level further per harness.
 */
describe('agent-api attack: delegation depth through a harness conversation', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-harness-depth-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it("a subagent opened from a harness prompt keeps the harness's level: plain task calls below it stop at the cap", async () => {
    const s4 = hop('s4');
    const s3 = hop('s3', s4);
    const s2 = hop('s2', s3);
    const s1 = hop('s1', s2);
    function Lead(): void {
      useModel({ provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'agent', apiName: 'work', args: {} }] }, { text: 'lead done' }] });
      useSubagent(s1);
      useTool(
        defineTool({
          name: 'work',
          description: 'Delegates from a scratch conversation',
          harness: true,
          run: async ({ harness }) => (await harness!.prompt('delegate', { model: { provider: 'scripted', name: 'scratch', turns: [task('s1'), { text: 'scratch done' }] } })).text,
        }),
      );
    }
    runtime = await start({ agents: [Lead], config: { cwd: dir } });
    await init(Lead, { id: 'd-1' }).dispatch('go');
    const all = await runtime.kernel.store.listOperations({});
    const ids = all.map((o) => o.agentId);
    // Levels: harness (1), s1 (2), s2 (3), s3 (4); s3 may not open s4 (a fifth level).
    assert.ok(ids.includes('Lead.s1.s2.s3'), `operations: ${ids.join(', ')}`);
    assert.ok(!ids.includes('Lead.s1.s2.s3.s4'), `s4 ran five levels below Lead: ${ids.join(', ')}`);
    const s3op = all.find((o) => o.agentId === 'Lead.s1.s2.s3')!;
    const tool = (await runtime.kernel.store.listMessages(s3op.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, false);
    assert.match(tool.content, /Maximum delegation depth \(4\) exceeded/);
  });
});
