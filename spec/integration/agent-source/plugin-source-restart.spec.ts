import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { AGENT_SOURCE_CONTEXT_KEY, type AgentSource, type AgentView } from '../../../kernel/runtime/agent-source.js';
import { AgentSources, ModelProviders, ToolSources } from '../../../kernel/tokens.js';
import { RecordingModel, TestTools, toolTurn } from '../../helpers/runtime-fixtures.js';

/**
 * An agent source from a plugin (the `AgentSources` token), on a SQLite file
 * shared by kernels one after another: the operation stores its source, a
 * kernel without the source leaves it as stored, and one with it goes on
 * from the last committed step with the view of that step.
 */
describe('agent sources: a plugin source across a restart', function () {
  this.timeout(30000);
  let dir: string;
  const kernels: Kernel[] = [];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-agent-source-')));
  });
  afterEach(async () => {
    for (const k of kernels.splice(0)) await k.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  const turns = { provider: 'recorded', turns: [toolTurn('test', 'echo', { n: 1 }, 'c1'), { text: 'done' }] } as AgentView['model'];

  /** The plugin's source: after the first step the agent needs approval for test/echo and gets new instructions. */
  function rulebook(tools: TestTools): AgentSource {
    const entries = tools.list().map((tool) => ({ tool, source: tools }));
    return {
      id: 'rulebook',
      resolve: (_ref, context) =>
        context.stepIndex === 0
          ? { instructions: 'rules v1', model: turns, tools: entries, allowList: ['test/*'] }
          : { instructions: 'rules v2', model: turns, tools: entries, allowList: ['test/*'], approval: { tools: ['test/echo'] } },
    };
  }

  async function boot(withSource: boolean): Promise<{ kernel: Kernel; tools: TestTools; model: RecordingModel }> {
    const tools = new TestTools();
    const model = new RecordingModel();
    const plugin = definePlugin({
      id: 'rulebook-plugin',
      provides: withSource ? [ToolSources, ModelProviders, AgentSources] : [ToolSources, ModelProviders],
      register: (ctx) => {
        ctx.bindValue(ToolSources, tools);
        ctx.bindValue(ModelProviders, model);
        if (withSource) ctx.bindValue(AgentSources, rulebook(tools));
      },
    });
    const kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), plugins: [plugin], env: {} });
    kernels.push(kernel);
    await kernel.start();
    return { kernel, tools, model };
  }

  it('parks under the view of its step, is left as stored by a kernel without the source, and finishes in one that has it', async () => {
    const a = await boot(true);
    assert.deepEqual(a.kernel.agentSources.ids(), ['static', 'rulebook']);
    const handle = await a.kernel.execAgent({ agentSource: 'rulebook', agentId: 'clerk', prompt: 'go' });
    const parked = await handle.settled();
    assert.equal(parked.status, 'waiting_approval');
    assert.equal(parked.context[AGENT_SOURCE_CONTEXT_KEY], 'rulebook');
    assert.equal(a.tools.calls.length, 0);
    await a.kernel.stop();

    // Without the plugin's source: a clear error, and nothing changes.
    const b = await boot(false);
    await assert.rejects(b.kernel.approve(handle.operationId), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'AGENT_SOURCE_NOT_FOUND');
      assert.match(err.message, /from agent source "rulebook", which this kernel does not have \(have: static\)/);
      return true;
    });
    const untouched = (await b.kernel.getOperation(handle.operationId))!;
    assert.equal(untouched.status, 'waiting_approval');
    assert.equal(untouched.version, parked.version);
    await b.kernel.stop();

    const c = await boot(true);
    const final = await (await c.kernel.approve(handle.operationId)).completed();
    assert.equal(final.status, 'done');
    assert.equal(c.tools.calls.length, 1);
    // The model turn after the restart got the instructions of that step's view.
    const [turn] = c.model.requests.filter((r) => r.purpose === 'turn');
    assert.deepEqual(turn!.messages[0], { role: 'system', content: 'rules v2' });
    // `show` still reads the definition stored at start.
    assert.equal(((await c.kernel.getOperation(handle.operationId))!.agent as { instructions?: string }).instructions, 'rules v1');
  });
});
