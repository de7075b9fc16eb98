import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { recordHooks, scripted, startKernel, toolTurn, until, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** Stopping a kernel leaves operations as they are; another kernel on the same store continues them. */
describe('runtime: kernel stop and resume (SQLite)', () => {
  let a: RuntimeFixture | undefined;
  let b: RuntimeFixture | undefined;

  afterEach(async () => {
    await a?.cleanup();
    await b?.cleanup();
    if (a) await rm(a.dir, { recursive: true, force: true });
    a = b = undefined;
  });

  const agent = {
    id: 'slow-worker',
    tools: ['test/*'],
    model: scripted([{ ...toolTurn('test', 'echo', { n: 1 }, 'c1'), delayMs: 1500 }, { text: 'finished' }]),
  };

  it('kernel.stop during a model turn leaves the operation running (not interrupted) and fires no onComplete', async () => {
    a = await startKernel({ store: 'sqlite', keepDir: true });
    a.kernel.agents.define(agent);
    const rec = recordHooks(['beforeStep', 'onComplete', 'onError']);
    const handle = await a.kernel.execAgent({ agentId: 'slow-worker', prompt: 'go', hooks: rec.hooks });
    await until(() => rec.of('beforeStep').length === 1);
    const started = Date.now();
    await a.kernel.stop();
    assert.ok(Date.now() - started < 1000, 'stop does not wait for the slow turn');
    assert.deepEqual(rec.sequence(), ['beforeStep']);
    b = await startKernel({ store: 'sqlite', dir: a.dir });
    const stored = await b.kernel.getOperation(handle.operationId);
    assert.equal(stored?.status, 'running');
    assert.equal(stored?.reason, undefined);
  });

  it('a new kernel resumes an operation a stopped kernel left running, from its persisted state', async () => {
    a = await startKernel({ store: 'sqlite', keepDir: true });
    a.kernel.agents.define(agent);
    const rec = recordHooks(['beforeStep']);
    const handle = await a.kernel.execAgent({ agentId: 'slow-worker', prompt: 'go', hooks: rec.hooks });
    await until(() => rec.of('beforeStep').length === 1);
    await a.kernel.stop();

    b = await startKernel({ store: 'sqlite', dir: a.dir });
    // The stored agent definition replays the same script from the persisted turn index.
    const final = await (await b.kernel.resume(handle.operationId)).completed();
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'finished');
    assert.equal(b.tools.calls.length, 1);
    const messages = await b.kernel.listMessages(handle.operationId);
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
  });

  it('a new kernel can abort an operation a stopped kernel left running', async () => {
    a = await startKernel({ store: 'sqlite', keepDir: true });
    a.kernel.agents.define(agent);
    const rec = recordHooks(['beforeStep']);
    const handle = await a.kernel.execAgent({ agentId: 'slow-worker', prompt: 'go', hooks: rec.hooks });
    await until(() => rec.of('beforeStep').length === 1);
    await a.kernel.stop();

    b = await startKernel({ store: 'sqlite', dir: a.dir });
    await b.kernel.abort(handle.operationId);
    const stored = await b.kernel.getOperation(handle.operationId);
    assert.equal(stored?.status, 'interrupted');
    assert.equal(stored?.reason, 'interrupted');
    assert.equal(b.tools.calls.length, 0);
  });

  it('waiters of a stopped kernel are released with KERNEL_STOPPED instead of hanging', async () => {
    a = await startKernel({ store: 'sqlite', keepDir: true });
    a.kernel.agents.define(agent);
    const rec = recordHooks(['beforeStep']);
    const handle = await a.kernel.execAgent({ agentId: 'slow-worker', prompt: 'go', hooks: rec.hooks });
    await until(() => rec.of('beforeStep').length === 1);
    const waiting = handle.completed();
    await a.kernel.stop();
    await assert.rejects(waiting, { code: 'KERNEL_STOPPED' });
  });
});
