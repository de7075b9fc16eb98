import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AfterStepEvent } from '../../../kernel/hooks/hook-types.js';
import { hook, recordHooks, scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** Dispatch order and error isolation (document 000: "Delivery Errors"; issue 3 item 2). */
describe('hook dispatch: order and error isolation', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
    fx.kernel.agents.define({
      id: 'worker',
      tools: ['test/*'],
      model: scripted([toolTurn('test', 'echo', { a: 1 }), { text: 'done' }]),
    });
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  it('a full run fires the hooks in document order: steps, tool events inside the tool step, onComplete last', async () => {
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'worker', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    assert.deepEqual(rec.sequence(), [
      'beforeStep',
      'afterStep',
      'beforeStep',
      'beforeToolCall',
      'afterToolCall',
      'afterStep',
      'beforeStep',
      'afterStep',
      'onComplete',
    ]);
  });

  it('hooks of one type run in registration order, each awaited before the next starts', async () => {
    const seen: string[] = [];
    const hooks = [
      hook('beforeStep', async (e) => {
        seen.push(`slow-start-${e.stepIndex}`);
        await sleep(20);
        seen.push(`slow-end-${e.stepIndex}`);
      }),
      hook('beforeStep', (e) => {
        seen.push(`fast-${e.stepIndex}`);
      }),
    ];
    await (await fx.kernel.execAgent({ agentId: 'worker', prompt: 'go', hooks })).completed();
    assert.deepEqual(seen.slice(0, 3), ['slow-start-0', 'slow-end-0', 'fast-0']);
    assert.equal(seen.length, 9);
  });

  it('the step waits for its beforeStep handlers: the model is not asked before they resolve', async () => {
    let released = false;
    const hooks = [
      hook('beforeStep', async (e) => {
        if (e.stepIndex !== 0) return;
        await sleep(30);
        released = true;
      }),
    ];
    let modelCalledAfterRelease: boolean | undefined;
    const unsubscribe = fx.kernel.events.on((ev) => {
      if (ev.type === 'assistant_message' && modelCalledAfterRelease === undefined) modelCalledAfterRelease = released;
    });
    await (await fx.kernel.execAgent({ agentId: 'worker', prompt: 'go', hooks })).completed();
    unsubscribe();
    assert.equal(modelCalledAfterRelease, true);
  });

  it('a throwing handler is logged, the next handler still runs, and the run completes', async () => {
    const afterSteps: number[] = [];
    const hooks = [
      hook('afterStep', () => {
        throw new Error('observer exploded');
      }, { id: 'exploding' }),
      hook('afterStep', (e) => {
        afterSteps.push(e.stepIndex);
      }),
      hook('onComplete', () => Promise.reject(new Error('complete exploded')), { id: 'exploding-complete' }),
    ];
    const handle = await fx.kernel.execAgent({ agentId: 'worker', prompt: 'go', hooks });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal(final.reason, 'done');
    assert.deepEqual(afterSteps, [0, 1, 2]);
    const failures = fx.logs.filter((l) => l.msg === 'hook handler failed');
    assert.equal(failures.filter((l) => l.hookId === 'exploding').length, 3);
    assert.equal(failures.filter((l) => l.hookId === 'exploding-complete').length, 1);
    assert.equal(failures[0]!.error, 'observer exploded');
    assert.equal(failures[0]!.operationId, handle.operationId);
  });

  it('a throwing beforeToolCall handler does not stop the tool from running', async () => {
    const hooks = [
      hook('beforeToolCall', () => {
        throw new Error('nope');
      }),
    ];
    const final = await (await fx.kernel.execAgent({ agentId: 'worker', prompt: 'go', hooks })).completed();
    assert.equal(final.status, 'done');
    assert.equal(fx.tools.calls.length, 1);
  });

  it('hooks are per operation: two concurrent runs each see only their own events', async () => {
    const first = recordHooks();
    const second = recordHooks();
    const [h1, h2] = await Promise.all([
      fx.kernel.execAgent({ agentId: 'worker', prompt: 'one', hooks: first.hooks }),
      fx.kernel.execAgent({ agentId: 'worker', prompt: 'two', hooks: second.hooks }),
    ]);
    await Promise.all([h1.completed(), h2.completed()]);
    assert.ok(first.events.length > 0 && second.events.length > 0);
    assert.ok(first.events.every((e) => e.event.operationId === h1.operationId));
    assert.ok(second.events.every((e) => e.event.operationId === h2.operationId));
    assert.equal(first.sequence().length, second.sequence().length);
  });

  it('HookDispatcher.dispatch isolates handler errors when called directly', async () => {
    const seen: string[] = [];
    fx.kernel.hooks.register('op-direct', [
      hook('afterStep', () => {
        throw new Error('first fails');
      }, { id: 'first' }),
      hook('afterStep', () => {
        seen.push('second');
      }, { id: 'second' }),
      hook('beforeStep', () => {
        seen.push('wrong type');
      }),
    ]);
    const event: AfterStepEvent = {
      operationId: 'op-direct',
      agentId: 'a',
      stepIndex: 0,
      timestamp: new Date().toISOString(),
      stepType: 'call_llm',
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 },
      totalUsage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 },
    };
    await fx.kernel.hooks.dispatch('op-direct', 'afterStep', event);
    assert.deepEqual(seen, ['second']);
    assert.ok(fx.logs.some((l) => l.msg === 'hook handler failed' && l.hookId === 'first'));
    fx.kernel.hooks.unregister('op-direct');
  });

  it('hooks registered after a delivery are delivered too, interleaved types keep registration order', async () => {
    // The dispatcher indexes an operation's hooks by type on first use: a later register must not be missed.
    const seen: string[] = [];
    const event = (stepIndex: number): AfterStepEvent => ({
      operationId: 'op-later',
      agentId: 'a',
      stepIndex,
      timestamp: new Date().toISOString(),
      stepType: 'call_llm',
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 },
      totalUsage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 },
    });
    fx.kernel.hooks.register('op-later', [
      hook('afterStep', (e) => void seen.push(`a1-${e.stepIndex}`), { id: 'a1' }),
      hook('beforeStep', () => void seen.push('wrong type'), { id: 'b1' }),
      hook('afterStep', (e) => void seen.push(`a2-${e.stepIndex}`), { id: 'a2' }),
    ]);
    await fx.kernel.hooks.dispatch('op-later', 'afterStep', event(0));
    assert.equal(fx.kernel.hooks.mightHandle('op-later', 'onComplete', 'notification'), false);
    fx.kernel.hooks.register('op-later', [
      hook('afterStep', (e) => void seen.push(`a3-${e.stepIndex}`), { id: 'a3' }),
      hook('onComplete', () => void seen.push('complete'), { id: 'c1' }),
    ]);
    assert.equal(fx.kernel.hooks.mightHandle('op-later', 'onComplete', 'notification'), true);
    await fx.kernel.hooks.dispatch('op-later', 'afterStep', event(1));
    assert.deepEqual(seen, ['a1-0', 'a2-0', 'a1-1', 'a2-1', 'a3-1']);
    fx.kernel.hooks.unregister('op-later');
    assert.equal(fx.kernel.hooks.hasHooks('op-later'), false);
  });
});
