import assert from 'node:assert/strict';
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import { defineHook, type HookExecutionContext, type HookMessage, type ThreadState } from '../../../threads.js';
import { scripted, startKernel, useSqliteRestart, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** Thread hooks wired into the runtime (issue 15 items 4-6): message writes, scoping, ThreadState, error rules, by what the store holds. */
describe('thread hooks: message writes of execAgent agents', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const stored = async (operationId: string) => (await fx.kernel.listMessages(operationId)).map((m) => [m.role, m.content]);
  const hookLogs = () => fx.logs.filter((l) => l.msg.startsWith('[Hooks] ✗'));

  it('before_create_message changes every message before it is stored, in hook order, each getting the previous output; after_create_message sees the stored rows', async () => {
    const seenAfter: HookMessage[] = [];
    const handle = await fx.kernel.execAgent({
      agent: { id: 'tagger', model: scripted([{ text: 'hello' }], { provider: 'recorded' }) } as AgentDefinition,
      prompt: 'hi',
      threadHooks: [
        defineHook({ hook: 'before_create_message', id: 'prefix_user', execute: (_s, m) => (m.role === 'user' ? { ...m, content: `[User] ${m.content}` } : undefined) }),
        defineHook({ hook: 'before_create_message', id: 'shout', execute: (_s, m) => ({ ...m, content: String(m.content).toUpperCase() }) }),
        defineHook({ hook: 'after_create_message', id: 'collect', execute: (_s, m) => void seenAfter.push(m) }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(await stored(handle.operationId), [['user', '[USER] HI'], ['assistant', 'HELLO']]);
    const ids = (await fx.kernel.listMessages(handle.operationId)).map((m) => m.id);
    assert.deepEqual(seenAfter.map((m) => [m.id, m.role, m.content]), [[ids[0], 'user', '[USER] HI'], [ids[1], 'assistant', 'HELLO']]);
    // The model saw what was stored, not the original.
    assert.deepEqual(fx.model.requests[0]?.messages.map((m) => [m.role, m.content]), [['user', '[USER] HI']]);
  });

  it('a prevented sent message stores nothing, starts no turn, and fails the run with message_hook_error', async () => {
    const handle = await fx.kernel.execAgent({
      agent: { id: 'guarded', model: scripted([{ text: 'never' }], { provider: 'recorded' }) } as AgentDefinition,
      prompt: 'secret-ssn 123-45-6789',
      threadHooks: [
        defineHook({ hook: 'before_create_message', id: 'refuse', execute: () => { throw new Error('no SSNs here'); } }),
        defineHook({ hook: 'before_create_message', id: 'never_runs', execute: () => { throw new Error('the second hook ran'); } }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'error');
    assert.equal(final.reason, 'message_hook_error');
    assert.equal(final.error?.code, 'MESSAGE_HOOK_ERROR');
    assert.match(final.error?.message ?? '', /no SSNs here/);
    assert.deepEqual(await stored(handle.operationId), []);
    assert.equal(fx.model.requests.length, 0);
    assert.ok(!JSON.stringify(fx.logs).includes('the second hook ran'));
  });

  it("the model step's message continues with the last good value when a before_create_message hook throws; the failure is logged with [Hooks] ✗", async () => {
    const handle = await fx.kernel.execAgent({
      agent: { id: 'continuing', model: scripted([{ text: 'answer' }]) } as AgentDefinition,
      prompt: 'question',
      threadHooks: [
        defineHook({ hook: 'before_create_message', id: 'add_suffix', execute: (_s, m) => ({ ...m, content: `${m.content}!` }) }),
        defineHook({ hook: 'before_create_message', id: 'broken_for_assistant', execute: (_s, m) => { if (m.role === 'assistant') throw new Error('assistant hook broke'); } }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(await stored(handle.operationId), [['user', 'question!'], ['assistant', 'answer!']]);
    const logged = hookLogs();
    assert.equal(logged.length, 1);
    assert.match(JSON.stringify(logged[0]), /assistant hook broke/);
  });

  it('after_create_message failures leave the stored message intact and the run going', async () => {
    const handle = await fx.kernel.execAgent({
      agent: { id: 'after_fails', model: scripted([{ text: 'fine' }]) } as AgentDefinition,
      prompt: 'go',
      threadHooks: [defineHook({ hook: 'after_create_message', id: 'explode', execute: () => Promise.reject(new Error('post-write boom')) })],
    });
    assert.equal((await handle.completed()).status, 'done');
    assert.deepEqual(await stored(handle.operationId), [['user', 'go'], ['assistant', 'fine']]);
    assert.equal(hookLogs().length, 2);
  });

  it('ThreadState: identity, values, execution null at rest; injectMessage stores through the hooks and rejects with the hook error, storing nothing', async () => {
    const states: Array<{ execution: unknown; threadId: string; agentId: string; userId: string | null }> = [];
    const rejections: string[] = [];
    const handle = await fx.kernel.execAgent({
      agent: { id: 'injector', model: scripted([{ text: 'ok' }]) } as AgentDefinition,
      prompt: 'start',
      userId: 'u-1',
      threadHooks: [
        defineHook({
          hook: 'after_thread_created',
          id: 'init_thread',
          execute: async (state: ThreadState) => {
            states.push({ execution: state.execution, threadId: state.threadId, agentId: state.agentId, userId: state.userId });
            await state.setValue('initialized', { at: 'start' });
            await state.injectMessage({ role: 'system', content: 'Context loaded' });
            try {
              await state.injectMessage({ role: 'system', content: 'FORBIDDEN note' });
            } catch (err) {
              rejections.push((err as Error).message);
            }
          },
        }),
        defineHook({ hook: 'before_create_message', id: 'no_forbidden', execute: (_s, m) => { if (String(m.content).startsWith('FORBIDDEN')) throw new Error('forbidden content'); } }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(states, [{ execution: null, threadId: final.threadId, agentId: 'injector', userId: 'u-1' }]);
    assert.deepEqual(rejections, ['forbidden content']);
    const thread = await fx.kernel.store.getThread(final.threadId);
    assert.deepEqual(thread?.values, { initialized: { at: 'start' } });
    // after_thread_created runs once the thread (with its sent message) is stored, before the first step.
    assert.deepEqual((await fx.kernel.store.listThreadMessages(final.threadId)).map((m) => [m.role, m.content]), [['user', 'start'], ['system', 'Context loaded'], ['assistant', 'ok']]);
    const contents = (await fx.kernel.store.listThreadMessages(final.threadId)).map((m) => m.content);
    assert.ok(contents.includes('Context loaded'));
    assert.ok(!contents.some((c) => c.startsWith('FORBIDDEN')));
  });

  it('scoping: the prompt list runs only its hooks; an unlisted hook never runs; each hook is told its source', async () => {
    const ran: Array<[string, HookExecutionContext['source']]> = [];
    const record = (id: string) => defineHook({ hook: 'after_create_message', id, execute: (_s, _m, context) => void ran.push([id, context.source]) });
    fx.kernel.agents.define({ id: 'helper', model: scripted([{ text: 'sub' }]), parentThreadHooks: ['required_by_child'] } as AgentDefinition);
    const agent = { id: 'scoped', model: scripted([{ text: 'a' }]), subagents: ['helper'] } as AgentDefinition;
    const hooks = [record('agent_hook'), record('prompt_hook'), record('required_by_child'), record('unlisted')];

    const handle = await fx.kernel.execAgent({ agent, prompt: 'p', threadHooks: hooks, promptHooks: ['prompt_hook'] });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    const names = ran.map(([id]) => id);
    assert.ok(!names.includes('unlisted'));
    assert.ok(!names.includes('agent_hook'), 'the prompt lists hooks, so the agent list does not apply');
    assert.deepEqual([...new Set(names)], ['prompt_hook', 'required_by_child']);
    assert.deepEqual(ran.find(([id]) => id === 'prompt_hook')?.[1], { kind: 'prompt', name: handle.operationId });
    assert.deepEqual(ran.find(([id]) => id === 'required_by_child')?.[1], { kind: 'child', name: 'helper', agentId: 'helper' });

    ran.length = 0;
    const agentScoped = await fx.kernel.execAgent({ agent, prompt: 'p', threadHooks: [record('mine'), record('required_by_child')] });
    await agentScoped.completed();
    assert.deepEqual(ran.filter(([id]) => id === 'mine').map(([, s]) => s), [{ kind: 'agent', name: 'scoped' }, { kind: 'agent', name: 'scoped' }]);
  });

  it('a selected id this process has no hook for is refused before anything is stored', async () => {
    await assert.rejects(fx.kernel.execAgent({ agent: { id: 'lost', model: scripted([{ text: 'x' }]), threadHooks: ['nowhere_hook'] } as AgentDefinition, prompt: 'p' }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'THREAD_HOOK_MISSING');
      assert.match(err.message, /nowhere_hook/);
      return true;
    });
    assert.deepEqual(await fx.kernel.listOperations(), []);
  });
});

describe('thread hooks: after a restart', () => {
  const restart = useSqliteRestart();

  it('hooks given in code are stored as ids only; a process that lacks them fails the operation with THREAD_HOOK_MISSING instead of skipping them', async () => {
    const a = await restart.first();
    a.kernel.agents.define({ id: 'parked', model: scripted([{ toolCalls: [{ identifier: 'test', apiName: 'echo', args: {} }] }, { text: 'done' }]), tools: ['test/echo'], approval: { tools: ['test/echo'] } } as AgentDefinition);
    const handle = await a.kernel.execAgent({ agentId: 'parked', prompt: 'p', threadHooks: [defineHook({ hook: 'after_create_message', id: 'code_only', execute: () => undefined })] });
    assert.equal((await handle.settled()).status, 'waiting_approval');
    const stateA = await a.kernel.getOperation(handle.operationId);
    assert.deepEqual(stateA?.state.threadHooks, { code: ['code_only'] });
    await a.cleanup();
    const b = await restart.next();
    b.kernel.agents.define({ id: 'parked', model: scripted([{ text: 'done' }]), tools: ['test/echo'], approval: { tools: ['test/echo'] } } as AgentDefinition);
    const final = await (await b.kernel.approve(handle.operationId)).completed();
    assert.equal(final.status, 'error');
    assert.equal(final.error?.code, 'THREAD_HOOK_MISSING');
    assert.match(final.error?.message ?? '', /code_only/);
  });
});
