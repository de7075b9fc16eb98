import assert from 'node:assert/strict';
import * as v from 'valibot';
import { z } from 'zod';
import { HookgateError } from '../../../kernel/errors.js';
import { defineHook, defineTool, isThreadHookDefinition, THREAD_HOOK_VOCABULARY, ThreadHookSet, USER_SCOPE_HOOKS } from '../../../threads.js';

function refusal(fn: () => unknown, pattern: RegExp, field?: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof HookgateError, `expected a HookgateError, got ${String(err)}`);
    assert.equal(err.code, 'THREAD_HOOK_INVALID');
    assert.match(err.message, pattern);
    if (field !== undefined) assert.equal(err.details.field, field);
    return true;
  });
}

describe('thread hooks: defineHook', () => {
  it('declares every hook of the reference, the user-scope ones marked', () => {
    assert.deepEqual([...THREAD_HOOK_VOCABULARY.names], [
      'after_thread_created', 'after_subagent_created', 'after_system_message', 'filter_messages', 'prefilter_llm_history',
      'before_create_message', 'after_create_message', 'before_update_message', 'after_update_message', 'before_store_tool_result',
      'after_tool_call_success', 'after_tool_call_failure', 'tool_call_started', 'tool_call_done',
      'user_client_attached', 'user_client_detached', 'user_value_changed',
    ]);
    assert.deepEqual([...USER_SCOPE_HOOKS].sort(), ['user_client_attached', 'user_client_detached', 'user_value_changed']);
    // The pre-write hooks stop the write on a throw; prefilter_llm_history only for block: true.
    assert.equal(THREAD_HOOK_VOCABULARY.hooks.before_create_message.onError, 'propagate');
    assert.equal(THREAD_HOOK_VOCABULARY.hooks.before_update_message.onError, 'propagate');
    const rule = THREAD_HOOK_VOCABULARY.hooks.prefilter_llm_history.onError as (e: unknown) => string;
    assert.equal(rule(Object.assign(new Error('stop'), { block: true })), 'propagate');
    assert.equal(rule(new Error('oops')), 'keep');
    assert.equal(rule({ block: 'yes' }), 'keep');
  });

  it('returns the definition frozen, and the same object when given one', () => {
    const hook = defineHook({ hook: 'filter_messages', id: 'my_filter', execute: (_s, rows) => rows });
    assert.ok(Object.isFrozen(hook));
    assert.equal(hook.hook, 'filter_messages');
    assert.equal(hook.id, 'my_filter');
    assert.ok(isThreadHookDefinition(hook));
    assert.equal(defineHook(hook as unknown), hook);
    assert.equal(isThreadHookDefinition({ ...hook }), false);
  });

  it('refuses an unknown hook name with a did-you-mean and the declared names', () => {
    refusal(() => defineHook({ hook: 'filter_message', id: 'x', execute: () => undefined } as never), /unknown hook type "filter_message".*did you mean "filter_messages"\?.*after_thread_created/, 'hook');
    refusal(() => defineHook({ hook: 'beforeToolCall', id: 'x', execute: () => undefined } as never), /not a hook of the thread vocabulary/, 'hook');
    refusal(() => defineHook({ id: 'x', execute: () => undefined } as never), /unknown hook type undefined/, 'hook');
    refusal(() => defineHook({ hook: '__proto__', id: 'x', execute: () => undefined } as never), /unknown hook type "__proto__"/, 'hook');
  });

  it('refuses ids that are not snake_case, naming the id escaped', () => {
    for (const id of ['MyFilter', 'my-filter', '_leading', 'trailing_', 'double__underscore', '9lives', '', 'a'.repeat(129), 'has space', 'line\nbreak']) {
      refusal(() => defineHook({ hook: 'filter_messages', id, execute: () => undefined }), /is not a snake_case id/, 'id');
    }
    refusal(() => defineHook({ hook: 'filter_messages', id: 'line\nbreak', execute: () => undefined }), /"line\\nbreak"/);
    refusal(() => defineHook({ hook: 'filter_messages', id: 42, execute: () => undefined } as never), /number is not a snake_case id/, 'id');
    assert.equal(defineHook({ hook: 'filter_messages', id: 'a'.repeat(128), execute: () => undefined }).id.length, 128);
    assert.equal(defineHook({ hook: 'filter_messages', id: 'limit_to_20', execute: () => undefined }).id, 'limit_to_20');
  });

  it('refuses a missing execute, unknown keys and non-objects', () => {
    refusal(() => defineHook({ hook: 'filter_messages', id: 'x' } as never), /hook "x": execute must be a function/, 'execute');
    refusal(() => defineHook({ hook: 'filter_messages', id: 'x', execute: () => undefined, matcher: 'read' } as never), /"matcher": unknown field/, 'matcher');
    refusal(() => defineHook(null as never), /expected \{ hook, id, execute \}, got null/);
    refusal(() => defineHook([] as never), /got an array/);
    refusal(() => defineHook('filter_messages' as never), /got string/);
  });

  it('names the file when given one', () => {
    refusal(() => defineHook({ hook: 'nope', id: 'x', execute: () => undefined }, '/srv/agents/hooks/a.js'), /^\/srv\/agents\/hooks\/a\.js: defineHook hook: unknown hook type "nope"/);
  });
});

describe('thread hooks: ThreadHookSet', () => {
  const a = defineHook({ hook: 'before_create_message', id: 'first', execute: (_s, m) => m });
  const b = defineHook({ hook: 'before_create_message', id: 'second', execute: (_s, m) => m });
  const c = defineHook({ hook: 'tool_call_done', id: 'third', execute: () => undefined });

  it('keeps the order given, per hook type', () => {
    const set = new ThreadHookSet([{ definition: b, source: '/h/b.js' }, { definition: c, source: 'code' }, { definition: a, source: '/h/a.js' }]);
    assert.deepEqual(set.ids(), ['second', 'third', 'first']);
    assert.deepEqual(set.forHook('before_create_message').map((h) => h.id), ['second', 'first']);
    assert.deepEqual(set.forHook('filter_messages'), []);
    assert.equal(set.get('third')?.source, 'code');
    assert.equal(set.size, 3);
  });

  it('refuses two hooks with one id, naming both sources', () => {
    const twin = defineHook({ hook: 'filter_messages', id: 'first', execute: (_s, r) => r });
    assert.throws(
      () => new ThreadHookSet([{ definition: a, source: '/h/a.js' }, { definition: twin, source: '/h/z.js' }]),
      (err: unknown) => err instanceof HookgateError && err.code === 'THREAD_HOOK_INVALID' && /duplicate thread hook id "first": defined in \/h\/a\.js and in \/h\/z\.js/.test(err.message),
    );
  });

  it('validates plain objects it is given', () => {
    assert.throws(() => new ThreadHookSet([{ definition: { hook: 'x', id: 'y', execute: () => undefined } as never, source: '/h/x.js' }]), /\/h\/x\.js: defineHook hook: unknown hook type "x"/);
  });
});

describe('thread hooks: defineTool (args, progressArgument)', () => {
  const execute = (): { status: 'success'; result: string } => ({ status: 'success', result: 'ok' });

  it('takes a zod object schema and gives its JSON Schema', () => {
    const tool = defineTool({ description: 'Write a file', progressArgument: 'description', args: z.object({ description: z.string(), path: z.string() }), execute });
    assert.ok(Object.isFrozen(tool) && Object.isFrozen(tool.parameters));
    assert.equal(tool.parameters.type, 'object');
    assert.deepEqual(Object.keys(tool.parameters.properties as object), ['description', 'path']);
    assert.equal('$schema' in tool.parameters, false);
    assert.equal(tool.progressArgument, 'description');
  });

  it('takes a valibot object schema', () => {
    const tool = defineTool({ description: 'Look up', args: v.object({ id: v.number() }), execute });
    assert.deepEqual(tool.parameters.required, ['id']);
    assert.equal(tool.progressArgument, undefined);
  });

  it('refuses a progressArgument that is missing or not a string argument', () => {
    refusal(() => defineTool({ description: 'd', progressArgument: 'nope', args: z.object({ a: z.string() }), execute }), /progressArgument: "nope" is not a property of args/, 'progressArgument');
    refusal(() => defineTool({ description: 'd', progressArgument: 'n', args: z.object({ n: z.number() }), execute }), /"n" must be a string argument \(it is "number"\)/, 'progressArgument');
    refusal(() => defineTool({ description: 'd', progressArgument: 7 as never, args: z.object({ n: z.string() }), execute }), /7 is not a property of args/, 'progressArgument');
  });

  it('refuses args that are not an object schema, and other bad fields', () => {
    refusal(() => defineTool({ description: 'd', args: z.string() as never, execute }), /args: must be an object schema/, 'args');
    refusal(() => defineTool({ description: 'd', args: { type: 'object' } as never, execute }), /args: must be a valibot or zod object schema/, 'args');
    refusal(() => defineTool({ description: '  ', args: z.object({}), execute }), /description: must be a non-empty string/, 'description');
    refusal(() => defineTool({ description: 'd', args: z.object({}), execute: 'x' as never }), /execute: must be a function/, 'execute');
    refusal(() => defineTool({ description: 'd', args: z.object({}), execute, run: execute } as never), /"run": unknown field/, 'run');
  });
});

describe('thread hooks: the hookgate/threads entry', () => {
  it('is its own package entry, and the root keeps the agent API defineTool', async () => {
    const threads = (await import('hookgate/threads')) as Record<string, unknown>;
    const root = (await import('hookgate')) as Record<string, unknown>;
    assert.equal(threads.defineHook, defineHook);
    assert.equal(threads.defineTool, defineTool);
    assert.equal(typeof root.defineTool, 'function');
    assert.notEqual(root.defineTool, threads.defineTool);
    assert.equal(root.defineHook, undefined);
  });
});
