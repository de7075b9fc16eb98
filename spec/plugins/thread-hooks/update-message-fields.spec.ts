import assert from 'node:assert/strict';
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import { isHookgateError } from '../../../kernel/errors.js';
import { defineHook, type HookMessage, type ThreadState } from '../../../threads.js';
import { scripted, startKernel, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/**
 * ThreadState.updateMessage beyond the content (issue 15): the message's
 * `status` and `response_completed_at`, as the document's "Add Completion
 * Timestamp" example writes them; fields that never change are refused.
 * Checked against what the store holds afterwards.
 */
for (const store of ['memory', 'sqlite'] as const) {
  describe(`thread hooks: message status and completion time updates (${store} store)`, () => {
    let fx: RuntimeFixture;
    beforeEach(async () => {
      fx = await startKernel(store === 'sqlite' ? { store: 'sqlite' } : {});
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    /** Runs an agent whose after_create_message hook updates its assistant answer once with `updates`. */
    async function runMarking(updates: Record<string, unknown>, hooks: ReturnType<typeof defineHook>[]) {
      const outcome: { result?: HookMessage; error?: unknown } = {};
      const handle = await fx.kernel.execAgent({
        agent: { id: 'marker', model: scripted([{ text: 'answer' }]) } as AgentDefinition,
        prompt: 'question',
        threadHooks: [
          defineHook({
            hook: 'after_create_message',
            id: 'mark_answer',
            execute: async (state: ThreadState, m) => {
              if (m.role !== 'assistant') return;
              try {
                outcome.result = await state.updateMessage(m.id, updates);
              } catch (err) {
                outcome.error = err;
              }
            },
          }),
          ...hooks,
        ],
      });
      const final = await handle.completed();
      assert.equal(final.status, 'done');
      return { operationId: handle.operationId, outcome };
    }

    it("the document's completion-timestamp hook: before_update_message gets only the changed fields, adds response_completed_at; the store and after_update_message hold both", async () => {
      const given: Array<Record<string, unknown>> = [];
      const after: HookMessage[] = [];
      const from = Date.now() * 1000;
      const { operationId, outcome } = await runMarking({ status: 'completed' }, [
        defineHook({
          hook: 'before_update_message',
          id: 'add_completion_timestamp',
          execute: async (_state, _id, updates) => {
            given.push({ ...updates });
            if (updates.status === 'completed' && !updates.response_completed_at) updates.response_completed_at = Date.now() * 1000;
            return updates;
          },
        }),
        defineHook({ hook: 'after_update_message', id: 'track_status_changes', execute: (_s, m) => void after.push(m) }),
      ]);
      const to = Date.now() * 1000;
      assert.equal(outcome.error, undefined, String(outcome.error));
      assert.deepEqual(given, [{ status: 'completed' }]);
      const messages = await fx.kernel.listMessages(operationId);
      assert.deepEqual(messages.map((m) => [m.role, m.content, m.status]), [['user', 'question', undefined], ['assistant', 'answer', 'completed']]);
      const completedAt = messages[1]!.responseCompletedAt!;
      assert.ok(Number.isSafeInteger(completedAt) && completedAt >= from && completedAt <= to, String(completedAt));
      assert.equal(messages[0]!.responseCompletedAt, undefined);
      assert.deepEqual(after.map((m) => [m.id, m.status, m.response_completed_at, m.content]), [[messages[1]!.id, 'completed', completedAt, 'answer']]);
      assert.deepEqual([outcome.result?.status, outcome.result?.response_completed_at], ['completed', completedAt]);
    });

    it('getMessages shows the stored status and completion time; a content update later keeps them', async () => {
      const rows: HookMessage[][] = [];
      const { operationId } = await runMarking({ status: 'failed', response_completed_at: 42 }, [
        defineHook({
          hook: 'after_update_message',
          id: 'then_content',
          execute: async (state, m) => {
            if (m.content === 'answer') await state.updateMessage(m.id, { content: 'answer (reviewed)' });
            rows.push((await state.getMessages()).messages);
          },
        }),
      ]);
      const messages = await fx.kernel.listMessages(operationId);
      assert.deepEqual([messages[1]!.content, messages[1]!.status, messages[1]!.responseCompletedAt], ['answer (reviewed)', 'failed', 42]);
      const last = rows.at(-1)!.at(-1)!;
      assert.deepEqual([last.content, last.status, last.response_completed_at], ['answer (reviewed)', 'failed', 42]);
      assert.deepEqual([rows.at(-1)![0]!.status, rows.at(-1)![0]!.response_completed_at], [null, null]);
    });

    it('refuses, with MESSAGE_UPDATE_INVALID naming the field, every field that never changes and every bad value; nothing is stored and after_update_message does not run', async () => {
      const bad: Array<Record<string, unknown>> = [
        { id: 'other' }, { role: 'system' }, { thread_id: 'th-x' }, { tool_call_id: 'call-x' }, { tool_calls: '[]' }, { tool_status: 'success' },
        { created_at: 1 }, { position: 3 }, { name: 'bot' },
        // The store's own (camelCase) name is not a field of the row hooks see.
        { responseCompletedAt: 5 },
        { status: 'done' }, { status: 'Completed' }, { status: null }, { status: ['completed'] },
        { response_completed_at: -1 }, { response_completed_at: 1.5 }, { response_completed_at: '5' }, { response_completed_at: Number.MAX_SAFE_INTEGER + 2 },
        { content: 'half applied', status: 'nope' },
        { ['x'.repeat(10_000)]: 1 },
      ];
      for (const updates of bad) {
        const observed: string[] = [];
        const { operationId, outcome } = await runMarking(updates, [defineHook({ hook: 'after_update_message', id: 'observe', execute: () => void observed.push('after') })]);
        assert.ok(isHookgateError(outcome.error, 'MESSAGE_UPDATE_INVALID'), `${JSON.stringify(updates).slice(0, 80)}: ${String(outcome.error)}`);
        const message = (outcome.error as Error).message;
        assert.ok(message.length < 600, 'the error echoes names cut short');
        const field = Object.keys(updates).find((k) => k !== 'content')!;
        assert.ok(message.includes(field.slice(0, 64)), message);
        const stored = await fx.kernel.listMessages(operationId);
        assert.deepEqual(stored.map((m) => [m.role, m.content, m.status, m.responseCompletedAt]), [['user', 'question', undefined, undefined], ['assistant', 'answer', undefined, undefined]]);
        assert.deepEqual(observed, []);
      }
    });

    it('a before_update_message hook that adds a field that never changes makes the update refused; nothing is stored', async () => {
      const { operationId, outcome } = await runMarking({ status: 'completed' }, [
        defineHook({ hook: 'before_update_message', id: 'rewire', execute: (_s, _id, u) => ({ ...u, tool_call_id: 'call-hijacked' }) }),
      ]);
      assert.ok(isHookgateError(outcome.error, 'MESSAGE_UPDATE_INVALID'), String(outcome.error));
      assert.match((outcome.error as Error).message, /"tool_call_id" cannot be updated/);
      const stored = await fx.kernel.listMessages(operationId);
      assert.equal(stored[1]!.status, undefined);
    });
  });
}
