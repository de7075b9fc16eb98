import assert from 'node:assert/strict';
import { isHookgateError } from '../../kernel/errors.js';
import type { ErrorCode } from '../../kernel/error-catalog.js';
import type { OperationState, Store } from '../../kernel/store.js';

function state(stepIndex = 0): OperationState {
  return { stepIndex, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
}

async function rejects(promise: Promise<unknown>, code: ErrorCode): Promise<Error> {
  let caught: unknown;
  await promise.then(() => assert.fail(`expected ${code}`), (err: unknown) => (caught = err));
  assert.ok(isHookgateError(caught, code), `expected ${code}, got ${String((caught as Error)?.stack ?? caught)}`);
  return caught as Error;
}

/** `Store.updateMessage` (document 003's message update), for every store (run by the store contract). */
export function describeMessageUpdateContract(current: () => Store): void {
  describe('updateMessage', () => {
    let store: Store;
    beforeEach(async () => {
      store = current();
      await store.createOperation({ id: 'op-u', agentId: 'agent-a', agent: { id: 'agent-a' }, context: {}, state: state(), thread: { id: 'th-u', agentId: 'agent-a' } },
        [{ id: 'mu-1', role: 'user', content: 'hello' }], []);
      // A generated id (store-sqlite derives it from the log key) and a tool message with its result.
      await store.commitStep('op-u', {
        state: state(1),
        messages: [
          { role: 'assistant', content: 'calling', toolCalls: [{ id: 'c1', identifier: 'fs', apiName: 'readFile', args: { path: 'a' } }] },
          { id: 'mu-tool', role: 'tool', content: 'file text', toolCallId: 'c1', toolResult: { success: true, content: 'file text' } },
        ],
      });
      await store.createOperation({ id: 'op-other', agentId: 'agent-a', agent: { id: 'agent-a' }, context: {}, state: state(), thread: { id: 'th-other', agentId: 'agent-a' } },
        [{ id: 'mu-other', role: 'user', content: 'not yours' }], []);
    });

    it('changes the content of a message, supplied or generated id, and nothing else of it or of its neighbours', async () => {
      const before = await store.listThreadMessages('th-u');
      const generated = before[1]!;
      const updated = await store.updateMessage('th-u', 'mu-1', { content: 'hello, edited' });
      assert.deepEqual(updated, { ...before[0]!, content: 'hello, edited' });
      const updatedGenerated = await store.updateMessage('th-u', generated.id, { content: 'calling (edited)' });
      assert.deepEqual(updatedGenerated, { ...generated, content: 'calling (edited)' });
      const after = await store.listThreadMessages('th-u');
      assert.deepEqual(after, [{ ...before[0]!, content: 'hello, edited' }, { ...generated, content: 'calling (edited)' }, before[2]!]);
      assert.deepEqual(await store.listMessages('op-u'), after);
      assert.equal((await store.getOperation('op-u'))!.version, 1, 'a message update is not a step: the state version stays');
    });

    it('keeps odd content exactly: NUL, emoji, a large text', async () => {
      const odd = `a\u0000b 😀 ${'x'.repeat(200_000)}`;
      await store.updateMessage('th-u', 'mu-1', { content: odd });
      assert.equal((await store.listThreadMessages('th-u'))[0]!.content, odd);
    });

    it('an empty update writes nothing and resolves to the message', async () => {
      const before = await store.listThreadMessages('th-u');
      assert.deepEqual(await store.updateMessage('th-u', 'mu-tool', {}), before[2]);
      assert.deepEqual(await store.listThreadMessages('th-u'), before);
    });

    it('refuses fields that cannot change, and content that is not a string, writing nothing', async () => {
      const before = await store.listThreadMessages('th-u');
      for (const bad of [{ role: 'system' }, { id: 'other' }, { position: 9 }, { threadId: 'th-other' }, { content: 'x', toolCallId: 'c9' }, { content: 42 }, { content: null }]) {
        const err = await rejects(store.updateMessage('th-u', 'mu-1', bad as never), 'MESSAGE_UPDATE_INVALID');
        assert.match(err.message, /mu-1/);
      }
      for (const bad of [null, [], 'text']) await rejects(store.updateMessage('th-u', 'mu-1', bad as never), 'MESSAGE_UPDATE_INVALID');
      assert.deepEqual(await store.listThreadMessages('th-u'), before);
    });

    it('sets the status and the response completion time, alone or with the content; a later update keeps what it does not name; a new message has neither', async () => {
      const before = await store.listThreadMessages('th-u');
      assert.ok(before.every((m) => !('status' in m) && !('responseCompletedAt' in m)), 'a new message has no status and no completion time');
      const completedAt = 1_767_225_600_123_456; // microseconds: beyond 2^32, below 2^53
      const statusOnly = await store.updateMessage('th-u', before[1]!.id, { status: 'pending' });
      assert.deepEqual(statusOnly, { ...before[1]!, status: 'pending' });
      const both = await store.updateMessage('th-u', before[1]!.id, { status: 'completed', responseCompletedAt: completedAt });
      assert.deepEqual(both, { ...before[1]!, status: 'completed', responseCompletedAt: completedAt });
      const contentLater = await store.updateMessage('th-u', before[1]!.id, { content: 'calling (done)' });
      assert.deepEqual(contentLater, { ...before[1]!, content: 'calling (done)', status: 'completed', responseCompletedAt: completedAt });
      const all = await store.updateMessage('th-u', 'mu-tool', { content: 'file text (checked)', status: 'failed', responseCompletedAt: 0 });
      assert.deepEqual(all, { ...before[2]!, content: 'file text (checked)', status: 'failed', responseCompletedAt: 0 });
      const after = await store.listThreadMessages('th-u');
      assert.deepEqual(after, [before[0]!, contentLater, all]);
      assert.deepEqual(await store.listMessages('op-u'), after);
      assert.equal((await store.getOperation('op-u'))!.version, 1);
    });

    it('refuses a status outside pending/completed/failed and a completion time that is not a whole number of microseconds from 0 to 2^53-1, writing nothing', async () => {
      const before = await store.listThreadMessages('th-u');
      const bad: unknown[] = [
        { status: 'done' }, { status: 'COMPLETED' }, { status: null }, { status: 1 }, { status: 'completed\u0000' },
        { responseCompletedAt: -1 }, { responseCompletedAt: 1.5 }, { responseCompletedAt: '1767225600123456' }, { responseCompletedAt: Number.NaN },
        { responseCompletedAt: Number.MAX_SAFE_INTEGER + 1 }, { responseCompletedAt: Number.POSITIVE_INFINITY }, { responseCompletedAt: null },
        // The store takes its own names: the hook row's snake_case name is not one of them.
        { response_completed_at: 5 },
        // One bad field refuses the whole update.
        { content: 'half', status: 'done' }, { status: 'completed', responseCompletedAt: -5 },
      ];
      for (const update of bad) {
        const err = await rejects(store.updateMessage('th-u', 'mu-1', update as never), 'MESSAGE_UPDATE_INVALID');
        assert.match(err.message, /mu-1/);
        assert.match(err.message, /status|responseCompletedAt|response_completed_at/);
      }
      assert.deepEqual(await store.listThreadMessages('th-u'), before);
    });

    it("refuses another thread's message and an unknown id (STORE_NOT_FOUND), writing nothing", async () => {
      const err = await rejects(store.updateMessage('th-u', 'mu-other', { content: 'hijack' }), 'STORE_NOT_FOUND');
      assert.match(err.message, /th-u/);
      await rejects(store.updateMessage('th-u', 'no-such-message', { content: 'x' }), 'STORE_NOT_FOUND');
      await rejects(store.updateMessage('no-such-thread', 'mu-1', { content: 'x' }), 'STORE_NOT_FOUND');
      assert.equal((await store.listThreadMessages('th-other'))[0]!.content, 'not yours');
      assert.equal((await store.listThreadMessages('th-u'))[0]!.content, 'hello');
    });

    it('refuses a compacted message (STORE_CONFLICT), writing nothing', async () => {
      await store.commitStep('op-u', { state: state(2), messages: [{ id: 'mu-sum', role: 'summary', content: 'summary' }], compact: { messageIds: ['mu-1'], summaryId: 'mu-sum' } });
      await rejects(store.updateMessage('th-u', 'mu-1', { content: 'x' }), 'STORE_CONFLICT');
      assert.equal((await store.listThreadMessages('th-u', { includeCompacted: true }))[0]!.content, 'hello');
      assert.equal((await store.updateMessage('th-u', 'mu-sum', { content: 'better summary' })).content, 'better summary');
    });

    it('concurrent updates of one message: each is whole, the last one stays', async () => {
      await Promise.all(['one', 'two', 'three'].map((content) => store.updateMessage('th-u', 'mu-1', { content })));
      assert.ok(['one', 'two', 'three'].includes((await store.listThreadMessages('th-u'))[0]!.content));
    });
  });
}
