import assert from 'node:assert/strict';
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import { isHookgateError } from '../../../kernel/errors.js';
import { defineHook, type HookExecutionContext, type HookMessage, type ThreadState } from '../../../threads.js';
import { scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** before/after_update_message around ThreadState.updateMessage, and after_subagent_created (issue 15), by what the store holds. */
for (const store of ['memory', 'sqlite'] as const) {
  describe(`thread hooks: message updates and sub-agent threads of execAgent agents (${store} store)`, () => {
    let fx: RuntimeFixture;

    beforeEach(async () => {
      fx = await startKernel(store === 'sqlite' ? { store: 'sqlite' } : {});
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    const stored = async (operationId: string) => (await fx.kernel.listMessages(operationId)).map((m) => [m.role, m.content]);
    const hookLogs = () => fx.logs.filter((l) => l.msg.startsWith('[Hooks] ✗'));

    /** Runs an agent whose after_create_message hook updates the sent message once with `updates`, keeping what happened. */
    async function runUpdating(updates: Record<string, unknown>, hooks: ReturnType<typeof defineHook>[], messageId?: (m: HookMessage) => string) {
      const outcome: { result?: HookMessage; error?: unknown } = {};
      const handle = await fx.kernel.execAgent({
        agent: { id: 'editor', model: scripted([{ text: 'answer' }], { provider: 'recorded' }) } as AgentDefinition,
        prompt: 'draft',
        threadHooks: [
          defineHook({
            hook: 'after_create_message',
            id: 'edit_prompt',
            execute: async (state: ThreadState, m) => {
              if (m.role !== 'user') return;
              try {
                outcome.result = await state.updateMessage(messageId ? messageId(m) : m.id, updates);
              } catch (err) {
                outcome.error = err;
              }
            },
          }),
          ...hooks,
        ],
      });
      const final = await handle.completed();
      return { handle, final, outcome };
    }

    it('updateMessage stores the change after before_update_message hooks ran in order (each gets the previous output, null keeps); after_update_message sees the stored row; the model gets the new content', async () => {
      const seen: Array<[string, string, Record<string, unknown>]> = [];
      const after: HookMessage[] = [];
      const { handle, final, outcome } = await runUpdating({ content: 'final' }, [
        defineHook({ hook: 'before_update_message', id: 'first', execute: (_s, id, u) => { seen.push(['first', id, { ...u }]); return { ...u, content: `${String(u.content)} [1]` }; } }),
        defineHook({ hook: 'before_update_message', id: 'keeps', execute: (_s, id, u) => { seen.push(['keeps', id, { ...u }]); return null; } }),
        defineHook({ hook: 'before_update_message', id: 'second', execute: (_s, id, u) => { seen.push(['second', id, { ...u }]); u.content = `${String(u.content)} [2]`; return u; } }),
        defineHook({ hook: 'after_update_message', id: 'observe', execute: (_s, m) => void after.push(m) }),
      ]);
      assert.equal(final.status, 'done');
      const messages = await fx.kernel.listMessages(handle.operationId);
      const promptId = messages[0]!.id;
      assert.deepEqual(await stored(handle.operationId), [['user', 'final [1] [2]'], ['assistant', 'answer']]);
      assert.deepEqual(seen, [['first', promptId, { content: 'final' }], ['keeps', promptId, { content: 'final [1]' }], ['second', promptId, { content: 'final [1]' }]]);
      assert.deepEqual(after.map((m) => [m.id, m.role, m.content]), [[promptId, 'user', 'final [1] [2]']]);
      assert.deepEqual([outcome.result?.id, outcome.result?.content], [promptId, 'final [1] [2]']);
      assert.deepEqual(fx.model.requests[0]?.messages.map((m) => [m.role, m.content]), [['user', 'final [1] [2]']]);
    });

    it('a throwing before_update_message prevents the update and the remaining hooks of that type: updateMessage rejects with its error, nothing is stored, after_update_message does not run', async () => {
      const ran: string[] = [];
      const { handle, final, outcome } = await runUpdating({ content: 'leaked secret' }, [
        defineHook({ hook: 'before_update_message', id: 'refuse', execute: () => { ran.push('refuse'); throw new Error('no secrets in updates'); } }),
        defineHook({ hook: 'before_update_message', id: 'never_runs', execute: () => { ran.push('never_runs'); } }),
        defineHook({ hook: 'after_update_message', id: 'never_observes', execute: () => void ran.push('after') }),
      ]);
      assert.equal(final.status, 'done');
      assert.equal((outcome.error as Error)?.message, 'no secrets in updates');
      assert.deepEqual(ran, ['refuse']);
      assert.deepEqual(await stored(handle.operationId), [['user', 'draft'], ['assistant', 'answer']]);
      assert.equal(fx.model.requests[0]?.messages[0]?.content, 'draft');
    });

    it('a hook returning something that is not an update object rejects (THREAD_HOOK_INVALID), storing nothing', async () => {
      const { handle, outcome } = await runUpdating({ content: 'x' }, [defineHook({ hook: 'before_update_message', id: 'wrong_type', execute: () => 'not an object' as never })]);
      assert.ok(isHookgateError(outcome.error, 'THREAD_HOOK_INVALID'), String(outcome.error));
      assert.deepEqual(await stored(handle.operationId), [['user', 'draft'], ['assistant', 'answer']]);
    });

    it('after_update_message failures are logged with [Hooks] ✗ and leave the stored update intact', async () => {
      const { handle, final, outcome } = await runUpdating({ content: 'kept' }, [defineHook({ hook: 'after_update_message', id: 'explode', execute: () => Promise.reject(new Error('post-update boom')) })]);
      assert.equal(final.status, 'done');
      assert.equal(outcome.result?.content, 'kept');
      assert.deepEqual(await stored(handle.operationId), [['user', 'kept'], ['assistant', 'answer']]);
      assert.equal(hookLogs().length, 1);
      assert.match(JSON.stringify(hookLogs()[0]), /post-update boom/);
    });

    it('fields that cannot change (role, id) are refused with MESSAGE_UPDATE_INVALID, also when a hook adds one; nothing is stored', async () => {
      const first = await runUpdating({ role: 'system', content: 'x' }, []);
      assert.ok(isHookgateError(first.outcome.error, 'MESSAGE_UPDATE_INVALID'), String(first.outcome.error));
      assert.match((first.outcome.error as Error).message, /"role" cannot be updated/);
      assert.deepEqual(await stored(first.handle.operationId), [['user', 'draft'], ['assistant', 'answer']]);
      const second = await runUpdating({ content: 'y' }, [defineHook({ hook: 'before_update_message', id: 'adds_id', execute: (_s, _id, u) => ({ ...u, id: 'hijacked' }) })]);
      assert.ok(isHookgateError(second.outcome.error, 'MESSAGE_UPDATE_INVALID'), String(second.outcome.error));
      assert.deepEqual(await stored(second.handle.operationId), [['user', 'draft'], ['assistant', 'answer']]);
    });

    it("another thread's message cannot be updated (STORE_NOT_FOUND) and stays as it was", async () => {
      const other = await fx.kernel.execAgent({ agent: { id: 'other', model: scripted([{ text: 'mine' }]) } as AgentDefinition, prompt: 'not yours' });
      await other.completed();
      const otherId = (await fx.kernel.listMessages(other.operationId))[0]!.id;
      const { outcome } = await runUpdating({ content: 'hijack' }, [], () => otherId);
      assert.ok(isHookgateError(outcome.error, 'STORE_NOT_FOUND'), String(outcome.error));
      assert.deepEqual(await stored(other.operationId), [['user', 'not yours'], ['assistant', 'mine']]);
    });

    it("after_subagent_created runs once on the parent's thread right after the child's thread is created, with the child's ThreadState", async () => {
      const calls: Array<{ parentThread: string; childThread: string; childAgent: string; childMessages: unknown[]; source: HookExecutionContext['source'] }> = [];
      fx.kernel.agents.define({ id: 'child', model: scripted([{ text: 'child answer' }]) });
      fx.kernel.agents.define({ id: 'parent', subagents: ['child'], model: scripted([toolTurn('agents', 'child', { instruction: 'summarize' }, 'call-sub'), { text: 'parent done' }]) });
      const handle = await fx.kernel.execAgent({
        agentId: 'parent',
        prompt: 'go',
        threadHooks: [
          defineHook({
            hook: 'after_subagent_created',
            id: 'track_child',
            execute: async (state, childState, context) => {
              const childMessages = (await childState.getMessages()).messages.map((m) => [m.role, m.content]);
              calls.push({ parentThread: state.threadId, childThread: childState.threadId, childAgent: childState.agentId, childMessages, source: context.source });
              await state.setValue('last_child_thread_id', childState.threadId);
            },
          }),
        ],
      });
      const final = await handle.completed();
      assert.equal(final.status, 'done');
      const [child] = await fx.kernel.listOperations({ parentOperationId: handle.operationId });
      assert.ok(child);
      assert.equal(calls.length, 1);
      // The child runs meanwhile (it may have answered already): its thread starts with the instruction.
      assert.deepEqual({ ...calls[0], childMessages: calls[0]!.childMessages.slice(0, 1) }, { parentThread: final.threadId, childThread: child.threadId, childAgent: 'child', childMessages: [['user', 'summarize']], source: { kind: 'agent', name: 'parent' } });
      assert.notEqual(child.threadId, final.threadId);
      assert.equal((await fx.kernel.store.getThread(final.threadId))?.values.last_child_thread_id, child.threadId);
      assert.equal((await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool')?.content, 'child answer');
    });

    it('a failing after_subagent_created is logged and changes nothing: the child runs and answers the call', async () => {
      fx.kernel.agents.define({ id: 'child', model: scripted([{ text: 'child answer' }]) });
      fx.kernel.agents.define({ id: 'parent', subagents: ['child'], model: scripted([toolTurn('agents', 'child', { instruction: 'summarize' }, 'call-sub'), { text: 'parent done' }]) });
      const handle = await fx.kernel.execAgent({
        agentId: 'parent',
        prompt: 'go',
        threadHooks: [defineHook({ hook: 'after_subagent_created', id: 'broken', execute: () => { throw new Error('child tracking broke'); } })],
      });
      assert.equal((await handle.completed()).status, 'done');
      assert.equal((await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool')?.content, 'child answer');
      assert.equal(hookLogs().length, 1);
      assert.match(JSON.stringify(hookLogs()[0]), /child tracking broke/);
    });
  });
}
