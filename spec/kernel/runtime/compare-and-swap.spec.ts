import assert from 'node:assert/strict';
import { recordHooks, scripted, toolTurn, until, useSqliteRestart } from '../../helpers/runtime-fixtures.js';

/** An agent whose first model turn answers (a tool call) after `delayMs`, then finishes. */
function slowWorker(delayMs: number) {
  return {
    id: 'slow-worker',
    tools: ['test/*'],
    model: scripted([{ ...toolTurn('test', 'echo', { n: 1 }, 'c1'), delayMs }, { text: 'finished' }]),
  };
}

const STALE_LOG = 'operation changed by another writer; this process stops running it';

/**
 * Every commit of the loop is a compare-and-swap on the version the runtime
 * holds: when two kernels on one SQLite file run the same operation, the
 * second writer of a step is refused, stops that operation's loop without a
 * retry or a further effect, and its waiters read the outcome from the store.
 */
describe('runtime: compare-and-swap on every loop commit (two kernels, one SQLite file)', () => {
  const kernels = useSqliteRestart();

  it('the stale writer stops: one commit per step, the tool runs once, its waiter sees the winner finish', async () => {
    const a = await kernels.first();
    a.kernel.agents.define(slowWorker(800));
    const rec = recordHooks(['beforeStep', 'onComplete', 'onError']);
    const handle = await a.kernel.execAgent({ agentId: 'slow-worker', prompt: 'go', hooks: rec.hooks });
    await until(() => rec.of('beforeStep').length === 1);

    // B loads the operation at version 0 and runs its first step too, while A's model turn is still in flight:
    // without force, A's lease refuses it.
    const b = await kernels.next();
    await assert.rejects(b.kernel.resume(handle.operationId), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'OPERATION_LEASED');
      assert.match(err.message, /being run by another process \(.+, lease until .+\)/);
      return true;
    });
    const resumed = await b.kernel.resume(handle.operationId, { force: true });
    const [fromA, fromB] = await Promise.all([handle.completed(), resumed.completed()]);

    for (const final of [fromA, fromB]) {
      assert.equal(final.status, 'done');
      assert.equal(final.state.lastText, 'finished');
    }
    // Exactly one kernel ran the tool and committed each step; the other logged its conflict once and stopped.
    assert.equal(a.tools.calls.length + b.tools.calls.length, 1);
    const messages = await a.kernel.listMessages(handle.operationId);
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
    const steps = await a.kernel.listSteps(handle.operationId);
    assert.deepEqual(steps.map((s) => s.stepIndex), [0, 1, 2]);
    const staleLogs = [...a.logs, ...b.logs].filter((l) => l.msg === STALE_LOG);
    assert.equal(staleLogs.length, 1);
    assert.equal(staleLogs[0]!.operationId, handle.operationId);
    const loser = a.logs.includes(staleLogs[0]!) ? a : b;
    assert.ok(!loser.logs.some((l) => l.level === 'error'), 'the stale writer fails nothing');
    assert.equal(loser.tools.calls.length, 0);
    // The stale writer dispatched no terminal hook: onComplete fired once, from the winner.
    if (loser === a) assert.equal(rec.of('onComplete').length, 0);
    else assert.equal(rec.of('onComplete').length, 1);
  });
});
