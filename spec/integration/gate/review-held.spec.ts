import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ToolSources } from '../../../kernel/tokens.js';
import type { ToolSource } from '../../../kernel/tools.js';
import { callIdOf } from '../../helpers/runtime-fixtures.js';

/**
 * Review of issue 9: attacks on deferred completions and decisions that the
 * gate already withstands (kept as regression specs).
 */
describe('review: deferred completions and decisions that hold', function () {
  this.timeout(20000);
  let dir: string | undefined;
  let kernel: Kernel | undefined;
  const runs: string[] = [];

  afterEach(async () => {
    await kernel?.stop().catch(() => undefined);
    kernel = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
    runs.length = 0;
  });

  async function boot(): Promise<Kernel> {
    const source: ToolSource = {
      id: 'held-tools',
      list: () => [
        { identifier: 'async', apiName: 'job', description: 'answers later', parameters: { type: 'object' }, toolSource: 'held' },
        { identifier: 'sync', apiName: 'echo', description: 'answers now', parameters: { type: 'object' }, toolSource: 'held' },
      ],
      execute: async (call) => {
        runs.push(`${call.identifier}/${call.apiName}`);
        return call.identifier === 'async' ? { deferred: true } : 'echoed';
      },
    };
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-review-held-')));
    const config = loadConfig({ cwd: dir, env: { HOOKGATE_STORE__DRIVER: 'memory' } });
    kernel = createKernel({ config, plugins: [definePlugin({ id: 'held-tools', provides: [ToolSources], register: (ctx) => ctx.bindValue(ToolSources, source) })], env: {} });
    await kernel.start();
    return kernel;
  }

  it("a completion naming an older call's minted id, or the model's own id, publishes nothing; the deferred call's own id does", async () => {
    const k = await boot();
    k.agents.define({
      id: 'w',
      tools: ['async/*', 'sync/*'],
      model: {
        provider: 'scripted',
        turns: [{ toolCalls: [{ id: 'e1', identifier: 'sync', apiName: 'echo', args: {} }] }, { toolCalls: [{ id: 'job-1', identifier: 'async', apiName: 'job', args: {} }] }, { text: 'done' }],
      },
    });
    const handle = await k.execAgent({ agentId: 'w', prompt: 'go' });
    assert.equal((await handle.settled()).status, 'waiting_tool');
    const messages = await k.listMessages(handle.operationId);
    const older = callIdOf(messages, 'e1');
    assert.deepEqual(await k.completeToolCall(handle.operationId, older, 'forged'), { published: false });
    assert.deepEqual(await k.completeToolCall(handle.operationId, 'job-1', 'forged'), { published: false });
    assert.deepEqual(await k.completeToolCall(handle.operationId, callIdOf(messages, 'job-1'), 'real'), { published: true });
    assert.equal((await handle.completed()).status, 'done');
    const contents = (await k.listMessages(handle.operationId)).filter((m) => m.role === 'tool').map((m) => m.content);
    assert.deepEqual(contents, ['echoed', 'real']);
  });

  it('reject while a deferred call is outstanding ends the run; the late completion publishes nothing and nothing else runs', async () => {
    const k = await boot();
    k.agents.define({
      id: 'w',
      tools: ['async/*', 'sync/*'],
      approval: { tools: ['sync/echo'] },
      model: { provider: 'scripted', turns: [{ toolCalls: [{ id: 'job-1', identifier: 'async', apiName: 'job', args: {} }, { id: 'e1', identifier: 'sync', apiName: 'echo', args: {} }] }, { text: 'done' }] },
    });
    const handle = await k.execAgent({ agentId: 'w', prompt: 'go' });
    assert.equal((await handle.settled()).status, 'waiting_approval');
    await k.reject(handle.operationId, { reason: 'no' });
    assert.equal((await handle.completed()).status, 'interrupted');
    const jobId = callIdOf(await k.listMessages(handle.operationId), 'job-1');
    assert.deepEqual(await k.completeToolCall(handle.operationId, jobId, 'late'), { published: false });
    assert.deepEqual(runs, ['async/job']);
  });
});
