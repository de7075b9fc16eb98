import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ToolSources } from '../../../kernel/tokens.js';
import type { ToolSource } from '../../../kernel/tools.js';
import { RecordingReceiver, deny } from '../../helpers/webhook-receiver.js';
import { callIdOf } from '../../helpers/runtime-fixtures.js';

/** The identity the runtime minted for the scripted call `job-1`: what a completion must name. */
async function jobId(kernel: Kernel, operationId: string): Promise<string> {
  return callIdOf(await kernel.listMessages(operationId), 'job-1');
}

/** `async/job` answers later: it records the call and returns `{ deferred: true }`. */
function deferredTools() {
  const started: Array<{ operationId: string; toolCallId: string }> = [];
  const source: ToolSource = {
    id: 'deferred-tools',
    list: () => [{ identifier: 'async', apiName: 'job', description: 'A job whose result arrives later', parameters: { type: 'object' }, toolSource: 'jobs' }],
    execute: async (_call, ctx) => {
      started.push({ operationId: ctx.operationId, toolCallId: ctx.toolCallId });
      return { deferred: true };
    },
  };
  const plugin = definePlugin({ id: 'deferred-tools', provides: [ToolSources], register: (ctx) => ctx.bindValue(ToolSources, source) });
  return { started, plugin };
}

const agent = (extra: Record<string, unknown> = {}) => ({
  id: 'waiter',
  model: {
    provider: 'scripted',
    turns: [{ toolCalls: [{ id: 'job-1', identifier: 'async', apiName: 'job', args: { n: 1 } }] }, { text: 'got it' }],
  },
  tools: ['async/*'],
  ...extra,
});

describe('runtime: deferred tool completion', function () {
  this.timeout(20000);
  let dir: string;
  const kernels: Kernel[] = [];

  async function start(store: 'memory' | 'sqlite' = 'memory') {
    const tools = deferredTools();
    const config = loadConfig({ cwd: dir, env: store === 'memory' ? { HOOKGATE_STORE__DRIVER: 'memory' } : {} });
    const kernel = createKernel({ config, plugins: [tools.plugin], env: {} });
    await kernel.start();
    kernels.push(kernel);
    return { kernel, started: tools.started };
  }

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-deferred-')));
  });
  afterEach(async () => {
    for (const k of kernels.splice(0)) await k.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('parks the operation as waiting_tool with an empty placeholder until the result arrives', async () => {
    const { kernel, started } = await start();
    kernel.agents.define(agent());
    const handle = await kernel.execAgent({ agentId: 'waiter', prompt: 'go' });
    const parked = await handle.settled();
    assert.equal(parked.status, 'waiting_tool');
    const id = await jobId(kernel, handle.operationId);
    assert.match(id, /^call_[0-9a-f]{32}$/);
    assert.deepEqual(parked.state.deferredToolCallIds, [id]);
    assert.deepEqual(started, [{ operationId: handle.operationId, toolCallId: id }]);
    const placeholder = (await kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(placeholder?.content, '');
    assert.equal(placeholder?.toolResult, undefined);
  });

  it('publishes the result once, the model sees it, and the run completes', async () => {
    const { kernel } = await start();
    kernel.agents.define(agent());
    const handle = await kernel.execAgent({ agentId: 'waiter', prompt: 'go' });
    await handle.settled();
    assert.deepEqual(await kernel.completeToolCall(handle.operationId, await jobId(kernel, handle.operationId), 'job done: 42'), { published: true });
    const final = await handle.completed();
    assert.equal(final.reason, 'done');
    assert.equal(final.state.lastText, 'got it');
    const tool = (await kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.content, 'job done: 42');
    assert.equal(tool?.toolResult?.success, true);
  });

  it('a duplicate callback changes nothing: the first final result stays', async () => {
    const { kernel } = await start();
    kernel.agents.define(agent());
    const handle = await kernel.execAgent({ agentId: 'waiter', prompt: 'go' });
    await handle.settled();
    await kernel.completeToolCall(handle.operationId, await jobId(kernel, handle.operationId), 'first');
    assert.deepEqual(await kernel.completeToolCall(handle.operationId, await jobId(kernel, handle.operationId), 'second'), { published: false });
    await handle.completed();
    assert.deepEqual(await kernel.completeToolCall(handle.operationId, await jobId(kernel, handle.operationId), 'after the end'), { published: false });
    const tools = (await kernel.listMessages(handle.operationId)).filter((m) => m.role === 'tool');
    assert.equal(tools.length, 1);
    assert.equal(tools[0]!.content, 'first');
  });

  it('concurrent callbacks: exactly one publishes', async () => {
    const { kernel } = await start();
    kernel.agents.define(agent());
    const handle = await kernel.execAgent({ agentId: 'waiter', prompt: 'go' });
    await handle.settled();
    const id = await jobId(kernel, handle.operationId);
    const outcomes = await Promise.all(['a', 'b', 'c'].map((r) => kernel.completeToolCall(handle.operationId, id, r)));
    assert.equal(outcomes.filter((o) => o.published).length, 1);
    await handle.completed();
    const tool = (await kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.content, ['a', 'b', 'c'][outcomes.findIndex((o) => o.published)]);
  });

  it('an unknown tool call id publishes nothing', async () => {
    const { kernel } = await start();
    kernel.agents.define(agent());
    const handle = await kernel.execAgent({ agentId: 'waiter', prompt: 'go' });
    await handle.settled();
    assert.deepEqual(await kernel.completeToolCall(handle.operationId, 'no-such-call', 'x'), { published: false });
    // The model's own id is not the call's identity: naming it publishes nothing either.
    assert.deepEqual(await kernel.completeToolCall(handle.operationId, 'job-1', 'x'), { published: false });
    assert.equal((await kernel.getOperation(handle.operationId))?.status, 'waiting_tool');
  });

  it('goes through the same result control: a deny replaces the result, and the denial stays on a later duplicate', async () => {
    const receiver = await RecordingReceiver.start();
    try {
      receiver.route('/after', deny('job output withheld'));
      const { kernel } = await start();
      kernel.agents.define(agent());
      const handle = await kernel.execAgent({
        agentId: 'waiter',
        prompt: 'go',
        hooks: [{ id: 'after-gate', type: 'afterToolCall', webhook: { url: receiver.url('/after'), responseHandling: 'toolCall' } }],
      });
      await handle.settled();
      assert.deepEqual(await kernel.completeToolCall(handle.operationId, await jobId(kernel, handle.operationId), 'secret job output'), { published: true });
      assert.equal(receiver.to('/after')[0]!.body.result.content, 'secret job output');
      await handle.completed();
      assert.deepEqual(await kernel.completeToolCall(handle.operationId, await jobId(kernel, handle.operationId), 'another try'), { published: false });
      const tool = (await kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
      assert.equal(tool?.content, 'job output withheld');
      assert.equal(tool?.toolResult?.error, 'hook_denied');
      const everything = JSON.stringify(await kernel.listMessages(handle.operationId, { includeCompacted: true }));
      assert.ok(!everything.includes('secret job output'));
    } finally {
      await receiver.close();
    }
  });

  it('survives a restart: a new kernel on the same data dir completes the call and the run finishes', async () => {
    const first = await start('sqlite');
    first.kernel.agents.define(agent());
    const handle = await first.kernel.execAgent({ agentId: 'waiter', prompt: 'go' });
    assert.equal((await handle.settled()).status, 'waiting_tool');
    await first.kernel.stop();

    const second = await start('sqlite');
    const published = await second.kernel.completeToolCall(handle.operationId, await jobId(second.kernel, handle.operationId), 'finished while we were down');
    assert.deepEqual(published, { published: true });
    const final = await second.kernel.waitForOperation(handle.operationId, 'terminal');
    assert.equal(final.reason, 'done');
    const tool = (await second.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.content, 'finished while we were down');
  });

  it('a sub-agent parked for approval survives a restart; approving it on a new kernel answers the parent', async () => {
    const first = await start('sqlite');
    const defineAgents = (k: Kernel) => {
      k.agents.define({
        id: 'writer',
        model: { provider: 'scripted', turns: [{ toolCalls: [{ id: 'w1', identifier: 'fs', apiName: 'writeFile', args: { path: 'out.txt', content: 'hi' } }] }, { text: 'written' }] },
        tools: ['fs/*'],
        approval: { tools: ['fs/writeFile'] },
      });
      k.agents.define({
        id: 'boss',
        model: { provider: 'scripted', turns: [{ toolCalls: [{ id: 'd1', identifier: 'agents', apiName: 'writer', args: { instruction: 'write it' } }] }, { text: 'the writer is done' }] },
        subagents: ['writer'],
      });
    };
    defineAgents(first.kernel);
    const handle = await first.kernel.execAgent({ agentId: 'boss', prompt: 'go' });
    assert.equal((await handle.settled()).status, 'waiting_tool');
    let child = (await first.kernel.listOperations({ parentOperationId: handle.operationId }))[0]!;
    child = await first.kernel.waitForOperation(child.id, 'settled');
    assert.equal(child.status, 'waiting_approval');
    await first.kernel.stop();

    const second = await start('sqlite');
    defineAgents(second.kernel);
    await second.kernel.approve(child.id);
    const final = await second.kernel.waitForOperation(handle.operationId, 'terminal');
    assert.equal(final.reason, 'done');
    assert.equal(final.state.lastText, 'the writer is done');
    const tool = (await second.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.content, 'written');
  });
});
