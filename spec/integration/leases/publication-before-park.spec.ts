import assert from 'node:assert/strict';
import type { Kernel } from '../../../kernel/kernel.js';
import { DeferredTool, hook, scripted, until, useKernelsOnOneFile } from '../../helpers/runtime-fixtures.js';

/**
 * Review of issue 11: kernel A runs an operation whose only call is
 * deferred. The step that writes its placeholder parks the operation
 * (`waiting_tool`), but A still holds the lease until its loop has decided
 * to park and released it. A result published by kernel B in that window
 * resumes the operation in the store (`running`); B sees A's lease and
 * leaves the run to A. A must not then park on its out-of-date copy and let
 * the lease go, which would leave a `running` operation nobody runs.
 */
// Once per store both kinds of process sharing run on: one SQLite file, one PostgreSQL schema.
for (const store of ['sqlite', 'postgres'] as const) describe(`integration: a deferred result another process publishes before the runner parks (${store})`, function () {
  this.timeout(30_000);
  const kernels = useKernelsOnOneFile('park', store);

  async function start(): Promise<Kernel> {
    const kernel = await kernels.start(new DeferredTool());
    kernel.agents.define({ id: 'later', tools: ['t/*'], model: scripted([{ toolCalls: [{ identifier: 't', apiName: 'later', args: {} }] }, { text: 'got it' }]) });
    return kernel;
  }

  it('the runner goes on with the published result instead of parking and leaving the operation running with nobody on it', async () => {
    const a = await start();
    const b = await start();
    let published: { published: boolean } | undefined;
    // After the placeholder's commit, before A's loop decides what comes next: B publishes.
    const publishFromB = hook('afterStep', async (event) => {
      if (event.stepType !== 'call_tool' || published) return;
      const placeholder = (await b.listMessages(event.operationId)).find((m) => m.role === 'tool' && m.content === '');
      published = await b.completeToolCall(event.operationId, placeholder!.toolCallId!, 'LATE RESULT');
    });
    const handle = await a.execAgent({ agentId: 'later', prompt: 'go', hooks: [publishFromB] });
    await until(() => published !== undefined, 10_000);
    assert.deepEqual(published, { published: true });
    await until(async () => (await a.getOperation(handle.operationId))?.status === 'done', 10_000).catch(async () => {
      const stuck = await a.getOperation(handle.operationId);
      assert.fail(`the operation was left ${stuck?.status} (lease: ${JSON.stringify(await a.store.getLease(handle.operationId))})`);
    });
    const final = (await a.getOperation(handle.operationId))!;
    assert.equal(final.state.lastText, 'got it');
    assert.equal((await a.listMessages(handle.operationId)).find((m) => m.role === 'tool')?.content, 'LATE RESULT');
  });
});
