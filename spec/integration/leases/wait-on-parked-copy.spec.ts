import assert from 'node:assert/strict';
import type { Kernel } from '../../../kernel/kernel.js';
import { DeferredTool, hook, scripted, until, useKernelsOnOneFile } from '../../helpers/runtime-fixtures.js';

/**
 * Review of issue 11: kernel A started an operation that parked
 * (`waiting_tool`); A's caller waits for its end. The deferred result comes
 * to kernel B (say, the webhook that completes it lands on another replica),
 * which resumes and finishes the operation. A's wait must see that end: it
 * no longer runs the operation, so it reads the store.
 */
// Once per store both kinds of process sharing run on: one SQLite file, one PostgreSQL schema.
for (const store of ['sqlite', 'postgres'] as const) describe(`integration: waiting in the process that parked an operation another process finishes (${store})`, function () {
  this.timeout(30_000);
  const kernels = useKernelsOnOneFile('wait', store);

  async function start(): Promise<Kernel> {
    const kernel = await kernels.start(new DeferredTool());
    kernel.agents.define({ id: 'later', tools: ['t/*'], model: scripted([{ toolCalls: [{ identifier: 't', apiName: 'later', args: {} }] }, { text: 'got it' }]) });
    return kernel;
  }

  it("A's completed() resolves with the end B committed", async () => {
    const a = await start();
    const handle = await a.execAgent({ agentId: 'later', prompt: 'go' });
    assert.equal((await handle.settled()).status, 'waiting_tool');
    // Parked: A let the lease go.
    await until(async () => (await a.store.getLease(handle.operationId)) === undefined, 10_000);
    let ended: string | undefined;
    void handle.completed().then((record) => (ended = record.status));

    const b = await start();
    const placeholder = (await b.listMessages(handle.operationId)).find((m) => m.role === 'tool' && m.content === '')!;
    assert.deepEqual(await b.completeToolCall(handle.operationId, placeholder.toolCallId!, 'LATE RESULT'), { published: true });
    assert.equal((await b.waitForOperation(handle.operationId, 'terminal')).status, 'done');
    // The end is in the store; A's wait reads it (a watch reads every 100 ms; bounded generously, not a speed check).
    await until(() => ended !== undefined, 10_000).catch(() => assert.fail("A's completed() never resolved although the operation is done"));
    assert.equal(ended, 'done');
  });

  it('a completed() taken while A still ran the operation resolves too', async () => {
    const a = await start();
    const handle = await a.execAgent({ agentId: 'later', prompt: 'go' });
    let ended: string | undefined;
    void handle.completed().then((record) => (ended = record.status));
    assert.equal((await handle.settled()).status, 'waiting_tool');
    await until(async () => (await a.store.getLease(handle.operationId)) === undefined, 10_000);

    const b = await start();
    const placeholder = (await b.listMessages(handle.operationId)).find((m) => m.role === 'tool' && m.content === '')!;
    assert.deepEqual(await b.completeToolCall(handle.operationId, placeholder.toolCallId!, 'LATE RESULT'), { published: true });
    assert.equal((await b.waitForOperation(handle.operationId, 'terminal')).status, 'done');
    await until(() => ended !== undefined, 10_000).catch(() => assert.fail("A's completed() never resolved although the operation is done"));
    assert.equal(ended, 'done');
  });

  it('a wait that reads the store still resolves only after the onComplete of an end this process commits (abort of the parked operation)', async () => {
    const a = await start();
    let announced = false;
    // Slower than a few reads of the store's watch: the terminal state is stored long before it is announced.
    const slowOnComplete = hook('onComplete', async () => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      announced = true;
    });
    const handle = await a.execAgent({ agentId: 'later', prompt: 'go', hooks: [slowOnComplete] });
    assert.equal((await handle.settled()).status, 'waiting_tool');
    const ended = handle.completed().then((record) => ({ status: record.status, announced }));
    await a.abort(handle.operationId);
    assert.deepEqual(await ended, { status: 'interrupted', announced: true });
  });
});
