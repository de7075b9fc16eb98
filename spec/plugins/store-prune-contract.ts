import assert from 'node:assert/strict';
import type { DecisionRecord, NewOperation, OperationState, OperationStatus, Store } from '../../kernel/store.js';
import type { PruneCounts, RetentionPolicy } from '../../kernel/retention.js';

/*
 * The retention part of the Store contract (kernel/retention.ts): what
 * `prune` removes and what it keeps, the same in every store. Called from
 * describeStoreContract with the store of the running test.
 */

function state(stepIndex = 0): OperationState {
  return { stepIndex, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
}

const HOUR = 3_600_000;
/** Everything finished is older than an hour by this clock. */
const LATER = () => Date.now() + 2 * HOUR;
const toolCall = { id: 'call_1', identifier: 'fs', apiName: 'readFile', args: { path: 'a.txt' } };

function decision(id: string, createdAt: string): DecisionRecord {
  return {
    id,
    createdAt,
    event: 'beforeToolCall',
    policies: [{ id: 'p-1', effect: 'allow', mode: 'enforce' }],
    decision: 'allow',
    defaulted: false,
    latencyMicros: 1,
    inputDigest: 'sha256:x',
  };
}

export function describePruneContract(current: () => Store): void {
  describe('prune (retention)', () => {
    let store: Store;
    beforeEach(() => {
      store = current();
    });

    /** An operation with a prompt, a step with an assistant turn and a tool result, a hook, and then `status`. */
    async function operation(id: string, status: OperationStatus, overrides: Partial<NewOperation> = {}): Promise<void> {
      await store.createOperation(
        { id, agentId: 'agent-a', agent: { id: overrides.agentId ?? 'agent-a' }, context: {}, state: state(), ...overrides },
        [{ role: 'user', content: `prompt of ${id}` }],
        [{ id: `hook-${id}`, type: 'onComplete', url: 'https://example.test/h' }],
      );
      const step = { operationId: id, stepIndex: 0, kind: 'call_llm' as const, startedAt: 's', finishedAt: 'f', usage: state().usage, summary: {} };
      await store.commitStep(id, { state: state(1), step, messages: [{ role: 'assistant', content: '', toolCalls: [toolCall] }, { role: 'tool', toolCallId: 'call_1', content: 'text' }] });
      if (status === 'running') return;
      const terminal = status === 'done' || status === 'error' || status === 'interrupted';
      await store.commitStep(id, { state: state(2), status, ...(terminal ? { reason: status === 'error' ? 'error' as const : status === 'done' ? 'done' as const : 'interrupted' as const } : {}) });
    }

    /** The last operation created: the store's newest, which no pass removes. */
    const sentinel = () => operation('op-newest', 'running', { agentId: 'agent-z' });

    async function exists(id: string): Promise<boolean> {
      return (await store.getOperation(id)) !== undefined;
    }

    const zero: PruneCounts = { threads: 0, operations: 0, messages: 0, steps: 0, hooks: 0, decisions: 0, reclaimedBytes: 0 };
    /** Counts without reclaimedBytes, which depends on the store's pages. */
    const kinds = (c: PruneCounts) => ({ ...c, reclaimedBytes: 0 });

    it('removes finished threads older than maxAge with their operations, messages, steps and hooks', async () => {
      await operation('op-done', 'done');
      await operation('op-error', 'error');
      await operation('op-interrupted', 'interrupted');
      await sentinel();
      const policy: RetentionPolicy = { maxAgeMs: HOUR };
      assert.deepEqual(kinds(await store.prune(policy, { now: Date.now() })), zero, 'nothing is an hour old yet');
      const counts = await store.prune(policy, { now: LATER() });
      assert.deepEqual(kinds(counts), { ...zero, threads: 3, operations: 3, messages: 9, steps: 3, hooks: 3 });
      for (const id of ['op-done', 'op-error', 'op-interrupted']) {
        assert.equal(await exists(id), false, id);
        assert.equal(await store.getThread(`thread_${id}`), undefined);
        assert.deepEqual(await store.listMessages(id, { includeCompacted: true }), []);
        assert.deepEqual(await store.listThreadMessages(`thread_${id}`), []);
        assert.deepEqual(await store.listSteps(id), []);
        assert.deepEqual(await store.loadHooks(id), []);
      }
      assert.equal(await exists('op-newest'), true);
      assert.equal((await store.listMessages('op-newest')).length, 3);
      assert.deepEqual((await store.listOperations()).map((o) => o.id), ['op-newest']);
    });

    it('never removes what a running or parked operation needs', async () => {
      await operation('op-parked', 'waiting_approval');
      await operation('op-waiting-tool', 'waiting_tool');
      // A parent parked for its sub-agent: the finished child's result is what it waits for.
      await operation('op-parent', 'waiting_tool');
      await operation('op-child-done', 'done', { parentOperationId: 'op-parent' });
      // A finished parent whose sub-agent still runs: the child publishes into it.
      await operation('op-parent-done', 'done');
      await operation('op-child-running', 'running', { parentOperationId: 'op-parent-done' });
      // A thread whose first operation finished and whose continuation runs: its history is the continuation's prompt.
      await operation('op-first', 'done', { thread: { id: 't-busy', agentId: 'agent-a' } });
      await operation('op-continued', 'running', { threadId: 't-busy' });
      await operation('op-free', 'done');
      await sentinel();
      const counts = await store.prune({ maxAgeMs: 1_000, maxOperations: 1 }, { now: LATER() });
      assert.deepEqual(kinds(counts), { ...zero, threads: 1, operations: 1, messages: 3, steps: 1, hooks: 1 });
      assert.equal(await exists('op-free'), false);
      for (const id of ['op-parked', 'op-waiting-tool', 'op-parent', 'op-child-done', 'op-parent-done', 'op-child-running', 'op-first', 'op-continued', 'op-newest']) {
        assert.equal(await exists(id), true, `${id} is kept`);
      }
      assert.deepEqual((await store.listThreadMessages('t-busy')).map((m) => [m.operationId, m.position]), [
        ['op-first', 1], ['op-first', 2], ['op-first', 3], ['op-continued', 4], ['op-continued', 5], ['op-continued', 6],
      ]);
      assert.equal((await store.listSteps('op-child-done')).length, 1);
      assert.equal((await store.loadHooks('op-parent')).length, 1);
    });

    it('keeps the newest maxOperations of each agent; an agent entry replaces the defaults', async () => {
      for (let i = 1; i <= 5; i++) await operation(`op-a${i}`, 'done');
      for (let i = 1; i <= 3; i++) await operation(`op-b${i}`, 'done', { agentId: 'agent-b' });
      for (let i = 1; i <= 3; i++) await operation(`op-c${i}`, 'done', { agentId: 'agent-c' });
      await sentinel();
      const policy: RetentionPolicy = { maxOperations: 2, agents: { 'agent-b': {}, 'agent-c': { maxOperations: 1 } } };
      const counts = await store.prune(policy, { now: Date.now() });
      assert.equal(counts.operations, 5);
      assert.deepEqual((await store.listOperations()).map((o) => o.id).reverse(), ['op-a4', 'op-a5', 'op-b1', 'op-b2', 'op-b3', 'op-c3', 'op-newest']);
      assert.deepEqual(kinds(await store.prune(policy, { now: Date.now() })), zero, 'a second pass finds nothing more');
    });

    it('removes a thread only as a whole: a continued thread keeps its whole history until all its operations are beyond the limits', async () => {
      await operation('op-1', 'done', { thread: { id: 't-1', agentId: 'agent-a' } });
      await operation('op-2', 'done', { threadId: 't-1' });
      await operation('op-3', 'done');
      await sentinel();
      // maxOperations 2 keeps op-3 and op-2; op-1 is beyond it, but its thread continues in op-2.
      assert.deepEqual(kinds(await store.prune({ maxOperations: 2 })), zero);
      assert.equal((await store.listThreadMessages('t-1')).length, 6);
      assert.deepEqual((await store.listThreadOperations('t-1')).map((o) => o.id), ['op-1', 'op-2']);
      // maxOperations 1 keeps only op-3: the whole thread goes, both operations with it.
      assert.deepEqual(kinds(await store.prune({ maxOperations: 1 })), { ...zero, threads: 1, operations: 2, messages: 6, steps: 2, hooks: 2 });
      assert.equal(await store.getThread('t-1'), undefined);
      assert.deepEqual(await store.listThreadOperations('t-1'), []);
      assert.equal(await exists('op-3'), true);
    });

    it('never removes the newest operation, even when it is finished and expired', async () => {
      await operation('op-only', 'done');
      assert.deepEqual(kinds(await store.prune({ maxAgeMs: 1_000, maxOperations: 1 }, { now: LATER() })), zero);
      assert.equal(await exists('op-only'), true);
    });

    it('removes a thread that never had an operation once it is older than its agent\'s maxAge', async () => {
      await store.createThread({ id: 't-empty', agentId: 'agent-a' });
      await store.createThread({ id: 't-kept', agentId: 'agent-k' });
      const policy: RetentionPolicy = { maxAgeMs: HOUR, agents: { 'agent-k': {} } };
      assert.deepEqual(kinds(await store.prune(policy, { now: Date.now() })), zero);
      assert.deepEqual(kinds(await store.prune(policy, { now: LATER() })), { ...zero, threads: 1 });
      assert.equal(await store.getThread('t-empty'), undefined);
      assert.ok(await store.getThread('t-kept'));
    });

    it('a dry run counts exactly what the pass then removes, and removes nothing', async () => {
      for (let i = 1; i <= 4; i++) await operation(`op-${i}`, 'done');
      await operation('op-parked', 'waiting_approval');
      for (let i = 1; i <= 4; i++) await store.recordDecision(decision(`d-${i}`, `2025-01-0${i}T00:00:00.000Z`));
      await sentinel();
      const policy: RetentionPolicy = { maxOperations: 2, decisionLog: { maxEntries: 3 } };
      const dry = await store.prune(policy, { dryRun: true });
      // agent-a's newest two are op-parked and op-4: op-1 to op-3 go.
      assert.deepEqual(kinds(dry), { ...zero, threads: 3, operations: 3, messages: 9, steps: 3, hooks: 3, decisions: 1 });
      assert.equal(dry.reclaimedBytes, 0);
      assert.equal((await store.listOperations()).length, 6);
      assert.equal((await store.listDecisions()).length, 4);
      assert.deepEqual(kinds(await store.prune(policy)), kinds(dry));
      assert.deepEqual((await store.listOperations()).map((o) => o.id), ['op-newest', 'op-parked', 'op-4']);
    });

    it('keeps the decision log by its own limits: maxEntries newest (listDecisions order), nothing older than maxAge', async () => {
      // Recorded out of time order on purpose: the newest by createdAt stay.
      for (const [id, day] of [['d-3', 3], ['d-1', 1], ['d-5', 5], ['d-2', 2], ['d-4', 4], ['d-6', 6]] as const) {
        await store.recordDecision(decision(id, `2025-01-0${day}T00:00:00.000Z`));
      }
      await operation('op-1', 'done');
      const policy: RetentionPolicy = { decisionLog: { maxEntries: 4 } };
      assert.deepEqual(kinds(await store.prune(policy)), { ...zero, decisions: 2 });
      assert.deepEqual((await store.listDecisions()).map((d) => d.id), ['d-6', 'd-5', 'd-4', 'd-3']);
      assert.deepEqual((await store.listDecisions({ policyId: 'p-1' })).map((d) => d.id), ['d-6', 'd-5', 'd-4', 'd-3']);
      // An age limit: older than two days before Jan 6, noon.
      const now = Date.parse('2025-01-06T12:00:00.000Z');
      assert.deepEqual(kinds(await store.prune({ decisionLog: { maxAgeMs: 2 * 24 * HOUR } }, { now })), { ...zero, decisions: 2 });
      assert.deepEqual((await store.listDecisions()).map((d) => d.id), ['d-6', 'd-5']);
      assert.equal(await exists('op-1'), true, 'the decision log limits leave operations alone');
      // A removed decision's id may be recorded again.
      await store.recordDecision(decision('d-1', '2025-01-07T00:00:00.000Z'));
      assert.equal((await store.listDecisions())[0]!.id, 'd-1');
    });

    it('goes batch by batch: other calls are served between two batches, and each batch judges what is stored then', async () => {
      for (let i = 1; i <= 30; i++) await operation(`op-${String(i).padStart(2, '0')}`, 'done');
      await sentinel();
      const pass = store.prune({ maxOperations: 1 }, { batchSize: 5 });
      // Runs between the pass's first and later batches.
      await new Promise((resolve) => setImmediate(resolve));
      const midway = (await store.listOperations()).length;
      assert.ok(midway > 1 && midway < 31, `some but not all removed between batches (${midway} left)`);
      await operation('op-late', 'running', { thread: { id: 't-late', agentId: 'agent-a' } });
      const counts = await pass;
      // op-30 is agent-a's newest when the pass starts: it stays.
      assert.equal(counts.operations, 29);
      assert.deepEqual((await store.listOperations()).map((o) => o.id), ['op-late', 'op-newest', 'op-30']);
    });

    it('ends on a busy store: operations started during the pass are not chased', async () => {
      for (let i = 1; i <= 5; i++) await operation(`op-${i}`, 'done');
      await sentinel();
      let finished = false;
      const pass = store.prune({ maxOperations: 1 }, { batchSize: 1 }).then((counts) => {
        finished = true;
        return counts;
      });
      // A new operation between every two batches, as a server that keeps starting conversations; bounded here.
      let started = 0;
      while (!finished && started < 100) {
        await store.createOperation({ id: `op-busy-${++started}`, agentId: 'agent-a', agent: {}, context: {}, state: state() }, [], []);
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.ok(finished, `the pass ended (${started} operations started meanwhile)`);
      assert.equal((await pass).operations, 4, 'op-1 to op-4: op-5 is agent-a\'s newest when the pass starts');
    });

    it('stops between batches when its signal is aborted; what went stays gone', async () => {
      for (let i = 1; i <= 12; i++) await operation(`op-${String(i).padStart(2, '0')}`, 'done');
      await sentinel();
      const abort = new AbortController();
      const pass = store.prune({ maxOperations: 1 }, { batchSize: 4, signal: abort.signal });
      abort.abort();
      const counts = await pass;
      assert.ok(counts.operations < 12, `stopped early (${counts.operations} removed)`);
      assert.equal((await store.listOperations()).length, 13 - counts.operations);
    });

    it('an empty policy removes nothing', async () => {
      await operation('op-1', 'done');
      await operation('op-2', 'done');
      await store.recordDecision(decision('d-1', '2020-01-01T00:00:00.000Z'));
      assert.deepEqual(kinds(await store.prune({}, { now: LATER() })), zero);
      assert.equal((await store.listOperations()).length, 2);
    });
  });
}
