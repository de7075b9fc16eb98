import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
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

describe('thread hooks: model request assembly', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const sent = (i: number) => fx.model.requests[i]!.messages.map((m) => [m.role, m.content]);

  it('after_system_message replaces the system message; filter_messages gets one snapshot of stored rows; prefilter_llm_history shapes the request only', async () => {
    const filterCalls: number[] = [];
    const handle = await fx.kernel.execAgent({
      agent: { id: 'assembled', instructions: 'Be brief.', model: scripted([{ toolCalls: [{ identifier: 'test', apiName: 'echo', args: { a: 1 } }] }, { text: 'end' }], { provider: 'recorded' }), tools: ['test/echo'] } as AgentDefinition,
      prompt: 'first',
      threadHooks: [
        defineHook({ hook: 'after_system_message', id: 'dynamic_system', execute: (state, system) => `${system}\nCurrent thread: ${state.threadId}` }),
        defineHook({
          hook: 'filter_messages',
          id: 'count_and_inject',
          execute: async (state, rows) => {
            filterCalls.push(rows.length);
            // Injected during the filter: stored now, seen from the following snapshot on.
            if (filterCalls.length === 1) await state.injectMessage({ role: 'user', content: 'injected during filter' });
            return rows;
          },
        }),
        defineHook({ hook: 'prefilter_llm_history', id: 'stamp', execute: (_s, messages) => [...messages, { role: 'user', content: 'request-only note' }] }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(filterCalls, [1, 4], 'first snapshot: the prompt; second: prompt, injected, assistant call, tool result');
    assert.deepEqual(sent(0), [['system', `Be brief.\nCurrent thread: ${final.threadId}`], ['user', 'first'], ['user', 'request-only note']]);
    assert.deepEqual(sent(1).slice(1, 3), [['user', 'first'], ['user', 'injected during filter']]);
    const contents = (await fx.kernel.listMessages(handle.operationId)).map((m) => m.content);
    assert.ok(!contents.includes('request-only note'), 'prefilter changes stay within the request');
    assert.ok(contents.includes('injected during filter'));
  });

  it('a filter that drops a tool result drops its call too (and the reverse); the provider never gets half a pair; the drop is logged', async () => {
    const handle = await fx.kernel.execAgent({
      agent: { id: 'pairs', model: scripted([{ toolCalls: [{ identifier: 'test', apiName: 'echo', args: {} }] }, { text: 'end' }], { provider: 'recorded' }), tools: ['test/echo'] } as AgentDefinition,
      prompt: 'go',
      threadHooks: [defineHook({ hook: 'filter_messages', id: 'drop_tool_rows', execute: (_s, rows) => rows.filter((r) => r.role !== 'tool') })],
    });
    assert.equal((await handle.completed()).status, 'done');
    const second = fx.model.requests[1]!.messages;
    assert.ok(second.every((m) => m.role !== 'tool' && !(m.toolCalls && m.toolCalls.length > 0)), JSON.stringify(second));
    assert.ok(fx.logs.some((l) => l.msg.startsWith('[Hooks] ✗ filter_messages left a tool call without its result')));
    // The stored history is untouched: the call and its result are both there.
    const stored = await fx.kernel.listMessages(handle.operationId);
    assert.ok(stored.some((m) => m.role === 'tool'));
  });

  it('prefilter_llm_history throwing block: true stores its message as the assistant message and stops with hook_blocked without calling the provider', async () => {
    const handle = await fx.kernel.execAgent({
      agent: { id: 'blocked', model: scripted([{ text: 'never' }], { provider: 'recorded' }) } as AgentDefinition,
      prompt: 'do the forbidden thing',
      threadHooks: [
        defineHook({ hook: 'prefilter_llm_history', id: 'guard', execute: () => { throw Object.assign(new Error('This request is not allowed.'), { block: true }); } }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal(final.reason, 'hook_blocked');
    assert.equal(fx.model.requests.length, 0);
    assert.deepEqual((await fx.kernel.listMessages(handle.operationId)).map((m) => [m.role, m.content]), [['user', 'do the forbidden thing'], ['assistant', 'This request is not allowed.']]);
  });

  it('prefilter_llm_history errors without block are logged and the request goes on with the last good value', async () => {
    const handle = await fx.kernel.execAgent({
      agent: { id: 'kept', model: scripted([{ text: 'answered' }], { provider: 'recorded' }) } as AgentDefinition,
      prompt: 'hello',
      threadHooks: [
        defineHook({ hook: 'prefilter_llm_history', id: 'limit_to_20', execute: (_s, messages) => messages.slice(-20).map((m) => ({ ...m, content: `${String(m.content)} (limited)` })) }),
        defineHook({ hook: 'prefilter_llm_history', id: 'buggy', execute: () => { throw new Error('prefilter bug'); } }),
      ],
    });
    assert.equal((await handle.completed()).status, 'done');
    assert.deepEqual(sent(0), [['user', 'hello (limited)']]);
    assert.ok(fx.logs.some((l) => l.msg.startsWith('[Hooks] ✗') && JSON.stringify(l).includes('prefilter bug')));
  });
});

describe('thread hooks: the hooks folder and the continuing tool result write', () => {
  let fx: RuntimeFixture | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    fx = undefined;
    dir = undefined;
  });

  it('an agent file selects hooks of agents/hooks/ by id; the tool result message is stored with the last good value when a hook throws on it', async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-hooks-folder-')));
    await mkdir(path.join(dir, 'agents', 'hooks'), { recursive: true });
    const threads = pathToFileURL(path.resolve('dist/threads.js')).href;
    await writeFile(path.join(dir, 'agents', 'hooks', 'a-tag.mjs'), `import { defineHook } from ${JSON.stringify(threads)};\nexport default defineHook({ hook: 'before_create_message', id: 'tag_tools', execute: (s, m) => (m.role === 'tool' ? { ...m, content: 'tagged: ' + m.content } : undefined) });\n`);
    await writeFile(path.join(dir, 'agents', 'hooks', 'b-broken.mjs'), `import { defineHook } from ${JSON.stringify(threads)};\nexport default defineHook({ hook: 'before_create_message', id: 'broken_on_tools', execute: (s, m) => { if (m.role === 'tool') throw new Error('tool hook broke'); } });\n`);
    await writeFile(path.join(dir, 'agents', 'hooks', 'c-unselected.mjs'), `import { defineHook } from ${JSON.stringify(threads)};\nexport default defineHook({ hook: 'before_create_message', id: 'unselected', execute: (s, m) => ({ ...m, content: 'SHOULD NOT RUN' }) });\n`);
    fx = await startKernel({ dir, keepDir: true });
    fx.kernel.agents.define({ id: 'filed', model: scripted([{ toolCalls: [{ identifier: 'test', apiName: 'echo', args: { x: 1 } }] }, { text: 'done' }]), tools: ['test/echo'], threadHooks: ['tag_tools', 'broken_on_tools'] } as AgentDefinition);
    const handle = await fx.kernel.execAgent({ agentId: 'filed', prompt: 'go' });
    assert.equal((await handle.completed()).status, 'done');
    const stored = (await fx.kernel.listMessages(handle.operationId)).map((m) => [m.role, m.content]);
    assert.deepEqual(stored, [['user', 'go'], ['assistant', ''], ['tool', 'tagged: echo: {"x":1}'], ['assistant', 'done']]);
    assert.ok(fx.logs.some((l) => l.msg.startsWith('[Hooks] ✗') && JSON.stringify(l).includes('tool hook broke')));
  });
});
