import assert from 'node:assert/strict';
import type { HookType } from '../../../kernel/hooks/hook-types.js';
import { recordHooks, scripted, toolTurn, until, useSqliteRestart } from '../../helpers/runtime-fixtures.js';

/** Ten minutes: a kernel that waited for such a turn would hit mocha's timeout. */
const NEVER_MS = 600_000;

/** An agent whose first model turn answers (a tool call) after `delayMs`, then finishes. */
function slowWorker(delayMs: number) {
  return {
    id: 'slow-worker',
    tools: ['test/*'],
    model: scripted([{ ...toolTurn('test', 'echo', { n: 1 }, 'c1'), delayMs }, { text: 'finished' }]),
  };
}

/** Stopping a kernel leaves operations as they are; another kernel on the same store continues them. */
describe('runtime: kernel stop and resume (SQLite)', () => {
  const restart = useSqliteRestart();

  /** Kernel A runs the slow worker until its first model turn has begun. */
  async function startFirstTurn(delayMs: number, types: HookType[] = ['beforeStep']) {
    const a = await restart.first();
    a.kernel.agents.define(slowWorker(delayMs));
    const rec = recordHooks(types);
    const handle = await a.kernel.execAgent({ agentId: 'slow-worker', prompt: 'go', hooks: rec.hooks });
    await until(() => rec.of('beforeStep').length === 1);
    return { a, rec, handle };
  }

  it('kernel.stop during a model turn leaves the operation running (not interrupted) and fires no onComplete', async () => {
    const { a, rec, handle } = await startFirstTurn(NEVER_MS, ['beforeStep', 'onComplete', 'onError']);
    // Returns only because stop does not wait for the slow turn.
    await a.kernel.stop();
    assert.equal(a.tools.calls.length, 0, 'the slow turn never produced its tool call');
    assert.deepEqual(rec.sequence(), ['beforeStep']);
    const b = await restart.next();
    const stored = await b.kernel.getOperation(handle.operationId);
    assert.equal(stored?.status, 'running');
    assert.equal(stored?.reason, undefined);
  });

  it('a new kernel resumes an operation a stopped kernel left running, from its persisted state', async () => {
    const { a, handle } = await startFirstTurn(1500);
    await a.kernel.stop();

    const b = await restart.next();
    // The stored agent definition replays the same script from the persisted turn index.
    const final = await (await b.kernel.resume(handle.operationId)).completed();
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'finished');
    assert.equal(b.tools.calls.length, 1);
    const messages = await b.kernel.listMessages(handle.operationId);
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
  });

  it('a new kernel can abort an operation a stopped kernel left running', async () => {
    const { a, handle } = await startFirstTurn(NEVER_MS);
    await a.kernel.stop();

    const b = await restart.next();
    await b.kernel.abort(handle.operationId);
    const stored = await b.kernel.getOperation(handle.operationId);
    assert.equal(stored?.status, 'interrupted');
    assert.equal(stored?.reason, 'interrupted');
    assert.equal(b.tools.calls.length, 0);
  });

  it('waiters of a stopped kernel are released with KERNEL_STOPPED instead of hanging', async () => {
    const { a, handle } = await startFirstTurn(NEVER_MS);
    // Handled before stop, which is when it rejects (a handler attached later draws a PromiseRejectionHandledWarning).
    const released = assert.rejects(handle.completed(), { code: 'KERNEL_STOPPED' });
    await a.kernel.stop();
    await released;
  });

  it('a run long enough for background checkpoints is stored whole: every step and message reads back in a new kernel', async () => {
    // 160 tool calls = 321 step commits, past COMMITS_BEFORE_START, so the checkpoint thread runs during the operation.
    const calls = 160;
    const a = await restart.first();
    a.kernel.agents.define({
      id: 'busy',
      tools: ['test/*'],
      limits: { maxSteps: 1000 },
      model: scripted([...Array.from({ length: calls }, (_, i) => toolTurn('test', 'echo', { i }, `c${i}`)), { text: 'finished' }]),
    });
    const first = await (await a.kernel.execAgent({ agentId: 'busy', prompt: 'go' })).completed();
    assert.equal(first.status, 'done');
    await a.kernel.stop();

    const b = await restart.next();
    const stored = (await b.kernel.getOperation(first.id))!;
    assert.deepEqual([stored.status, stored.state.stepIndex, stored.state.lastText], ['done', 2 * calls + 1, 'finished']);
    const steps = await b.kernel.listSteps(first.id);
    assert.deepEqual(steps.map((s) => s.stepIndex), Array.from({ length: 2 * calls + 1 }, (_, i) => i));
    const messages = await b.kernel.listMessages(first.id);
    assert.equal(messages.length, 2 * calls + 2);
    assert.deepEqual(messages.map((m) => m.seq), Array.from({ length: 2 * calls + 2 }, (_, i) => i + 1));
    assert.equal(new Set(messages.map((m) => m.id)).size, messages.length);
    assert.equal(messages[2 * calls]!.content, `echo: {"i":${calls - 1}}`);
  });
});
