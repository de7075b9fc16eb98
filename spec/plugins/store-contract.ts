import assert from 'node:assert/strict';
import { isHookgateError } from '../../kernel/errors.js';
import type { ErrorCode } from '../../kernel/error-catalog.js';
import type { DecisionRecord, NewOperation, OperationState, Store } from '../../kernel/store.js';
import { describePruneContract } from './store-prune-contract.js';
import { describeSubmissionsContract } from './store-submissions-contract.js';
import { describeToolStepsContract } from './store-tool-steps-contract.js';
import { describeUserValuesContract } from './store-user-values-contract.js';
import { describeMessageUpdateContract } from './store-message-update-contract.js';
import { STATE_CASES, SUMMARY_CASES, TOOL_CALLS_CASES, TOOL_RESULT_CASES, USAGE_CASES, type OddCase } from '../kernel/odd-step-records.js';

/** Asserts a promise rejects with a HookgateError of `code`, and returns the error. */
export async function rejectsWithCode(promise: Promise<unknown>, code: ErrorCode): Promise<Error> {
  let caught: unknown;
  await promise.then(
    () => assert.fail(`expected a rejection with ${code}`),
    (err: unknown) => {
      caught = err;
    },
  );
  assert.ok(isHookgateError(caught, code), `expected ${code}, got ${String((caught as Error)?.stack ?? caught)}`);
  return caught as Error;
}

function state(overrides: Partial<OperationState> = {}): OperationState {
  return {
    stepIndex: 0,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 },
    pendingToolCalls: [],
    approvedToolCallIds: [],
    modelTurns: 0,
    compactions: 0,
    ...overrides,
  };
}

function newOperation(id: string, overrides: Partial<NewOperation> = {}): NewOperation {
  return {
    id,
    agentId: 'agent-a',
    agent: { id: 'agent-a', model: 'scripted', tools: ['fs/readFile'] },
    context: { topicId: 't1' },
    state: state(),
    ...overrides,
  };
}

function decision(id: string, overrides: Partial<DecisionRecord> = {}): DecisionRecord {
  return {
    id,
    createdAt: '2025-01-01T00:00:00.000Z',
    event: 'beforeToolCall',
    policies: [{ id: 'p-default', effect: 'allow', mode: 'enforce' }],
    decision: 'allow',
    defaulted: false,
    latencyMicros: 42,
    inputDigest: 'sha256:abc',
    ...overrides,
  };
}

const toolCall = { id: 'call_1', identifier: 'fs', apiName: 'readFile', args: { path: 'a.txt' } };

/**
 * The behaviour every Store must show, run once per implementation.
 * `makeStore` resolves to a migrated, empty store; the suite closes it.
 */
export function describeStoreContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;

    beforeEach(async () => {
      store = await makeStore();
    });

    afterEach(async () => {
      await store.close();
    });

    it('reports a positive integer schema version', () => {
      assert.ok(Number.isInteger(store.schemaVersion) && store.schemaVersion > 0);
    });

    describe('operations', () => {
      it('creates a running operation and reads it back unchanged', async () => {
        const created = await store.createOperation(newOperation('op-1', { userId: 'u-1', parentOperationId: 'op-0' }), [], []);
        assert.equal(created.status, 'running');
        assert.equal(created.createdAt, created.updatedAt);
        assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
        assert.deepEqual(created, {
          id: 'op-1',
          agentId: 'agent-a',
          threadId: 'thread_op-1',
          parentOperationId: 'op-0',
          userId: 'u-1',
          status: 'running',
          agent: { id: 'agent-a', model: 'scripted', tools: ['fs/readFile'] },
          context: { topicId: 't1' },
          state: state(),
          createdAt: created.createdAt,
          updatedAt: created.updatedAt,
          version: 0,
        });
        assert.deepEqual(await store.getOperation('op-1'), created);
      });

      it('leaves optional fields out instead of setting them to undefined', async () => {
        await store.createOperation(newOperation('op-1'), [], []);
        const op = (await store.getOperation('op-1'))!;
        for (const key of ['parentOperationId', 'userId', 'reason', 'error']) assert.equal(key in op, false, key);
      });

      it('returns undefined for an unknown operation', async () => {
        assert.equal(await store.getOperation('nope'), undefined);
      });

      it('refuses a second operation with the same id and keeps the first', async () => {
        const first = await store.createOperation(newOperation('op-1'), [], []);
        await rejectsWithCode(store.createOperation(newOperation('op-1', { agentId: 'other' }), [], []), 'STORE_CONFLICT');
        assert.deepEqual(await store.getOperation('op-1'), first);
      });

      it('stores the first messages and the hooks with the operation', async () => {
        await store.createOperation(
          newOperation('op-1'),
          [{ role: 'system', content: 'be brief' }, { id: 'm-user', role: 'user', content: 'hi' }],
          [{ id: 'hook-1', type: 'beforeToolCall' }],
        );
        const messages = await store.listMessages('op-1');
        assert.deepEqual(messages.map((m) => [m.seq, m.role, m.content]), [[1, 'system', 'be brief'], [2, 'user', 'hi']]);
        assert.equal(messages[1]!.id, 'm-user');
        assert.deepEqual(await store.loadHooks('op-1'), [{ id: 'hook-1', type: 'beforeToolCall' }]);
      });

      it('keeps the images of user messages, at create and in a step commit (the one-row path included), and none elsewhere', async () => {
        const png = { mediaType: 'image/png', data: 'iVBORw0KGgo=' };
        const jpeg = { mediaType: 'image/jpeg', data: '/9j/4AAQ' };
        const created = await store.createOperation(newOperation('op-1'), [{ role: 'user', content: 'look', images: [png, jpeg] }], []);
        const step = { operationId: 'op-1', stepIndex: 0, kind: 'call_llm' as const, startedAt: created.createdAt, finishedAt: created.createdAt, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, summary: {} };
        const written = await store.commitStep('op-1', { state: state({ stepIndex: 1 }), step, messages: [{ role: 'user', content: 'and this', images: [jpeg] }] });
        assert.deepEqual(written.map((m) => m.images), [[jpeg]]);
        await store.commitStep('op-1', { state: state({ stepIndex: 2 }), step: { ...step, stepIndex: 1 }, messages: [{ role: 'assistant', content: 'two images' }] });
        const messages = await store.listMessages('op-1');
        assert.deepEqual(messages.map((m) => [m.content, m.images]), [['look', [png, jpeg]], ['and this', [jpeg]], ['two images', undefined]]);
        assert.equal('images' in messages[2]!, false);
        assert.deepEqual((await store.listThreadMessages(created.threadId)).map((m) => m.images?.length ?? 0), [2, 1, 0]);
      });

      it('creates nothing when one of the first messages has an id already in use', async () => {
        await store.createOperation(newOperation('op-1'), [{ id: 'm-1', role: 'user', content: 'hi' }], []);
        await rejectsWithCode(
          store.createOperation(newOperation('op-2'), [{ role: 'user', content: 'a' }, { id: 'm-1', role: 'user', content: 'b' }], [{ id: 'h' }]),
          'STORE_CONFLICT',
        );
        assert.equal(await store.getOperation('op-2'), undefined);
        assert.deepEqual(await store.listMessages('op-2'), []);
        assert.deepEqual(await store.loadHooks('op-2'), []);
      });

      it('lists operations newest first', async () => {
        for (const id of ['op-1', 'op-2', 'op-3']) await store.createOperation(newOperation(id), [], []);
        assert.deepEqual((await store.listOperations()).map((o) => o.id), ['op-3', 'op-2', 'op-1']);
      });

      it('filters the listing by status', async () => {
        for (const id of ['op-1', 'op-2', 'op-3']) await store.createOperation(newOperation(id), [], []);
        await store.commitStep('op-2', { state: state(), status: 'done', reason: 'done' });
        assert.deepEqual((await store.listOperations({ status: 'done' })).map((o) => o.id), ['op-2']);
        assert.deepEqual((await store.listOperations({ status: 'running' })).map((o) => o.id), ['op-3', 'op-1']);
      });

      it('filters the listing by parent operation', async () => {
        await store.createOperation(newOperation('parent'), [], []);
        await store.createOperation(newOperation('child-1', { parentOperationId: 'parent' }), [], []);
        await store.createOperation(newOperation('other'), [], []);
        await store.createOperation(newOperation('child-2', { parentOperationId: 'parent' }), [], []);
        assert.deepEqual((await store.listOperations({ parentOperationId: 'parent' })).map((o) => o.id), ['child-2', 'child-1']);
      });

      it('limits the listing', async () => {
        for (const id of ['op-1', 'op-2', 'op-3']) await store.createOperation(newOperation(id), [], []);
        assert.deepEqual((await store.listOperations({ limit: 2 })).map((o) => o.id), ['op-3', 'op-2']);
        assert.deepEqual(await store.listOperations({ limit: 0 }), []);
      });
    });

    describe('threads', () => {
      /** op-1 on thread t-1: a user prompt, then an assistant turn and a tool result, then done. */
      async function firstOperation(): Promise<void> {
        await store.createOperation(newOperation('op-1', { thread: { id: 't-1', agentId: 'agent-a' } }), [{ role: 'user', content: 'first prompt' }], []);
        await store.commitStep('op-1', {
          state: state({ stepIndex: 1 }),
          messages: [{ role: 'assistant', content: '', toolCalls: [toolCall] }, { role: 'tool', toolCallId: 'call_1', content: 'file text' }],
        });
        await store.commitStep('op-1', { state: state({ stepIndex: 2 }), messages: [{ role: 'assistant', content: 'first answer' }], status: 'done', reason: 'done' });
      }

      it('gives an operation without a thread one of its own, thread_<operation id>, of its agent', async () => {
        const op = await store.createOperation(newOperation('op-1'), [{ role: 'user', content: 'hi' }], []);
        assert.equal(op.threadId, 'thread_op-1');
        const thread = (await store.getThread('thread_op-1'))!;
        assert.deepEqual(thread, { id: 'thread_op-1', agentId: 'agent-a', values: {}, createdAt: thread.createdAt, updatedAt: thread.updatedAt });
        assert.deepEqual((await store.listThreadMessages('thread_op-1')).map((m) => [m.operationId, m.seq, m.position, m.content]), [['op-1', 1, 1, 'hi']]);
      });

      it('creates the thread an operation names in `thread`, with its instance, uid, initial data and values', async () => {
        const op = await store.createOperation(
          newOperation('op-1', { thread: { id: 't-1', agentId: 'agent-a', instanceId: 'inst-1', uid: 'u-42', initialData: { n: 1 }, values: { k: 'v' } } }),
          [],
          [],
        );
        assert.equal(op.threadId, 't-1');
        assert.deepEqual(await store.getOperation('op-1'), op);
        const thread = (await store.getThread('t-1'))!;
        assert.deepEqual(thread, { id: 't-1', agentId: 'agent-a', instanceId: 'inst-1', uid: 'u-42', initialData: { n: 1 }, values: { k: 'v' }, createdAt: thread.createdAt, updatedAt: thread.updatedAt });
        const bare = await store.createThread({ id: 't-2', agentId: 'a' });
        for (const key of ['instanceId', 'uid', 'initialData']) assert.equal(key in bare, false, key);
      });

      it('continues a thread: messages of every operation in position order, positions continuing, seqs per operation', async () => {
        await firstOperation();
        const second = await store.createOperation(newOperation('op-2', { threadId: 't-1' }), [{ role: 'user', content: 'second prompt' }], []);
        assert.equal(second.threadId, 't-1');
        const [written] = await store.commitStep('op-2', { state: state({ stepIndex: 1 }), messages: [{ role: 'assistant', content: 'second answer' }] });
        assert.deepEqual([written!.seq, written!.position], [2, 6]);
        const thread = await store.listThreadMessages('t-1');
        assert.deepEqual(thread.map((m) => [m.operationId, m.seq, m.position, m.role, m.content]), [
          ['op-1', 1, 1, 'user', 'first prompt'],
          ['op-1', 2, 2, 'assistant', ''],
          ['op-1', 3, 3, 'tool', 'file text'],
          ['op-1', 4, 4, 'assistant', 'first answer'],
          ['op-2', 1, 5, 'user', 'second prompt'],
          ['op-2', 2, 6, 'assistant', 'second answer'],
        ]);
        assert.deepEqual(thread[5], written);
        // An operation's own view is unchanged: its messages only.
        assert.deepEqual((await store.listMessages('op-2')).map((m) => m.content), ['second prompt', 'second answer']);
        assert.deepEqual((await store.listMessages('op-1')).map((m) => m.position), [1, 2, 3, 4]);
        assert.deepEqual((await store.listThreadMessages('t-1', { fromPosition: 4 })).map((m) => m.position), [4, 5, 6]);
        assert.deepEqual((await store.listThreadMessages('t-1', { fromPosition: 7 })), []);
        assert.deepEqual((await store.listThreadOperations('t-1')).map((o) => [o.id, o.status]), [['op-1', 'done'], ['op-2', 'running']]);
        // The newest only, or the newest two oldest first, or more than there are.
        assert.deepEqual((await store.listThreadOperations('t-1', { last: 1 })).map((o) => o.id), ['op-2']);
        assert.deepEqual((await store.listThreadOperations('t-1', { last: 2 })).map((o) => o.id), ['op-1', 'op-2']);
        assert.deepEqual((await store.listThreadOperations('t-1', { last: 5 })).map((o) => o.id), ['op-1', 'op-2']);
        assert.deepEqual(await store.listThreadOperations('t-1', { last: 0 }), []);
      });

      it('refuses a new operation on a thread whose operation is unfinished (THREAD_BUSY) and creates nothing', async () => {
        await store.createOperation(newOperation('op-1', { thread: { id: 't-1', agentId: 'agent-a' } }), [{ role: 'user', content: 'a' }], []);
        for (const status of ['running', 'waiting_approval', 'waiting_tool'] as const) {
          if (status !== 'running') await store.commitStep('op-1', { state: state(), status });
          const err = await rejectsWithCode(store.createOperation(newOperation('op-2', { threadId: 't-1' }), [{ role: 'user', content: 'b' }], []), 'THREAD_BUSY');
          assert.match(err.message, /t-1.*op-1/);
          assert.equal(await store.getOperation('op-2'), undefined);
        }
        assert.deepEqual((await store.listThreadMessages('t-1')).map((m) => m.content), ['a']);
        await store.commitStep('op-1', { state: state(), status: 'interrupted', reason: 'interrupted' });
        await store.createOperation(newOperation('op-2', { threadId: 't-1' }), [{ role: 'user', content: 'b' }], []);
        assert.deepEqual((await store.listThreadMessages('t-1')).map((m) => [m.content, m.position]), [['a', 1], ['b', 2]]);
      });

      it('refuses an unknown thread (STORE_NOT_FOUND) and an existing thread id in `thread` (STORE_CONFLICT), creating nothing', async () => {
        await rejectsWithCode(store.createOperation(newOperation('op-1', { threadId: 'nope' }), [], []), 'STORE_NOT_FOUND');
        assert.equal(await store.getOperation('op-1'), undefined);
        await store.createThread({ id: 't-1', agentId: 'agent-a' });
        await rejectsWithCode(store.createThread({ id: 't-1', agentId: 'agent-b' }), 'STORE_CONFLICT');
        await rejectsWithCode(store.createOperation(newOperation('op-1', { thread: { id: 't-1', agentId: 'agent-a' } }), [], []), 'STORE_CONFLICT');
        assert.equal(await store.getOperation('op-1'), undefined);
        assert.equal((await store.getThread('t-1'))!.agentId, 'agent-a');
        assert.deepEqual(await store.listThreadOperations('t-1'), []);
        assert.deepEqual(await store.listThreadMessages('nope'), []);
        assert.equal(await store.getThread('nope'), undefined);
      });

      it('starts an operation on a thread made with createThread at position 1', async () => {
        await store.createThread({ id: 't-1', agentId: 'agent-a' });
        await store.createOperation(newOperation('op-1', { threadId: 't-1' }), [{ role: 'user', content: 'a' }], []);
        assert.deepEqual((await store.listThreadMessages('t-1')).map((m) => [m.operationId, m.position]), [['op-1', 1]]);
      });

      it('keeps persisted values per thread; STORE_NOT_FOUND for an unknown one', async () => {
        await store.createThread({ id: 't-1', agentId: 'agent-a' });
        await store.saveThreadValues('t-1', { count: 2, nested: { a: [1] } });
        assert.deepEqual((await store.getThread('t-1'))!.values, { count: 2, nested: { a: [1] } });
        await rejectsWithCode(store.saveThreadValues('nope', {}), 'STORE_NOT_FOUND');
      });

      it("writes the thread's values with a step's commit (threadValues), replacing them, and leaves them alone without", async () => {
        await store.createOperation(newOperation('op-1', { thread: { id: 't-1', agentId: 'agent-a', values: { kept: 1 } } }), [{ role: 'user', content: 'a' }], []);
        await store.createOperation(newOperation('op-2', { thread: { id: 't-2', agentId: 'agent-a', values: { other: true } } }), [], []);
        await store.commitStep('op-1', { state: state({ stepIndex: 1 }), messages: [{ role: 'assistant', content: 'x' }], threadValues: { count: 1, nested: { list: [1, 'two', null] } } });
        assert.deepEqual((await store.getThread('t-1'))!.values, { count: 1, nested: { list: [1, 'two', null] } });
        await store.commitStep('op-1', { state: state({ stepIndex: 2 }) });
        assert.deepEqual((await store.getThread('t-1'))!.values, { count: 1, nested: { list: [1, 'two', null] } }, 'a commit without threadValues keeps them');
        assert.deepEqual((await store.getThread('t-2'))!.values, { other: true }, "another thread's values are untouched");
      });

      it('a commit refused by compare-and-swap writes no thread values either', async () => {
        await store.createOperation(newOperation('op-1', { thread: { id: 't-1', agentId: 'agent-a', values: { count: 0 } } }), [{ id: 'm-1', role: 'user', content: 'a' }], []);
        await store.commitStep('op-1', { state: state({ stepIndex: 1 }) });
        await rejectsWithCode(store.commitStep('op-1', { state: state({ stepIndex: 2 }), threadValues: { count: 5 }, expectedVersion: 0 }), 'STORE_VERSION_CONFLICT');
        assert.deepEqual((await store.getThread('t-1'))!.values, { count: 0 });
        await rejectsWithCode(
          store.commitStep('op-1', { state: state({ stepIndex: 2 }), messages: [{ id: 'm-1', role: 'user', content: 'again' }], threadValues: { count: 6 } }),
          'STORE_CONFLICT',
        );
        assert.deepEqual((await store.getThread('t-1'))!.values, { count: 0 }, 'a failed commit leaves the values as they were');
      });

      it("compacts earlier operations' messages from a later operation of the thread, and no other thread's", async () => {
        await firstOperation();
        await store.createOperation(newOperation('op-other'), [{ id: 'm-other', role: 'user', content: 'elsewhere' }], []);
        await store.createOperation(newOperation('op-2', { threadId: 't-1' }), [{ role: 'user', content: 'second prompt' }], []);
        const older = (await store.listThreadMessages('t-1')).slice(0, 3);
        await rejectsWithCode(
          store.commitStep('op-2', { state: state(), messages: [{ id: 's-bad', role: 'summary', content: 'x' }], compact: { messageIds: ['m-other'], summaryId: 's-bad' } }),
          'STORE_NOT_FOUND',
        );
        await store.commitStep('op-2', {
          state: state({ stepIndex: 1, compactions: 1 }),
          messages: [{ id: 's-1', role: 'summary', content: 'summary of the first operation' }],
          compact: { messageIds: older.map((m) => m.id), summaryId: 's-1' },
        });
        assert.deepEqual((await store.listThreadMessages('t-1')).map((m) => [m.operationId, m.role, m.content]), [
          ['op-1', 'assistant', 'first answer'],
          ['op-2', 'user', 'second prompt'],
          ['op-2', 'summary', 'summary of the first operation'],
        ]);
        const all = await store.listThreadMessages('t-1', { includeCompacted: true });
        assert.deepEqual(all.map((m) => m.compactedInto), ['s-1', 's-1', 's-1', undefined, undefined, undefined]);
        assert.deepEqual((await store.listMessages('op-1')).map((m) => m.content), ['first answer']);
        assert.deepEqual((await store.listMessages('op-other')).map((m) => m.compactedInto), [undefined]);
      });
    });

    describe('findOperationIds (id prefixes)', () => {
      beforeEach(async () => {
        for (const id of ['op_b2', 'op_a1x', 'op_a1y', 'op_a2', 'op%_1', 'Op_a1z']) await store.createOperation(newOperation(id), [], []);
      });

      it('finds the one operation a unique prefix names', async () => {
        assert.deepEqual(await store.findOperationIds('op_a2', 10), ['op_a2']);
        assert.deepEqual(await store.findOperationIds('op_b', 10), ['op_b2']);
      });

      it('finds every operation an ambiguous prefix names, in ascending id order', async () => {
        assert.deepEqual(await store.findOperationIds('op_a1', 10), ['op_a1x', 'op_a1y']);
        assert.deepEqual(await store.findOperationIds('op_a', 10), ['op_a1x', 'op_a1y', 'op_a2']);
      });

      it('finds nothing for a prefix no id starts with', async () => {
        assert.deepEqual(await store.findOperationIds('op_c', 10), []);
        assert.deepEqual(await store.findOperationIds('op_a1xx', 10), []);
      });

      it('matches a whole id as its own prefix', async () => {
        assert.deepEqual(await store.findOperationIds('op_a1x', 10), ['op_a1x']);
      });

      it('compares exactly: case matters, and % and _ are ordinary characters', async () => {
        assert.deepEqual(await store.findOperationIds('Op_', 10), ['Op_a1z']);
        assert.deepEqual(await store.findOperationIds('op%', 10), ['op%_1']);
        assert.deepEqual(await store.findOperationIds('op_', 10), ['op_a1x', 'op_a1y', 'op_a2', 'op_b2']);
      });

      it('returns at most `limit` ids, the lowest first', async () => {
        assert.deepEqual(await store.findOperationIds('op_', 2), ['op_a1x', 'op_a1y']);
        assert.deepEqual(await store.findOperationIds('op_', 0), []);
      });

      it('matches every id for an empty prefix', async () => {
        assert.deepEqual(await store.findOperationIds('', 10), ['Op_a1z', 'op%_1', 'op_a1x', 'op_a1y', 'op_a2', 'op_b2']);
      });

      it('finds ids past the end of the code points a prefix can grow by (non-ASCII and U+10FFFF)', async () => {
        await store.createOperation(newOperation('op_\u{10FFFF}\u{10FFFF}'), [], []);
        await store.createOperation(newOperation('op_\u{10FFFF}é'), [], []);
        await store.createOperation(newOperation('op_\uD7FF1'), [], []);
        assert.deepEqual(await store.findOperationIds('op_\u{10FFFF}', 10), ['op_\u{10FFFF}é', 'op_\u{10FFFF}\u{10FFFF}']);
        assert.deepEqual(await store.findOperationIds('op_\u{10FFFF}\u{10FFFF}', 10), ['op_\u{10FFFF}\u{10FFFF}']);
        assert.deepEqual(await store.findOperationIds('op_\uD7FF', 10), ['op_\uD7FF1']);
      });
    });

    describe('commitStep', () => {
      beforeEach(async () => {
        await store.createOperation(newOperation('op-1'), [{ id: 'm-1', role: 'user', content: 'read a.txt' }], []);
      });

      it('writes state, status, reason and error and moves updatedAt', async () => {
        const before = (await store.getOperation('op-1'))!;
        const next = state({ stepIndex: 3, lastText: 'done', usage: { promptTokens: 5, completionTokens: 7, totalTokens: 12, cost: 0.5 } });
        await store.commitStep('op-1', { state: next, status: 'error', reason: 'error', error: { message: 'model failed', code: 'MODEL_FAILED' } });
        const after = (await store.getOperation('op-1'))!;
        assert.deepEqual(after.state, next);
        assert.equal(after.status, 'error');
        assert.equal(after.reason, 'error');
        assert.deepEqual(after.error, { message: 'model failed', code: 'MODEL_FAILED' });
        assert.equal(after.createdAt, before.createdAt);
        assert.ok(after.updatedAt >= before.updatedAt);
      });

      it('keeps the stored status and reason when a commit leaves them out', async () => {
        await store.commitStep('op-1', { state: state(), status: 'waiting_approval', reason: 'interrupted' });
        await store.commitStep('op-1', { state: state({ stepIndex: 1 }) });
        const op = (await store.getOperation('op-1'))!;
        assert.equal(op.status, 'waiting_approval');
        assert.equal(op.reason, 'interrupted');
        assert.equal(op.state.stepIndex, 1);
      });

      it('reads back the newest state across step-only and status commits', async () => {
        const step = (stepIndex: number) => ({ operationId: 'op-1', stepIndex, kind: 'call_llm' as const, startedAt: 'a', finishedAt: 'b', usage: state().usage, summary: {} });
        await store.commitStep('op-1', { state: state({ stepIndex: 1 }), step: step(0) });
        assert.equal((await store.getOperation('op-1'))!.state.stepIndex, 1);
        await store.commitStep('op-1', { state: state({ stepIndex: 2 }), status: 'waiting_approval' });
        let op = (await store.getOperation('op-1'))!;
        assert.deepEqual([op.state.stepIndex, op.status], [2, 'waiting_approval']);
        await store.commitStep('op-1', { state: state({ stepIndex: 3 }), step: step(1) });
        op = (await store.getOperation('op-1'))!;
        assert.deepEqual([op.state.stepIndex, op.status], [3, 'waiting_approval']);
        // A step of a lower index still carries the newest state.
        await store.commitStep('op-1', { state: state({ stepIndex: 4 }), step: step(0) });
        assert.equal((await store.getOperation('op-1'))!.state.stepIndex, 4);
        await store.commitStep('op-1', { state: state({ stepIndex: 5 }) });
        assert.equal((await store.getOperation('op-1'))!.state.stepIndex, 5);
      });

      it('lists operations with their newest state', async () => {
        await store.createOperation(newOperation('op-2'), [], []);
        const step = { operationId: 'op-1', stepIndex: 0, kind: 'call_llm' as const, startedAt: 'a', finishedAt: 'b', usage: state().usage, summary: {} };
        await store.commitStep('op-1', { state: state({ stepIndex: 7 }), step });
        await store.commitStep('op-2', { state: state({ stepIndex: 1 }), status: 'done', reason: 'done' });
        const listed = await store.listOperations();
        assert.deepEqual(listed.map((o) => [o.id, o.state.stepIndex]), [['op-2', 1], ['op-1', 7]]);
        assert.deepEqual((await store.listOperations({ status: 'running' })).map((o) => [o.id, o.state.stepIndex]), [['op-1', 7]]);
        assert.deepEqual(listed[1], await store.getOperation('op-1'));
      });

      it('appends messages with generated ids and increasing seq, and returns them as stored', async () => {
        const inserted = await store.commitStep('op-1', {
          state: state(),
          messages: [{ role: 'assistant', content: '', toolCalls: [toolCall] }, { role: 'tool', content: 'A', toolCallId: 'call_1' }],
        });
        assert.deepEqual(inserted.map((m) => m.seq), [2, 3]);
        for (const m of inserted) assert.match(m.id, /^[0-9a-f-]{36}$/);
        assert.notEqual(inserted[0]!.id, inserted[1]!.id);
        assert.deepEqual(await store.listMessages('op-1'), [(await store.listMessages('op-1'))[0], ...inserted]);
      });

      it('keeps tool calls, tool call ids and tool results of messages', async () => {
        const toolResult = { content: 'A', success: true, executionTime: 3, state: { type: 'ok' }, data: { lines: [1, 2] } };
        await store.commitStep('op-1', {
          state: state(),
          messages: [
            { id: 'm-2', role: 'assistant', content: 'reading', toolCalls: [toolCall] },
            { id: 'm-3', role: 'tool', content: 'A', toolCallId: 'call_1', toolResult },
          ],
        });
        const [, assistant, tool] = await store.listMessages('op-1');
        assert.deepEqual(assistant!.toolCalls, [toolCall]);
        assert.equal('toolResult' in assistant!, false);
        assert.equal(tool!.toolCallId, 'call_1');
        assert.deepEqual(tool!.toolResult, toolResult);
        assert.equal(tool!.operationId, 'op-1');
      });

      it('stores odd step records exactly as a JSON round trip keeps them (the per-shape copies and texts fall back)', async () => {
        /** What a JSON column holds for `value`, read back. */
        const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;
        // jsonCopy calls toJSON() without the key JSON.stringify passes ("args"): a difference of the two stores older than these paths.
        const calls = TOOL_CALLS_CASES.filter((c) => c.name !== 'arguments with toJSON');
        // jsonCopy keeps -0 where a JSON column reads back 0 (older too; no step record carries -0).
        const usages = USAGE_CASES.filter((c) => c.name !== 'negative zero and fractions');
        const rounds = Math.max(STATE_CASES.length, calls.length, TOOL_RESULT_CASES.length, usages.length, SUMMARY_CASES.length);
        let stepIndex = 0;
        for (let i = 0; i < rounds; i++) {
          const pick = <T>(cases: Array<OddCase<T>>): OddCase<T> => cases[i % cases.length]!;
          const [st, use, sum, cs, res] = [pick(STATE_CASES), pick(usages), pick(SUMMARY_CASES), pick(calls), pick(TOOL_RESULT_CASES)];
          const label = `state ${st.name}, usage ${use.name}, summary ${sum.name}, calls ${cs.name}, result ${res.name}`;
          const step = () => ({ operationId: 'op-1', stepIndex: stepIndex++, kind: 'call_llm' as const, startedAt: 'a', finishedAt: 'b', usage: use.make(), summary: sum.make() });
          // The step loop's two usual commits: a model step with its assistant message, a tool step with its result.
          const [assistant] = await store.commitStep('op-1', { state: st.make(), step: step(), messages: [{ role: 'assistant', content: '', toolCalls: cs.make() }] });
          assert.deepStrictEqual(assistant!.toolCalls, roundTrip(cs.make()), label);
          assert.deepStrictEqual((await store.getOperation('op-1'))!.state, roundTrip(st.make()), label);
          const [tool] = await store.commitStep('op-1', { state: st.make(), step: step(), messages: [{ role: 'tool', content: 'r', toolCallId: 'c', toolResult: res.make() }] });
          assert.deepStrictEqual(tool!.toolResult, roundTrip(res.make()), label);
          const messages = await store.listMessages('op-1');
          assert.deepStrictEqual(messages.at(-2)!.toolCalls, roundTrip(cs.make()), label);
          assert.deepStrictEqual(messages.at(-1)!.toolResult, roundTrip(res.make()), label);
          const steps = await store.listSteps('op-1');
          assert.deepStrictEqual(steps.at(-1)!.usage, roundTrip(use.make()), label);
          assert.deepStrictEqual(steps.at(-1)!.summary, roundTrip(sum.make()), label);
        }
      });

      it('rejects an unknown operation with STORE_NOT_FOUND', async () => {
        await rejectsWithCode(store.commitStep('nope', { state: state(), messages: [{ role: 'user', content: 'x' }] }), 'STORE_NOT_FOUND');
        assert.equal(await store.getOperation('nope'), undefined);
        assert.deepEqual(await store.listMessages('nope', { includeCompacted: true }), []);
      });

      it('changes nothing when a message id already exists', async () => {
        const opBefore = await store.getOperation('op-1');
        await rejectsWithCode(
          store.commitStep('op-1', {
            step: { operationId: 'op-1', stepIndex: 0, kind: 'call_llm', startedAt: 'a', finishedAt: 'b', usage: state().usage, summary: {} },
            messages: [{ id: 'm-new', role: 'assistant', content: 'x' }, { id: 'm-1', role: 'user', content: 'dup' }],
            compact: { messageIds: ['m-1'], summaryId: 'm-new' },
            state: state({ stepIndex: 9 }),
            status: 'done',
            reason: 'done',
          }),
          'STORE_CONFLICT',
        );
        assert.deepEqual(await store.getOperation('op-1'), opBefore);
        assert.deepEqual((await store.listMessages('op-1', { includeCompacted: true })).map((m) => [m.id, m.content, m.compactedInto]), [
          ['m-1', 'read a.txt', undefined],
        ]);
        assert.deepEqual(await store.listSteps('op-1'), []);
      });

      it('continues seq without a gap after a commit that failed', async () => {
        await rejectsWithCode(
          store.commitStep('op-1', { state: state(), messages: [{ role: 'assistant', content: 'x' }, { id: 'm-1', role: 'user', content: 'dup' }] }),
          'STORE_CONFLICT',
        );
        const [next] = await store.commitStep('op-1', { state: state(), messages: [{ role: 'assistant', content: 'y' }] });
        assert.equal(next!.seq, 2);
        assert.deepEqual((await store.listMessages('op-1')).map((m) => [m.seq, m.content]), [[1, 'read a.txt'], [2, 'y']]);
      });

      it('changes nothing when a compacted message does not belong to the operation', async () => {
        await store.createOperation(newOperation('op-2'), [{ id: 'm-other', role: 'user', content: 'x' }], []);
        const opBefore = await store.getOperation('op-1');
        await rejectsWithCode(
          store.commitStep('op-1', {
            messages: [{ id: 'sum', role: 'summary', content: 'short' }],
            compact: { messageIds: ['m-1', 'm-other'], summaryId: 'sum' },
            state: state({ stepIndex: 2 }),
          }),
          'STORE_NOT_FOUND',
        );
        assert.deepEqual(await store.getOperation('op-1'), opBefore);
        assert.deepEqual((await store.listMessages('op-1', { includeCompacted: true })).map((m) => [m.id, m.compactedInto]), [['m-1', undefined]]);
        assert.deepEqual((await store.listMessages('op-2', { includeCompacted: true })).map((m) => [m.id, m.compactedInto]), [['m-other', undefined]]);
      });

      it('marks compacted messages and lists them only when asked', async () => {
        await store.commitStep('op-1', { state: state(), messages: [{ id: 'm-2', role: 'assistant', content: 'long answer' }] });
        await store.commitStep('op-1', {
          state: state(),
          messages: [{ id: 'sum', role: 'summary', content: 'short' }],
          compact: { messageIds: ['m-1', 'm-2'], summaryId: 'sum' },
        });
        await store.commitStep('op-1', { state: state(), messages: [{ id: 'm-4', role: 'user', content: 'next' }] });
        assert.deepEqual((await store.listMessages('op-1')).map((m) => m.id), ['sum', 'm-4']);
        const all = await store.listMessages('op-1', { includeCompacted: true });
        assert.deepEqual(all.map((m) => [m.id, m.seq, m.compactedInto]), [
          ['m-1', 1, 'sum'],
          ['m-2', 2, 'sum'],
          ['sum', 3, undefined],
          ['m-4', 4, undefined],
        ]);
        assert.equal('compactedInto' in all[2]!, false);
      });

      it('keeps messages of different operations apart', async () => {
        await store.createOperation(newOperation('op-2'), [{ role: 'user', content: 'other' }], []);
        await store.commitStep('op-1', { state: state(), messages: [{ role: 'assistant', content: 'mine' }] });
        assert.deepEqual((await store.listMessages('op-1')).map((m) => m.content), ['read a.txt', 'mine']);
        assert.deepEqual((await store.listMessages('op-2')).map((m) => [m.seq, m.content]), [[1, 'other']]);
      });
    });

    describe('compare-and-swap on the state version', () => {
      beforeEach(async () => {
        await store.createOperation(newOperation('op-1'), [{ id: 'm-1', role: 'user', content: 'go' }], []);
      });

      it('starts at version 0 and every commit adds one', async () => {
        assert.equal((await store.getOperation('op-1'))!.version, 0);
        await store.commitStep('op-1', { state: state({ stepIndex: 1 }) });
        await store.commitStep('op-1', { state: state({ stepIndex: 2 }), status: 'waiting_approval' });
        assert.equal((await store.getOperation('op-1'))!.version, 2);
      });

      it('commits when the expected version is the stored one', async () => {
        await store.commitStep('op-1', { state: state({ stepIndex: 1 }) });
        await store.commitStep('op-1', { state: state({ stepIndex: 2 }), status: 'waiting_approval', expectedVersion: 1 });
        const op = (await store.getOperation('op-1'))!;
        assert.equal(op.version, 2);
        assert.equal(op.status, 'waiting_approval');
      });

      it('a stale expected version writes nothing: no state, status, step or message', async () => {
        await store.commitStep('op-1', { state: state({ stepIndex: 1 }), status: 'waiting_approval' });
        const before = (await store.getOperation('op-1'))!;
        const step = { operationId: 'op-1', stepIndex: 1, kind: 'call_tool' as const, startedAt: 'a', finishedAt: 'b', usage: state().usage, summary: {} };
        await rejectsWithCode(
          store.commitStep('op-1', { state: state({ stepIndex: 9 }), status: 'running', step, messages: [{ role: 'tool', toolCallId: 'c', content: 'x' }], expectedVersion: 0 }),
          'STORE_VERSION_CONFLICT',
        );
        assert.deepEqual(await store.getOperation('op-1'), before);
        assert.equal((await store.listMessages('op-1')).length, 1);
        assert.equal((await store.listSteps('op-1')).length, 0);
      });

      it('two writers that read the same version: exactly one commit wins', async () => {
        const { version } = (await store.getOperation('op-1'))!;
        const results = await Promise.allSettled([
          store.commitStep('op-1', { state: state({ stepIndex: 1, lastText: 'first' }), expectedVersion: version }),
          store.commitStep('op-1', { state: state({ stepIndex: 1, lastText: 'second' }), expectedVersion: version }),
        ]);
        assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        assert.ok(isHookgateError(lost.reason) && lost.reason.code === 'STORE_VERSION_CONFLICT');
        const winner = results[0]!.status === 'fulfilled' ? 'first' : 'second';
        assert.equal((await store.getOperation('op-1'))!.state.lastText, winner);
      });

      it('publishToolResult with a stale expected version leaves the placeholder empty', async () => {
        await store.commitStep('op-1', { state: state({ stepIndex: 1 }), messages: [{ role: 'tool', toolCallId: 'call_d', content: '' }] });
        await rejectsWithCode(store.publishToolResult('op-1', 'call_d', { content: 'late', success: true }, { state: state({ stepIndex: 2 }), expectedVersion: 0 }), 'STORE_VERSION_CONFLICT');
        const placeholder = (await store.listMessages('op-1')).find((m) => m.toolCallId === 'call_d')!;
        assert.equal(placeholder.content, '');
        assert.equal(placeholder.toolResult, undefined);
        assert.equal(await store.publishToolResult('op-1', 'call_d', { content: 'on time', success: true }, { state: state({ stepIndex: 2 }), expectedVersion: 1 }), true);
        assert.equal((await store.getOperation('op-1'))!.version, 2);
      });

      it('a publication moves the version: a step commit naming the version before it writes nothing, one naming the new version appends after it', async () => {
        const step = (stepIndex: number) => ({ operationId: 'op-1', stepIndex, kind: 'call_tool' as const, startedAt: 'a', finishedAt: 'b', usage: state().usage, summary: {} });
        await store.commitStep('op-1', { state: state({ stepIndex: 1 }), step: step(0), messages: [{ role: 'tool', toolCallId: 'call_d', content: '' }], expectedVersion: 0 });
        assert.equal(await store.publishToolResult('op-1', 'call_d', { content: 'done', success: true }, { state: state({ stepIndex: 1 }), expectedVersion: 1 }), true);
        await rejectsWithCode(
          store.commitStep('op-1', { state: state({ stepIndex: 2 }), step: step(1), messages: [{ role: 'assistant', content: 'stale' }], expectedVersion: 1 }),
          'STORE_VERSION_CONFLICT',
        );
        const written = await store.commitStep('op-1', { state: state({ stepIndex: 2 }), step: step(1), messages: [{ role: 'assistant', content: 'fresh' }], expectedVersion: 2 });
        assert.deepEqual(written.map((m) => [m.seq, m.content]), [[3, 'fresh']]);
        assert.deepEqual((await store.listMessages('op-1')).map((m) => [m.seq, m.content]), [[1, 'go'], [2, 'done'], [3, 'fresh']]);
        assert.deepEqual((await store.listSteps('op-1')).map((s) => s.stepIndex), [0, 1]);
        const op = (await store.getOperation('op-1'))!;
        assert.equal(op.version, 3);
        assert.equal(op.state.stepIndex, 2);
      });
    });

    describe('leases', () => {
      const T0 = 1_800_000_000_000;

      beforeEach(async () => {
        await store.createOperation(newOperation('op-1'), [{ id: 'm-1', role: 'user', content: 'go' }], []);
      });

      it('an unclaimed operation is granted with owner and expiry, and the record is returned as stored', async () => {
        assert.equal(await store.getLease('op-1'), undefined);
        const claim = await store.claimOperation('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 });
        assert.ok(claim.claimed);
        assert.deepEqual(claim.lease, { owner: 'proc-a', expiresAt: T0 + 30_000 });
        assert.deepEqual(claim.operation, await store.getOperation('op-1'));
        assert.deepEqual(await store.getLease('op-1'), { owner: 'proc-a', expiresAt: T0 + 30_000 });
      });

      it('an unexpired lease of another owner is refused with the holder, and nothing changes', async () => {
        await store.claimOperation('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 });
        const refused = await store.claimOperation('op-1', { owner: 'proc-b', ttlMs: 30_000, now: T0 + 29_999 });
        assert.equal(refused.claimed, false);
        assert.ok(!refused.claimed);
        assert.deepEqual(refused.holder, { owner: 'proc-a', expiresAt: T0 + 30_000 });
        assert.equal(refused.operation.id, 'op-1');
        assert.deepEqual(await store.getLease('op-1'), { owner: 'proc-a', expiresAt: T0 + 30_000 });
      });

      it('an expired lease is taken over; the former holder can then neither renew nor release it', async () => {
        await store.claimOperation('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 });
        const taken = await store.claimOperation('op-1', { owner: 'proc-b', ttlMs: 10_000, now: T0 + 30_000 });
        assert.ok(taken.claimed);
        assert.deepEqual(taken.lease, { owner: 'proc-b', expiresAt: T0 + 40_000 });
        assert.equal(await store.renewLease('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 + 30_001 }), undefined);
        assert.equal(await store.releaseLease('op-1', 'proc-a'), false);
        assert.deepEqual(await store.getLease('op-1'), { owner: 'proc-b', expiresAt: T0 + 40_000 });
      });

      it('claiming again as the holder extends the lease; renewLease extends it too', async () => {
        await store.claimOperation('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 });
        const again = await store.claimOperation('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 + 10_000 });
        assert.ok(again.claimed);
        assert.equal(again.lease.expiresAt, T0 + 40_000);
        assert.deepEqual(await store.renewLease('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 + 20_000 }), { owner: 'proc-a', expiresAt: T0 + 50_000 });
        assert.deepEqual(await store.getLease('op-1'), { owner: 'proc-a', expiresAt: T0 + 50_000 });
      });

      it('release frees the operation for any owner; a release by another owner changes nothing', async () => {
        await store.claimOperation('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 });
        assert.equal(await store.releaseLease('op-1', 'proc-b'), false);
        assert.equal(await store.releaseLease('op-1', 'proc-a'), true);
        assert.equal(await store.getLease('op-1'), undefined);
        assert.equal(await store.renewLease('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 }), undefined);
        assert.ok((await store.claimOperation('op-1', { owner: 'proc-b', ttlMs: 30_000, now: T0 + 1 })).claimed);
      });

      it('leases leave the state version, status and updatedAt alone', async () => {
        const before = (await store.getOperation('op-1'))!;
        await store.claimOperation('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 });
        await store.renewLease('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 + 1 });
        await store.releaseLease('op-1', 'proc-a');
        assert.deepEqual(await store.getOperation('op-1'), before);
      });

      it('two owners claiming at once: exactly one is granted', async () => {
        const claims = await Promise.all([
          store.claimOperation('op-1', { owner: 'proc-a', ttlMs: 30_000, now: T0 }),
          store.claimOperation('op-1', { owner: 'proc-b', ttlMs: 30_000, now: T0 }),
        ]);
        assert.deepEqual(claims.map((c) => c.claimed).sort(), [false, true]);
        const winner = claims.find((c) => c.claimed)!;
        const loser = claims.find((c) => !c.claimed)!;
        assert.ok(winner.claimed && !loser.claimed);
        assert.equal(loser.holder.owner, winner.lease.owner);
      });

      it('createOperation({ lease }) creates the operation already claimed by that owner', async () => {
        await store.createOperation(newOperation('op-2', { lease: { owner: 'proc-a', ttlMs: 30_000, now: T0 } }), [], []);
        assert.deepEqual(await store.getLease('op-2'), { owner: 'proc-a', expiresAt: T0 + 30_000 });
        const refused = await store.claimOperation('op-2', { owner: 'proc-b', ttlMs: 30_000, now: T0 + 1 });
        assert.ok(!refused.claimed && refused.holder.owner === 'proc-a');
        await rejectsWithCode(store.createOperation(newOperation('op-3', { lease: { owner: 'proc-a', ttlMs: -1 } }), [], []), 'LEASE_REQUEST_INVALID');
        assert.equal(await store.getOperation('op-3'), undefined, 'a refused lease creates nothing');
      });

      it('unknown operations get STORE_NOT_FOUND; a request without owner or positive ttlMs gets LEASE_REQUEST_INVALID', async () => {
        await rejectsWithCode(store.claimOperation('nope', { owner: 'proc-a', ttlMs: 1000 }), 'STORE_NOT_FOUND');
        await rejectsWithCode(store.renewLease('nope', { owner: 'proc-a', ttlMs: 1000 }), 'STORE_NOT_FOUND');
        await rejectsWithCode(store.releaseLease('nope', 'proc-a'), 'STORE_NOT_FOUND');
        assert.equal(await store.getLease('nope'), undefined);
        const noOwner = await rejectsWithCode(store.claimOperation('op-1', { owner: '', ttlMs: 1000 }), 'LEASE_REQUEST_INVALID');
        assert.match(noOwner.message, /owner/);
        const badTtl = await rejectsWithCode(store.claimOperation('op-1', { owner: 'proc-a', ttlMs: 0 }), 'LEASE_REQUEST_INVALID');
        assert.match(badTtl.message, /ttlMs/);
        assert.equal(await store.getLease('op-1'), undefined);
      });
    });

    describe('steps', () => {
      it('lists the steps of an operation in step order', async () => {
        await store.createOperation(newOperation('op-1'), [], []);
        const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3, cost: 0.1 };
        const step = (stepIndex: number, kind: 'call_llm' | 'call_tool') => ({
          operationId: 'op-1',
          stepIndex,
          kind,
          startedAt: `2025-01-01T00:00:0${stepIndex}.000Z`,
          finishedAt: `2025-01-01T00:00:0${stepIndex}.500Z`,
          usage,
          summary: { toolCallIds: ['call_1'], stepIndex },
        });
        await store.commitStep('op-1', { state: state(), step: step(1, 'call_tool') });
        await store.commitStep('op-1', { state: state(), step: step(0, 'call_llm') });
        await store.commitStep('op-1', { state: state(), step: step(2, 'call_llm') });
        assert.deepEqual(await store.listSteps('op-1'), [step(0, 'call_llm'), step(1, 'call_tool'), step(2, 'call_llm')]);
        assert.deepEqual(await store.listSteps('nope'), []);
      });
    });

    describe('hooks', () => {
      beforeEach(async () => {
        await store.createOperation(newOperation('op-1'), [], [{ id: 'h-1' }]);
      });

      it('replaces the stored hooks and keeps their order', async () => {
        const hooks = [{ id: 'h-2', webhook: { url: 'https://example.test/a', headers: { 'x-a': '${env:A}' } } }, { id: 'h-3' }];
        await store.saveHooks('op-1', hooks);
        assert.deepEqual(await store.loadHooks('op-1'), hooks);
        await store.saveHooks('op-1', []);
        assert.deepEqual(await store.loadHooks('op-1'), []);
      });

      it('loads no hooks for an unknown operation', async () => {
        assert.deepEqual(await store.loadHooks('nope'), []);
      });

      it('refuses to save hooks of an unknown operation', async () => {
        await rejectsWithCode(store.saveHooks('nope', [{ id: 'h' }]), 'STORE_NOT_FOUND');
        assert.deepEqual(await store.loadHooks('nope'), []);
      });
    });

    describe('users', () => {
      it('stores a user and replaces the email on upsert', async () => {
        await store.upsertUser({ id: 'u-1', email: 'a@example.test' });
        assert.deepEqual(await store.getUser('u-1'), { id: 'u-1', email: 'a@example.test' });
        await store.upsertUser({ id: 'u-1', email: 'b@example.test' });
        assert.deepEqual(await store.getUser('u-1'), { id: 'u-1', email: 'b@example.test' });
      });

      it('clears the email when an upsert has none', async () => {
        await store.upsertUser({ id: 'u-1', email: 'a@example.test' });
        await store.upsertUser({ id: 'u-1' });
        assert.deepEqual(await store.getUser('u-1'), { id: 'u-1' });
      });

      it('returns undefined for an unknown user', async () => {
        assert.equal(await store.getUser('nope'), undefined);
      });
    });

    describe('decisions', () => {
      it('reads a recorded decision back unchanged, optional fields included', async () => {
        const full = decision('d-1', {
          operationId: 'op-1',
          toolCallId: 'call_1',
          agentId: 'agent-a',
          identifier: 'fs',
          apiName: 'writeFile',
          policies: [
            { id: 'p-deny-write', effect: 'deny', mode: 'enforce', reason: 'read only' },
            { id: 'p-shadow', effect: 'allow', mode: 'shadow', error: 'timeout' },
          ],
          decision: 'deny',
          reason: 'read only',
          defaulted: true,
          latencyMicros: 1234,
          rawInput: { path: 'a.txt', nested: [null, 1] },
        });
        await store.recordDecision(full);
        assert.deepEqual(await store.listDecisions(), [full]);
      });

      it('leaves absent optional fields out and keeps a null raw input', async () => {
        await store.recordDecision(decision('d-1'));
        await store.recordDecision(decision('d-2', { createdAt: '2025-01-02T00:00:00.000Z', rawInput: null }));
        const [withNull, minimal] = await store.listDecisions();
        assert.deepEqual(minimal, decision('d-1'));
        assert.equal(withNull!.rawInput, null);
      });

      it('refuses a second decision with the same id', async () => {
        await store.recordDecision(decision('d-1'));
        await rejectsWithCode(store.recordDecision(decision('d-1', { decision: 'deny' })), 'STORE_CONFLICT');
        assert.deepEqual((await store.listDecisions()).map((d) => [d.id, d.decision]), [['d-1', 'allow']]);
      });

      describe('listing', () => {
        beforeEach(async () => {
          // Recorded out of time order on purpose.
          await store.recordDecision(decision('d-2', { createdAt: '2025-01-02T00:00:00.000Z', operationId: 'op-1', decision: 'deny',
            policies: [{ id: 'p-a', effect: 'deny', mode: 'enforce' }, { id: 'p-b', effect: 'allow', mode: 'shadow' }] }));
          await store.recordDecision(decision('d-1', { createdAt: '2025-01-01T00:00:00.000Z', operationId: 'op-1' }));
          await store.recordDecision(decision('d-4', { createdAt: '2025-01-04T00:00:00.000Z', operationId: 'op-2', decision: 'ask',
            policies: [{ id: 'p-b', effect: 'ask', mode: 'enforce' }] }));
          await store.recordDecision(decision('d-3', { createdAt: '2025-01-03T00:00:00.000Z', operationId: 'op-2', decision: 'deny',
            policies: [{ id: 'p-a', effect: 'deny', mode: 'enforce' }] }));
        });

        const ids = (records: DecisionRecord[]) => records.map((d) => d.id);

        it('lists newest first', async () => {
          assert.deepEqual(ids(await store.listDecisions()), ['d-4', 'd-3', 'd-2', 'd-1']);
        });

        it('orders decisions of the same instant newest recorded first', async () => {
          await store.recordDecision(decision('d-5a', { createdAt: '2025-01-05T00:00:00.000Z' }));
          await store.recordDecision(decision('d-5b', { createdAt: '2025-01-05T00:00:00.000Z' }));
          assert.deepEqual(ids(await store.listDecisions({ limit: 2 })), ['d-5b', 'd-5a']);
        });

        it('filters by operation', async () => {
          assert.deepEqual(ids(await store.listDecisions({ operationId: 'op-1' })), ['d-2', 'd-1']);
        });

        it('filters by policy id, shadow evaluations included', async () => {
          assert.deepEqual(ids(await store.listDecisions({ policyId: 'p-a' })), ['d-3', 'd-2']);
          assert.deepEqual(ids(await store.listDecisions({ policyId: 'p-b' })), ['d-4', 'd-2']);
          assert.deepEqual(ids(await store.listDecisions({ policyId: 'p-none' })), []);
        });

        it('filters by decision', async () => {
          assert.deepEqual(ids(await store.listDecisions({ decision: 'deny' })), ['d-3', 'd-2']);
        });

        it('filters by an inclusive time range', async () => {
          assert.deepEqual(ids(await store.listDecisions({ since: '2025-01-02T00:00:00.000Z', until: '2025-01-03T00:00:00.000Z' })), ['d-3', 'd-2']);
          assert.deepEqual(ids(await store.listDecisions({ since: '2025-01-03T00:00:00.000Z' })), ['d-4', 'd-3']);
          assert.deepEqual(ids(await store.listDecisions({ until: '2025-01-01T00:00:00.000Z' })), ['d-1']);
        });

        it('combines filters', async () => {
          assert.deepEqual(ids(await store.listDecisions({ operationId: 'op-2', policyId: 'p-a', decision: 'deny' })), ['d-3']);
        });

        it('limits the result to the newest ones', async () => {
          assert.deepEqual(ids(await store.listDecisions({ limit: 2 })), ['d-4', 'd-3']);
          assert.deepEqual(ids(await store.listDecisions({ policyId: 'p-a', limit: 1 })), ['d-3']);
        });
      });
    });

    describe('isolation', () => {
      it('is not changed by mutating what was passed in', async () => {
        const op = newOperation('op-1');
        const messages = [{ role: 'assistant' as const, content: 'x', toolCalls: [{ ...toolCall, args: { path: 'a' } }] }];
        const hooks = [{ id: 'h-1', config: { url: 'https://example.test' } }];
        await store.createOperation(op, messages, hooks);
        const commitState = state({ stepIndex: 1 });
        await store.commitStep('op-1', { state: commitState });
        const d = decision('d-1', { rawInput: { path: 'a' } });
        await store.recordDecision(d);

        (op.context as Record<string, string>).topicId = 'changed';
        (op.agent as { id: string }).id = 'changed';
        commitState.stepIndex = 99;
        commitState.approvedToolCallIds.push('x');
        (messages[0]!.toolCalls[0]!.args as Record<string, unknown>).path = 'changed';
        hooks[0]!.config.url = 'changed';
        d.policies[0]!.id = 'changed';
        (d.rawInput as { path: string }).path = 'changed';

        const stored = (await store.getOperation('op-1'))!;
        assert.equal(stored.context.topicId, 't1');
        assert.equal((stored.agent as { id: string }).id, 'agent-a');
        assert.equal(stored.state.stepIndex, 1);
        assert.deepEqual(stored.state.approvedToolCallIds, []);
        assert.deepEqual((await store.listMessages('op-1'))[0]!.toolCalls![0]!.args, { path: 'a' });
        assert.deepEqual(await store.loadHooks('op-1'), [{ id: 'h-1', config: { url: 'https://example.test' } }]);
        const [storedDecision] = await store.listDecisions();
        assert.equal(storedDecision!.policies[0]!.id, 'p-default');
        assert.deepEqual(storedDecision!.rawInput, { path: 'a' });
      });

      it('is not changed by mutating what it returned', async () => {
        const created = await store.createOperation(newOperation('op-1'), [{ role: 'user', content: 'hi' }], [{ id: 'h-1' }]);
        created.state.stepIndex = 50;
        const read = (await store.getOperation('op-1'))!;
        read.context.topicId = 'changed';
        read.state.pendingToolCalls.push(toolCall);
        (await store.listOperations())[0]!.status = 'done';
        (await store.listMessages('op-1'))[0]!.content = 'changed';
        ((await store.loadHooks('op-1'))[0] as { id: string }).id = 'changed';
        await store.upsertUser({ id: 'u-1', email: 'a@example.test' });
        (await store.getUser('u-1'))!.email = 'changed';
        await store.recordDecision(decision('d-1'));
        (await store.listDecisions())[0]!.policies.push({ id: 'x', effect: 'deny', mode: 'enforce' });

        const op = (await store.getOperation('op-1'))!;
        assert.equal(op.state.stepIndex, 0);
        assert.equal(op.context.topicId, 't1');
        assert.deepEqual(op.state.pendingToolCalls, []);
        assert.equal(op.status, 'running');
        assert.equal((await store.listMessages('op-1'))[0]!.content, 'hi');
        assert.deepEqual(await store.loadHooks('op-1'), [{ id: 'h-1' }]);
        assert.equal((await store.getUser('u-1'))!.email, 'a@example.test');
        assert.equal((await store.listDecisions())[0]!.policies.length, 1);
      });
    });

    describePruneContract(() => store);
    describeSubmissionsContract(() => store);
    describeToolStepsContract(() => store);
    describeUserValuesContract(() => store);
    describeMessageUpdateContract(() => store);

    describe('lifecycle', () => {
      it('rejects calls after close with KERNEL_STOPPED, and close twice is fine', async () => {
        await store.close();
        await store.close();
        await rejectsWithCode(store.getOperation('op-1'), 'KERNEL_STOPPED');
        await rejectsWithCode(store.createOperation(newOperation('op-1'), [], []), 'KERNEL_STOPPED');
      });
    });
  });
}
