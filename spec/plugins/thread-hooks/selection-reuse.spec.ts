import assert from 'node:assert/strict';
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import type { ThreadHookHost, ThreadHookLike } from '../../../kernel/runtime/thread-hooks-port.js';
import type { OperationRecord } from '../../../kernel/store.js';
import { ThreadHooks } from '../../../kernel/tokens.js';
import { prepareThreadHooks } from '../../../plugins/thread-hooks/thread-hook-chain.js';
import { MISS, ThreadHookSelectionCache } from '../../../plugins/thread-hooks/thread-hook-selection-cache.js';
import type { ThreadHooksRuntime } from '../../../plugins/thread-hooks/index.js';
import { defineHook, type HookExecutionContext } from '../../../threads.js';
import { scripted, startKernel, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/**
 * An agent's selection of thread hooks is worked out once and reused by its
 * next operations (issue 15's bench): every way the selection can change
 * must still change what runs, and a hook that is not a defineHook result
 * must still be validated by every execAgent.
 */
describe('thread hooks: a selection reused across operations', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const recorder = (ran: Array<[string, string, HookExecutionContext['source']]>, id: string) =>
    defineHook({ hook: 'after_create_message', id, execute: (state, m, context) => void ran.push([id, state.threadId, context.source]) });

  it('operations of one agent with the same code hooks each run them on their own thread, also side by side', async () => {
    const ran: Array<[string, string, HookExecutionContext['source']]> = [];
    fx.kernel.agents.define({ id: 'repeat', model: scripted([{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }]) } as AgentDefinition);
    const hooks = [recorder(ran, 'seen')];
    const first = await (await fx.kernel.execAgent({ agentId: 'repeat', prompt: 'one', threadHooks: hooks })).completed();
    const second = await (await fx.kernel.execAgent({ agentId: 'repeat', prompt: 'two', threadHooks: hooks })).completed();
    const [third, fourth] = await Promise.all([
      fx.kernel.execAgent({ agentId: 'repeat', prompt: 'three', threadHooks: hooks }).then((h) => h.completed()),
      fx.kernel.execAgent({ agentId: 'repeat', prompt: 'four', threadHooks: hooks }).then((h) => h.completed()),
    ]);
    for (const final of [first, second, third, fourth]) {
      assert.equal(final.status, 'done');
      const stored = await fx.kernel.store.listThreadMessages(final.threadId);
      assert.equal(stored.length, 2);
      // Each operation's hooks saw its own two messages, once each: no scope registered twice or dropped by another's close.
      assert.equal(ran.filter(([, threadId]) => threadId === final.threadId).length, 2, `thread ${final.threadId}`);
    }
    assert.equal(ran.length, 8);
    assert.ok(ran.every(([, , source]) => source.kind === 'agent' && source.name === 'repeat'));
  });

  it('a plain-object code hook changed between two operations is validated again (THREAD_HOOK_INVALID, nothing stored)', async () => {
    fx.kernel.agents.define({ id: 'plain', model: scripted([{ text: 'a' }, { text: 'b' }]) } as AgentDefinition);
    const plain = { hook: 'after_create_message', id: 'plain_hook', execute: () => undefined } as ThreadHookLike & { id: string };
    assert.equal((await (await fx.kernel.execAgent({ agentId: 'plain', prompt: 'one', threadHooks: [plain] })).completed()).status, 'done');
    const before = (await fx.kernel.listOperations()).length;
    plain.id = 'Not Snake Case';
    await assert.rejects(fx.kernel.execAgent({ agentId: 'plain', prompt: 'two', threadHooks: [plain] }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'THREAD_HOOK_INVALID');
      assert.match(err.message, /Not Snake Case/);
      return true;
    });
    assert.equal((await fx.kernel.listOperations()).length, before);
  });

  it('another hook list, a hook added to the agent in code, and a sub-agent defined again each change what the next operation runs', async () => {
    const ran: Array<[string, string, HookExecutionContext['source']]> = [];
    const names = () => ran.splice(0).map(([id]) => id);
    fx.kernel.agents.define({ id: 'child', model: scripted([{ text: 'c' }]), parentThreadHooks: ['from_child_one'] } as AgentDefinition);
    fx.kernel.agents.define({ id: 'changing', model: scripted([{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }]), subagents: ['child'] } as AgentDefinition);
    const runtime = fx.kernel.resolve(ThreadHooks) as ThreadHooksRuntime;
    // The sub-agent's required hooks come from the hooks folder: known to every operation, run only when selected.
    runtime.setFolderHooks(['from_child_one', 'from_child_two'].map((id) => ({ definition: recorder(ran, id), source: `/hooks/${id}.js` })));
    const first = recorder(ran, 'first_hook');
    const second = recorder(ran, 'second_hook');
    const run = async (threadHooks: readonly ReturnType<typeof recorder>[]) => assert.equal((await (await fx.kernel.execAgent({ agentId: 'changing', prompt: 'p', threadHooks: [...threadHooks] })).completed()).status, 'done');

    await run([first]);
    assert.deepEqual(new Set(names()), new Set(['first_hook', 'from_child_one']));
    await run([second]);
    assert.deepEqual(new Set(names()), new Set(['second_hook', 'from_child_one']));

    runtime.addAgentHooks('changing', [recorder(ran, 'added_later')], 'code');
    await run([second]);
    assert.deepEqual(new Set(names()), new Set(['second_hook', 'from_child_one', 'added_later']));

    fx.kernel.agents.define({ id: 'child', model: scripted([{ text: 'c' }]), parentThreadHooks: ['from_child_two'] } as AgentDefinition);
    await run([second]);
    assert.deepEqual(new Set(names()), new Set(['second_hook', 'from_child_two', 'added_later']));

    runtime.setFolderHooks([]);
    await assert.rejects(fx.kernel.execAgent({ agentId: 'changing', prompt: 'p', threadHooks: [second] }), /from_child_two/, 'the folder no longer has the required hook');
  });

  it('prompt hooks are selected per operation: each is told its own operation', async () => {
    const ran: Array<[string, string, HookExecutionContext['source']]> = [];
    fx.kernel.agents.define({ id: 'prompted', model: scripted([{ text: 'a' }, { text: 'b' }]) } as AgentDefinition);
    const hooks = [recorder(ran, 'by_prompt')];
    const ops: string[] = [];
    for (const prompt of ['one', 'two']) {
      const handle = await fx.kernel.execAgent({ agentId: 'prompted', prompt, threadHooks: hooks, promptHooks: ['by_prompt'] });
      await handle.completed();
      ops.push(handle.operationId);
    }
    assert.deepEqual([...new Set(ran.map(([, , source]) => JSON.stringify(source)))], ops.map((id) => JSON.stringify({ kind: 'prompt', name: id })));
  });
});

describe('ThreadHookSelectionCache', () => {
  const agent = Object.freeze({ id: 'cached', model: 'm' }) as unknown as AgentDefinition;
  const hookA = defineHook({ hook: 'after_create_message', id: 'hook_a', execute: () => undefined });
  const hookB = defineHook({ hook: 'after_create_message', id: 'hook_b', execute: () => undefined });
  const known = { folder: Object.freeze([]), own: undefined };
  const host = (codeHooks: readonly ThreadHookLike[], threadHooks: OperationRecord['state']['threadHooks'], theAgent = agent): ThreadHookHost =>
    ({ record: { id: `op-${Math.random()}`, state: { threadHooks } }, codeHooks, agent: () => theAgent, agentDefinition: () => undefined }) as unknown as ThreadHookHost;
  const prepared = prepareThreadHooks([{ definition: hookA, context: Object.freeze({ source: Object.freeze({ kind: 'agent' as const, name: 'cached' }) }) }]);

  it('answers what was remembered for the next operation with the same inputs, a miss for any change', () => {
    const cache = new ThreadHookSelectionCache();
    assert.equal(cache.lookup(host([hookA], { code: ['hook_a'] }), agent, known), MISS);
    cache.remember(host([hookA], { code: ['hook_a'] }), agent, known, prepared);
    assert.equal(cache.lookup(host([hookA], { code: ['hook_a'] }), agent, known), prepared);
    assert.equal(cache.lookup(host([hookB], { code: ['hook_a'] }), agent, known), MISS, 'other code hooks');
    assert.equal(cache.lookup(host([hookA, hookB], { code: ['hook_a'] }), agent, known), MISS, 'more code hooks');
    assert.equal(cache.lookup(host([hookA], { code: ['hook_b'] }), agent, known), MISS, 'other stored ids');
    assert.equal(cache.lookup(host([hookA], { code: ['hook_a'], prompt: ['hook_a'] }), agent, known), MISS, 'prompt hooks');
    assert.equal(cache.lookup(host([hookA], { code: ['hook_a'] }), Object.freeze({ ...agent }), known), MISS, 'another definition');
    assert.equal(cache.lookup(host([hookA], { code: ['hook_a'] }), agent, { folder: Object.freeze([]), own: undefined }), MISS, 'another folder list');
    cache.forget('cached');
    assert.equal(cache.lookup(host([hookA], { code: ['hook_a'] }), agent, known), MISS, 'forgotten');
  });

  it('remembers nothing for prompt hooks, hooks that are not defineHook results, or an agent that is not frozen', () => {
    const cache = new ThreadHookSelectionCache();
    const plain = { hook: 'after_create_message', id: 'hook_a', execute: () => undefined };
    cache.remember(host([hookA], { prompt: ['hook_a'] }), agent, known, prepared);
    assert.equal(cache.lookup(host([hookA], undefined), agent, known), MISS);
    cache.remember(host([plain], undefined), agent, known, prepared);
    assert.equal(cache.lookup(host([plain], undefined), agent, known), MISS);
    const open = { id: 'cached', model: 'm' } as unknown as AgentDefinition;
    cache.remember(host([hookA], undefined, open), open, known, prepared);
    assert.equal(cache.lookup(host([hookA], undefined, open), open, known), MISS);
  });
});
