import assert from 'node:assert/strict';
import { isHookgateError } from '../../kernel/errors.js';
import type { OperationState, Store } from '../../kernel/store.js';

function state(stepIndex = 0): OperationState {
  return { stepIndex, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
}

/** Durable tool steps (kernel/tool-steps.ts), for every store (run by the store contract). */
export function describeToolStepsContract(current: () => Store): void {
  describe('tool steps (durable step.do records)', () => {
    let store: Store;
    beforeEach(async () => {
      store = current();
      await store.createOperation({ id: 'op-t', agentId: 'agent-a', agent: { id: 'agent-a' }, context: {}, state: state() }, [], []);
    });

    it('records a step and lists the steps of one call in record order, values as JSON', async () => {
      const first = await store.recordToolStep({ operationId: 'op-t', toolCallId: 'call-1', name: 'b', value: { n: 1, list: [true, null, 'x'] } });
      assert.equal(first.recorded, true);
      assert.deepEqual([first.step.operationId, first.step.toolCallId, first.step.name, first.step.value], ['op-t', 'call-1', 'b', { n: 1, list: [true, null, 'x'] }]);
      assert.ok(!Number.isNaN(Date.parse(first.step.recordedAt)));
      await store.recordToolStep({ operationId: 'op-t', toolCallId: 'call-1', name: 'a', value: 'second' });
      await store.recordToolStep({ operationId: 'op-t', toolCallId: 'call-2', name: 'a', value: 0 });
      assert.deepEqual((await store.listToolSteps('op-t', 'call-1')).map((s) => [s.name, s.value]), [['b', { n: 1, list: [true, null, 'x'] }], ['a', 'second']]);
      assert.deepEqual((await store.listToolSteps('op-t', 'call-2')).map((s) => [s.name, s.value]), [['a', 0]]);
    });

    it('records a key once: a second record writes nothing and returns the first value', async () => {
      await store.recordToolStep({ operationId: 'op-t', toolCallId: 'call-1', name: 'charge', value: { id: 'ch_1' } });
      const again = await store.recordToolStep({ operationId: 'op-t', toolCallId: 'call-1', name: 'charge', value: { id: 'ch_2' } });
      assert.equal(again.recorded, false);
      assert.deepEqual(again.step.value, { id: 'ch_1' });
      assert.deepEqual((await store.listToolSteps('op-t', 'call-1')).map((s) => s.value), [{ id: 'ch_1' }]);
    });

    it('racing records of one key: exactly one is recorded, both see its value', async () => {
      const results = await Promise.all([1, 2, 3].map((n) => store.recordToolStep({ operationId: 'op-t', toolCallId: 'call-1', name: 'x', value: n })));
      assert.equal(results.filter((r) => r.recorded).length, 1);
      const winner = results.find((r) => r.recorded)!.step.value;
      for (const r of results) assert.equal(r.step.value, winner);
    });

    it('names are compared exactly: case, unicode forms and long names are distinct keys', async () => {
      const names = ['Step', 'step', 'caf\u00e9', 'cafe\u0301', 'x'.repeat(1024), '\u{1F600}'];
      for (const [i, name] of names.entries()) assert.equal((await store.recordToolStep({ operationId: 'op-t', toolCallId: 'c', name, value: i })).recorded, true, name.slice(0, 10));
      assert.deepEqual((await store.listToolSteps('op-t', 'c')).map((s) => [s.name, s.value]), names.map((n, i) => [n, i]));
    });

    it('names holding NUL (the runtime\'s reserved step names) are stored and read back exactly, distinct from look-alikes', async () => {
      const names = ['\u0000hookgate.started', 'hookgate.started', 'a\u0000b', '\u0001hex:00', '\u0001hex:', '\u0000'];
      for (const [i, name] of names.entries()) assert.equal((await store.recordToolStep({ operationId: 'op-t', toolCallId: 'n', name, value: i })).recorded, true, JSON.stringify(name));
      assert.deepEqual((await store.listToolSteps('op-t', 'n')).map((s) => [s.name, s.value]), names.map((n, i) => [n, i]));
      const again = await store.recordToolStep({ operationId: 'op-t', toolCallId: 'n', name: '\u0000hookgate.started', value: 'late' });
      assert.deepEqual([again.recorded, again.step.name, again.step.value], [false, '\u0000hookgate.started', 0]);
    });

    it('returned records are copies: changing one changes nothing stored', async () => {
      const value = { nested: { n: 1 } };
      const { step } = await store.recordToolStep({ operationId: 'op-t', toolCallId: 'c', name: 's', value });
      value.nested.n = 2;
      (step.value as { nested: { n: number } }).nested.n = 3;
      (await store.listToolSteps('op-t', 'c'))[0]!.value = 'changed';
      assert.deepEqual((await store.listToolSteps('op-t', 'c'))[0]!.value, { nested: { n: 1 } });
    });

    it('an unknown operation is STORE_NOT_FOUND on record and has no steps', async () => {
      await assert.rejects(store.recordToolStep({ operationId: 'nope', toolCallId: 'c', name: 's', value: 1 }), (err: unknown) => isHookgateError(err, 'STORE_NOT_FOUND'));
      assert.deepEqual(await store.listToolSteps('nope', 'c'), []);
      assert.deepEqual(await store.listToolSteps('op-t', 'unknown-call'), []);
    });

    it('goes with its operation when the thread is pruned; another operation keeps its steps', async () => {
      await store.recordToolStep({ operationId: 'op-t', toolCallId: 'c', name: 's', value: 1 });
      await store.commitStep('op-t', { state: state(1), status: 'done', reason: 'done' });
      await store.createOperation({ id: 'op-keep', agentId: 'agent-a', agent: { id: 'agent-a' }, context: {}, state: state() }, [], []);
      await store.recordToolStep({ operationId: 'op-keep', toolCallId: 'c', name: 's', value: 2 });
      const counts = await store.prune({ maxAgeMs: 1 }, { now: Date.now() + 60_000 });
      assert.equal(counts.operations, 1);
      assert.equal(await store.getOperation('op-t'), undefined);
      assert.deepEqual(await store.listToolSteps('op-t', 'c'), []);
      assert.deepEqual((await store.listToolSteps('op-keep', 'c')).map((s) => s.value), [2]);
    });
  });
}
