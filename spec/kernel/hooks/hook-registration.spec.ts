import assert from 'node:assert/strict';
import { HookDispatcher } from '../../../kernel/hooks/hook-dispatcher.js';
import type { AgentHook, AfterStepEvent } from '../../../kernel/hooks/hook-types.js';
import { createLogger } from '../../../kernel/logger.js';
import { hook, scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

const USAGE = { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 };

function afterStepEvent(operationId: string): AfterStepEvent {
  return { operationId, agentId: 'a', stepIndex: 0, timestamp: new Date().toISOString(), stepType: 'call_llm', usage: USAGE, totalUsage: USAGE };
}

/** Registration: whole-batch validation, snapshots, and the HookDispatcher registration API (issue 3 item 2). */
describe('hook registration', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
    fx.kernel.agents.define({ id: 'worker', tools: ['test/*'], model: scripted([toolTurn('test', 'echo'), { text: 'done' }]) });
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  describe('batch validation through execAgent: nothing registered, nothing stored', () => {
    const valid = (calls: string[]) => hook('beforeStep', () => calls.push('valid hook ran'));
    const cases: Array<[string, (calls: string[]) => unknown[], RegExp]> = [
      ['an unknown hook type', (c) => [valid(c), { id: 'bad', type: 'beforeEverything', handler: () => undefined }], /unknown hook type "beforeEverything"/],
      ['a handler that is not a function', (c) => [valid(c), { id: 'bad', type: 'afterStep', handler: 'console.log' }], /handler: expected a function/],
      ['a hook with neither handler nor webhook', (c) => [valid(c), { id: 'bad', type: 'afterStep' }], /needs a handler or a webhook/],
      ['an invalid matcher', (c) => [valid(c), { id: 'bad', type: 'beforeToolCall', matcher: '(fs', handler: () => undefined }], /matcher.*not a valid regular expression/],
      ['a matcher on a non-tool event', (c) => [valid(c), { id: 'bad', type: 'afterStep', matcher: '^fs/', handler: () => undefined }], /matchers are only allowed on beforeToolCall, afterToolCall, onToolCallError/],
      // Issue 9, item 15: even the match-everything spellings are a matcher on another type.
      ['an empty matcher on a non-tool event', (c) => [valid(c), { id: 'bad', type: 'onComplete', matcher: '', handler: () => undefined }], /matcher: matchers are only allowed on beforeToolCall, afterToolCall, onToolCallError, not on onComplete/],
      ['a "*" matcher on a non-tool event', (c) => [valid(c), { id: 'bad', type: 'beforeStep', matcher: '*', handler: () => undefined }], /matcher: matchers are only allowed on beforeToolCall, afterToolCall, onToolCallError, not on beforeStep/],
      // Issue 9, item 16: a control is decided by its webhook; a handler beside it would never run.
      [
        'a control hook that also has a handler',
        (c) => [valid(c), { id: 'bad', type: 'beforeToolCall', handler: () => undefined, webhook: { url: 'http://127.0.0.1:9/gate', responseHandling: 'toolCall' } }],
        /"bad"\.handler: a control hook \(webhook\.responseHandling: "toolCall"\) cannot also have a handler/,
      ],
      ['two hooks with one id', (c) => [valid(c), { id: 'twice', type: 'afterStep', handler: () => undefined }, { id: 'twice', type: 'onComplete', handler: () => undefined }], /"twice"\.id: duplicate hook id/],
    ];
    for (const [what, hooks, message] of cases) {
      it(`rejects ${what} with HOOK_INVALID naming the hook, and creates no operation`, async () => {
        const calls: string[] = [];
        await assert.rejects(
          fx.kernel.execAgent({ agentId: 'worker', prompt: 'go', hooks: hooks(calls) as AgentHook[] }),
          (err: Error & { code?: string }) => {
            assert.equal(err.code, 'HOOK_INVALID');
            assert.match(err.message, /hooks\[[12]\]/);
            assert.match(err.message, message);
            return true;
          },
        );
        assert.deepEqual(await fx.kernel.listOperations(), []);
        await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(calls, [], 'the valid hook of the rejected batch never runs');
        assert.equal(fx.tools.calls.length, 0);
      });
    }
  });

  it('a rejected batch leaves an earlier registration of the operation unchanged', () => {
    fx.kernel.hooks.register('op-keep', [hook('afterStep', () => undefined)]);
    assert.throws(() => fx.kernel.hooks.register('op-keep', [hook('beforeStep', () => undefined), { id: 'x', type: 'nope' } as unknown as AgentHook]), /HOOK_INVALID|unknown hook type/);
    assert.equal(fx.kernel.hooks.hasHooks('op-keep', 'afterStep'), true);
    assert.equal(fx.kernel.hooks.hasHooks('op-keep', 'beforeStep'), false);
  });

  it('snapshots each hook: mutating the caller\'s hook objects or list after execAgent changes nothing', async () => {
    fx.kernel.agents.define({ id: 'slow', model: scripted([{ text: 'done', delayMs: 40 }]) });
    const original: string[] = [];
    const replaced: string[] = [];
    const h = hook('afterStep', () => original.push('afterStep'), { id: 'observer' }) as AgentHook & Record<string, unknown>;
    const list: AgentHook[] = [h];
    const handle = await fx.kernel.execAgent({ agentId: 'slow', prompt: 'go', hooks: list });
    h.handler = () => replaced.push('mutated handler');
    h.type = 'beforeStep';
    list.push(hook('onComplete', () => replaced.push('added hook')));
    await handle.completed();
    assert.deepEqual(original, ['afterStep']);
    assert.deepEqual(replaced, []);
  });

  it('snapshots reach sub-agents too: a child operation gets the hooks as they were at execAgent', async () => {
    fx.kernel.agents.define({ id: 'child', model: scripted([{ text: 'child answer' }]) });
    fx.kernel.agents.define({
      id: 'parent',
      subagents: ['child'],
      model: scripted([{ ...toolTurn('agents', 'child', { instruction: 'do it' }), delayMs: 40 }, { text: 'parent done' }]),
    });
    const original: string[] = [];
    const replaced: string[] = [];
    const h = hook('onComplete', (e) => original.push(e.agentId), { id: 'observer' }) as AgentHook & Record<string, unknown>;
    const handle = await fx.kernel.execAgent({ agentId: 'parent', prompt: 'go', hooks: [h] });
    h.handler = () => replaced.push('mutated');
    await handle.completed();
    assert.deepEqual(original.sort(), ['child', 'parent']);
    assert.deepEqual(replaced, []);
  });

  it('register / hasHooks / unregister', () => {
    const hooks = fx.kernel.hooks;
    assert.equal(hooks.hasHooks('op-1'), false);
    hooks.register('op-1', [hook('afterStep', () => undefined), hook('beforeToolCall', () => undefined, { matcher: '^fs/' })]);
    assert.equal(hooks.hasHooks('op-1'), true);
    assert.equal(hooks.hasHooks('op-1', 'afterStep'), true);
    assert.equal(hooks.hasHooks('op-1', 'beforeToolCall'), true);
    assert.equal(hooks.hasHooks('op-1', 'onComplete'), false);
    assert.equal(hooks.hasHooks('op-2'), false);
    hooks.register('op-1', []);
    assert.equal(hooks.hasHooks('op-1', 'afterStep'), true, 'an empty batch changes nothing');
    hooks.register('op-1', [hook('afterStep', () => undefined)]);
    hooks.unregister('op-1');
    assert.equal(hooks.hasHooks('op-1'), false);
    hooks.register('op-empty', []);
    assert.equal(hooks.hasHooks('op-empty'), false, 'an empty batch registers no hooks');
  });

  describe('a second register() for one operation appends (issue 9, item 16)', () => {
    it('keeps the first batch and adds the second, dispatching both in registration order', async () => {
      const seen: string[] = [];
      const d = fx.kernel.hooks;
      d.register('op-a', [hook('afterStep', () => seen.push('first'), { id: 'first' })]);
      d.register('op-a', [hook('afterStep', () => seen.push('second'), { id: 'second' }), hook('onComplete', () => seen.push('done'), { id: 'done' })]);
      assert.equal(d.hasHooks('op-a', 'afterStep'), true);
      assert.equal(d.hasHooks('op-a', 'onComplete'), true);
      await d.dispatch('op-a', 'afterStep', afterStepEvent('op-a'));
      assert.deepEqual(seen, ['first', 'second']);
      assert.deepEqual(d.getRegisteredHooks('op-a').map((h) => h.id), ['first', 'second', 'done']);
    });

    it('validates the new batch against what is registered: a repeated id is refused and nothing is added', () => {
      const d = fx.kernel.hooks;
      d.register('op-d', [hook('afterStep', () => undefined, { id: 'audit' })]);
      assert.throws(
        () => d.register('op-d', [hook('beforeStep', () => undefined, { id: 'fresh' }), hook('onComplete', () => undefined, { id: 'audit' })]),
        (err: Error & { code?: string }) => err.code === 'HOOK_INVALID' && /hooks\[1\] "audit"\.id: duplicate hook id/.test(err.message),
      );
      assert.deepEqual(d.getRegisteredHooks('op-d').map((h) => h.id), ['audit'], 'the valid hook of the refused batch was not added');
    });

    it('the serialized hooks of an appended registration hold the webhook hooks of both batches', () => {
      const d = fx.kernel.hooks;
      d.register('op-w', [{ id: 'w1', type: 'afterStep', webhook: { url: 'http://127.0.0.1:9/one' } }]);
      d.register('op-w', [hook('afterStep', () => undefined, { id: 'h' }), { id: 'w2', type: 'onComplete', webhook: { url: 'http://127.0.0.1:9/two' } }]);
      assert.deepEqual(d.getSerializedHooks('op-w')?.map((h) => h.id), ['w1', 'w2']);
    });
  });

  it('unregister stops delivery to the operation\'s handlers', async () => {
    const seen: number[] = [];
    fx.kernel.hooks.register('op-u', [hook('afterStep', (e) => seen.push(e.stepIndex))]);
    await fx.kernel.hooks.dispatch('op-u', 'afterStep', afterStepEvent('op-u'));
    fx.kernel.hooks.unregister('op-u');
    await fx.kernel.hooks.dispatch('op-u', 'afterStep', afterStepEvent('op-u'));
    assert.deepEqual(seen, [0]);
  });

  it('canDeliver: handlers in local mode, webhooks in both modes, never handler-only hooks in queue mode', () => {
    const local = fx.kernel.hooks;
    local.register('op-c', [hook('afterStep', () => undefined), { id: 'wh', type: 'onComplete', webhook: { url: 'http://127.0.0.1:9/hook' } }]);
    assert.equal(local.canDeliver('op-c', 'afterStep'), true);
    assert.equal(local.canDeliver('op-c', 'onComplete'), true);
    assert.equal(local.canDeliver('op-c', 'beforeStep'), false);

    const queue = new HookDispatcher({ logger: createLogger({ level: 'silent' }), mode: 'queue' });
    queue.register('op-q', [hook('afterStep', () => undefined)]);
    assert.equal(queue.hasHooks('op-q', 'afterStep'), true);
    assert.equal(queue.canDeliver('op-q', 'afterStep'), false);
  });

  it('getSerializedHooks keeps webhook hooks only, with matcher and header templates, never functions', () => {
    fx.kernel.hooks.register('op-s', [
      hook('afterStep', () => undefined, { id: 'handler-only' }),
      {
        id: 'both',
        type: 'afterToolCall',
        matcher: '^fs/readFile$',
        handler: () => undefined,
        webhook: { url: 'https://example.com/hooks', timeout: 5, headers: { Authorization: 'Bearer ${HOOK_TOKEN}' }, allowedEnvVars: ['HOOK_TOKEN'] },
      },
    ]);
    const serialized = fx.kernel.hooks.getSerializedHooks('op-s')!;
    assert.equal(serialized.length, 1);
    assert.equal(serialized[0]!.id, 'both');
    assert.equal(serialized[0]!.type, 'afterToolCall');
    assert.equal(serialized[0]!.matcher, '^fs/readFile$');
    assert.equal(serialized[0]!.webhook.headers!.Authorization, 'Bearer ${HOOK_TOKEN}');
    assert.equal('handler' in serialized[0]!, false);
    assert.doesNotThrow(() => JSON.stringify(serialized));
    // Issue 9, item 16: an operation nothing was registered for has no serialized hooks at all.
    assert.equal(fx.kernel.hooks.getSerializedHooks('op-unknown'), undefined);
    fx.kernel.hooks.register('op-none', [hook('afterStep', () => undefined)]);
    assert.deepEqual(fx.kernel.hooks.getSerializedHooks('op-none'), [], 'registered, but without webhook hooks');
  });

  it('completion unregisters the operation\'s hooks', async () => {
    fx.kernel.agents.define({ id: 'slow', model: scripted([{ text: 'done', delayMs: 30 }]) });
    const handle = await fx.kernel.execAgent({ agentId: 'slow', prompt: 'go', hooks: [hook('afterStep', () => undefined)] });
    assert.equal(fx.kernel.hooks.hasHooks(handle.operationId), true);
    await handle.completed();
    assert.equal(fx.kernel.hooks.hasHooks(handle.operationId), false);
  });
});
