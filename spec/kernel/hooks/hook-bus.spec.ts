import assert from 'node:assert/strict';
import {
  CONTROL_HOOK_TYPES,
  HOOK_TYPES,
  HookDispatcher,
  LIFECYCLE_VOCABULARY,
  TOOL_HOOK_TYPES,
  createLogger,
  defineHookVocabulary,
  type AgentHook,
  type BusHook,
  type LogRecord,
} from '../../../index.js';
import { hook, scripted, startKernel, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** A second vocabulary, as a plugin would declare it: one hook of each kind, the transform with a matcher. */
const TEST_VOCABULARY = defineHookVocabulary('test', {
  noticed: { kind: 'observe' },
  shaped: { kind: 'transform', matchOn: (_value, context) => (context as { tool?: string } | undefined)?.tool },
  stored: { kind: 'transform', onError: 'propagate' },
  gate: { kind: 'control' },
});

type Ctx = { tool?: string };
const observer = (id: string, handler: (event: unknown) => unknown): BusHook => ({ id, type: 'noticed', handler: handler as BusHook['handler'] });
const shaper = (id: string, handler: (value: string, context: Ctx) => unknown, matcher?: string): BusHook => ({
  id,
  type: 'shaped',
  handler: handler as BusHook['handler'],
  ...(matcher !== undefined ? { matcher } : {}),
});
const control = (id: string, handler: (event: unknown) => unknown, onError?: 'continue' | 'block'): BusHook => ({
  id,
  type: 'gate',
  handler: handler as BusHook['handler'],
  ...(onError ? { onError } : {}),
});

/** Issue 11 item 3: a hook bus over declared vocabularies. */
describe('hook bus over declared vocabularies', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
    fx.kernel.hooks.bus.addVocabulary(TEST_VOCABULARY);
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  describe('the lifecycle vocabulary', () => {
    it('declares the 16 hook types in their order, matchers on the tool hooks, control on beforeToolCall and afterToolCall', () => {
      assert.deepEqual(LIFECYCLE_VOCABULARY.names, [...HOOK_TYPES]);
      assert.deepEqual(LIFECYCLE_VOCABULARY.names.filter((n) => LIFECYCLE_VOCABULARY.hooks[n].matchOn !== undefined), [...TOOL_HOOK_TYPES]);
      assert.deepEqual(LIFECYCLE_VOCABULARY.names.filter((n) => LIFECYCLE_VOCABULARY.hooks[n].kind === 'control'), [...CONTROL_HOOK_TYPES]);
      assert.deepEqual(fx.kernel.hooks.bus.vocabularyNames(), ['lifecycle', 'test']);
    });

    it('rejects a misspelled hook type through execAgent with the vocabulary named and a did-you-mean', async () => {
      fx.kernel.agents.define({ id: 'a', model: scripted([{ text: 'done' }]) });
      await assert.rejects(
        fx.kernel.execAgent({ agentId: 'a', prompt: 'go', hooks: [{ id: 'typo', type: 'beforeToolcall', handler: () => undefined } as unknown as AgentHook] }),
        (err: Error & { code?: string }) => {
          assert.equal(err.code, 'HOOK_INVALID');
          assert.match(err.message, /^hooks\[0\] "typo"\.type: unknown hook type "beforeToolcall": not a hook of the lifecycle vocabulary \(did you mean "beforeToolCall"\?\); its hooks: beforeStep, afterStep, /);
          return true;
        },
      );
      assert.deepEqual(await fx.kernel.listOperations(), []);
    });

    it('offers no guess for a name close to none', () => {
      assert.throws(
        () => fx.kernel.hooks.register('op', [{ id: 'x', type: 'somethingElseEntirely', handler: () => undefined } as unknown as AgentHook]),
        (err: Error) => !/did you mean/.test(err.message) && /not a hook of the lifecycle vocabulary; its hooks: /.test(err.message),
      );
    });

    it('registers and observes lifecycle hooks through the bus on the dispatcher paths', async () => {
      const seen: string[] = [];
      fx.kernel.hooks.bus.register('op-1', 'lifecycle', [hook('beforeStep', (e) => seen.push(`${e.operationId}:${e.stepType}`))]);
      assert.equal(fx.kernel.hooks.hasHooks('op-1', 'beforeStep'), true, 'the dispatcher holds it');
      await fx.kernel.hooks.bus.observe('op-1', 'lifecycle', 'beforeStep', { operationId: 'op-1', agentId: 'a', stepIndex: 0, timestamp: new Date().toISOString(), stepType: 'call_llm' });
      assert.deepEqual(seen, ['op-1:call_llm']);
      assert.deepEqual(await fx.kernel.hooks.bus.decide('op-1', 'lifecycle', 'beforeToolCall', { identifier: 't', apiName: 'x' }), { decision: 'allow' });
      assert.throws(() => fx.kernel.hooks.bus.transform('op-1', 'lifecycle', 'afterStep', 1), /afterStep is an observe hook of the lifecycle vocabulary, not a transform hook/);
    });
  });

  describe('declaring and adding a vocabulary', () => {
    it('refuses a declaration with an unknown kind, an onError its kind does not take, or no hooks, naming the vocabulary and hook', () => {
      assert.throws(() => defineHookVocabulary('v', { h: { kind: 'filter' as 'observe' } }), /vocabulary "v" hook "h"\.kind: expected one of observe, transform, control, got "filter"/);
      assert.throws(() => defineHookVocabulary('v', { h: { kind: 'observe', onError: 'keep' } }), /vocabulary "v" hook "h"\.onError: an observe hook takes nothing/);
      assert.throws(() => defineHookVocabulary('v', { h: { kind: 'control', onError: 'propagate' } }), /"h"\.onError: a control hook takes "continue" or "block"/);
      assert.throws(() => defineHookVocabulary('v', {}), /vocabulary "v": declares no hooks/);
    });

    it('refuses a second vocabulary of a taken name, lifecycle included', () => {
      assert.throws(() => fx.kernel.hooks.bus.addVocabulary(TEST_VOCABULARY), /a vocabulary named "test" is already registered/);
      assert.throws(() => fx.kernel.hooks.bus.addVocabulary(defineHookVocabulary('lifecycle', { x: { kind: 'observe' } })), /"lifecycle" is already registered/);
      assert.throws(() => fx.kernel.hooks.bus.register('s', 'nope', []), /unknown hook vocabulary "nope"; registered: lifecycle, test/);
    });
  });

  describe('registration', () => {
    it('rejects an unknown name with the vocabulary named, and keeps nothing of the batch', () => {
      assert.throws(
        () => fx.kernel.hooks.bus.register('s', 'test', [observer('ok', () => undefined), { id: 'bad', type: 'notice', handler: () => undefined }]),
        (err: Error & { code?: string }) => {
          assert.equal(err.code, 'HOOK_INVALID');
          assert.equal(err.message, 'hooks[1] "bad".type: unknown hook type "notice": not a hook of the test vocabulary (did you mean "noticed"?); its hooks: noticed, shaped, stored, gate');
          return true;
        },
      );
      assert.equal(fx.kernel.hooks.bus.hasHooks('s', 'test'), false);
    });

    it('allows a matcher only where the hook declares matchOn, and onError only on controls', () => {
      assert.throws(() => fx.kernel.hooks.bus.register('s', 'test', [{ ...observer('o', () => undefined), matcher: '^x' }]), /hooks\[0\] "o"\.matcher: matchers are only allowed on shaped of the test vocabulary, not on noticed/);
      assert.throws(() => fx.kernel.hooks.bus.register('s', 'test', [shaper('s', () => undefined, '(x')]), /"s"\.matcher: matcher "\(x" is not a valid regular expression/);
      assert.throws(() => fx.kernel.hooks.bus.register('s', 'test', [{ ...shaper('t', () => undefined), onError: 'block' }]), /"t"\.onError: only control hooks take onError; shaped is a transform hook/);
      fx.kernel.hooks.bus.register('s', 'test', [shaper('fine', () => undefined, '^fs/')]);
      assert.throws(() => fx.kernel.hooks.bus.register('s', 'test', [observer('fine', () => undefined)]), /"fine"\.id: duplicate hook id: a test hook already registered for this scope has it/);
    });

    it('keeps scopes apart and forgets one on unregister', () => {
      const seen: string[] = [];
      fx.kernel.hooks.bus.register('a', 'test', [observer('o', () => seen.push('a'))]);
      fx.kernel.hooks.bus.register('b', 'test', [observer('o', () => seen.push('b'))]);
      fx.kernel.hooks.bus.observe('b', 'test', 'noticed', {});
      fx.kernel.hooks.bus.unregister('b', 'test');
      fx.kernel.hooks.bus.observe('b', 'test', 'noticed', {});
      assert.deepEqual(seen, ['b']);
      assert.equal(fx.kernel.hooks.bus.hasHooks('a', 'test', 'noticed'), true);
      assert.equal(fx.kernel.hooks.bus.hasHooks('b', 'test'), false);
    });
  });

  describe('observe', () => {
    it('tells every handler in order, logs one that throws and goes on, and returns without a promise while all are synchronous', () => {
      const seen: unknown[] = [];
      fx.kernel.hooks.bus.register('s', 'test', [
        observer('first', (e) => seen.push(['first', e])),
        observer('broken', () => {
          throw new Error('observer broke');
        }),
        observer('last', (e) => seen.push(['last', e])),
      ]);
      const result = fx.kernel.hooks.bus.observe('s', 'test', 'noticed', { n: 1 });
      assert.equal(result, undefined);
      assert.deepEqual(seen, [['first', { n: 1 }], ['last', { n: 1 }]]);
      const logged = fx.logs.find((r: LogRecord) => r.msg === 'observe handler failed');
      assert.equal(logged?.hookId, 'broken');
      assert.equal(logged?.vocabulary, 'test');
      assert.equal(logged?.error, 'observer broke');
    });

    it('waits for a handler that returns a promise before the next one, and does not reject for a rejected one', async () => {
      const seen: string[] = [];
      fx.kernel.hooks.bus.register('s', 'test', [
        observer('slow', async () => {
          await new Promise((r) => setTimeout(r, 10));
          seen.push('slow');
        }),
        observer('rejects', () => Promise.reject(new Error('no'))),
        observer('after', () => seen.push('after')),
      ]);
      await fx.kernel.hooks.bus.observe('s', 'test', 'noticed', {});
      assert.deepEqual(seen, ['slow', 'after']);
      assert.ok(fx.logs.some((r) => r.msg === 'observe handler failed' && r.hookId === 'rejects'));
    });

    it('refuses a name of another kind or one the vocabulary lacks', () => {
      assert.throws(() => fx.kernel.hooks.bus.observe('s', 'test', 'shaped', {}), /shaped is a transform hook of the test vocabulary, not an observe hook/);
      assert.throws(() => fx.kernel.hooks.bus.observe('s', 'test', 'gates', {}), /unknown hook type "gates": not a hook of the test vocabulary \(did you mean "gate"\?\)/);
    });
  });

  describe('transform', () => {
    it('passes the value through the chain in registration order; null and undefined keep it; synchronous while every handler is', () => {
      const given: string[] = [];
      fx.kernel.hooks.bus.register('s', 'test', [
        shaper('upper', (v) => (given.push(v), v.toUpperCase())),
        shaper('keeps-null', (v) => (given.push(v), null)),
        shaper('keeps-undefined', (v) => void given.push(v)),
        shaper('suffix', (v) => (given.push(v), `${v}!`)),
      ]);
      const out = fx.kernel.hooks.bus.transform('s', 'test', 'shaped', 'hi', {});
      assert.equal(out, 'HI!');
      assert.deepEqual(given, ['hi', 'HI', 'HI', 'HI']);
      assert.equal(fx.kernel.hooks.bus.transform('other-scope', 'test', 'shaped', 'untouched'), 'untouched');
    });

    it('runs only the handlers whose matcher matches the subject the hook declares', () => {
      fx.kernel.hooks.bus.register('s', 'test', [shaper('fs-only', (v) => `${v}+fs`, '^fs/'), shaper('all', (v) => `${v}+all`)]);
      assert.equal(fx.kernel.hooks.bus.transform('s', 'test', 'shaped', 'v', { tool: 'fs/read' }), 'v+fs+all');
      assert.equal(fx.kernel.hooks.bus.transform('s', 'test', 'shaped', 'v', { tool: 'web/get' }), 'v+all');
      assert.equal(fx.kernel.hooks.bus.transform('s', 'test', 'shaped', 'v', {}), 'v+all', 'no subject matches no matcher');
    });

    it('waits for a handler that returns a promise and hands its value on', async () => {
      fx.kernel.hooks.bus.register('s', 'test', [shaper('sync', (v) => `${v}1`), shaper('async', async (v) => `${v}2`), shaper('after', (v) => `${v}3`)]);
      const out = fx.kernel.hooks.bus.transform('s', 'test', 'shaped', 'v', {});
      assert.ok(out instanceof Promise);
      assert.equal(await out, 'v123');
    });

    it('keep (the default): a throwing handler is logged, the value stays the last good one, and the chain goes on', async () => {
      fx.kernel.hooks.bus.register('s', 'test', [
        shaper('a', (v) => `${v}a`),
        shaper('throws', () => {
          throw new Error('bad transform');
        }),
        shaper('rejects', async () => {
          throw new Error('bad async transform');
        }),
        shaper('b', (v) => `${v}b`),
      ]);
      assert.equal(await fx.kernel.hooks.bus.transform('s', 'test', 'shaped', 'v', {}), 'vab');
      const failures = fx.logs.filter((r) => r.msg.startsWith('transform handler failed'));
      assert.deepEqual(failures.map((r) => [r.hookId, r.error]), [['throws', 'bad transform'], ['rejects', 'bad async transform']]);
    });

    it('propagate (declared on the hook): the handler\'s own error reaches the caller and later handlers do not run', async () => {
      const ran: string[] = [];
      const failure = new Error('write prevented');
      fx.kernel.hooks.bus.register('s', 'test', [
        { id: 'ok', type: 'stored', handler: ((v: number) => (ran.push('ok'), v + 1)) as BusHook['handler'] },
        { id: 'prevents', type: 'stored', handler: (() => Promise.reject(failure)) as BusHook['handler'] },
        { id: 'never', type: 'stored', handler: (() => void ran.push('never')) as BusHook['handler'] },
      ]);
      await assert.rejects(async () => fx.kernel.hooks.bus.transform('s', 'test', 'stored', 1), (err) => err === failure);
      assert.deepEqual(ran, ['ok']);
    });

    it('a call overrides the hook\'s rule, with a word or a function of the error', async () => {
      const blocking = Object.assign(new Error('blocked by policy'), { block: true });
      fx.kernel.hooks.bus.register('s', 'test', [
        shaper('plain', () => {
          throw new Error('plain failure');
        }),
        shaper('blocks', (v) => (v === 'block' ? Promise.reject(blocking) : v)),
      ]);
      const blockOnly = (err: unknown) => ((err as { block?: boolean }).block === true ? ('propagate' as const) : ('keep' as const));
      assert.equal(await fx.kernel.hooks.bus.transform('s', 'test', 'shaped', 'v', {}, { onError: blockOnly }), 'v');
      await assert.rejects(async () => fx.kernel.hooks.bus.transform('s', 'test', 'shaped', 'block', {}, { onError: blockOnly }), (err) => err === blocking);
      assert.throws(() => fx.kernel.hooks.bus.transform('s', 'test', 'shaped', 'v', {}, { onError: 'propagate' }), /plain failure/);
      fx.kernel.hooks.bus.register('t', 'test', [{ id: 'x', type: 'stored', handler: (() => Promise.reject(new Error('kept'))) as BusHook['handler'] }]);
      assert.equal(await fx.kernel.hooks.bus.transform('t', 'test', 'stored', 7, undefined, { onError: 'keep' }), 7);
    });
  });

  describe('control', () => {
    it('walks the controls in order: allow or nothing goes on, the first deny stops with hook_denied', async () => {
      const asked: string[] = [];
      fx.kernel.hooks.bus.register('s', 'test', [
        control('silent', () => void asked.push('silent')),
        control('allows', async () => (asked.push('allows'), { decision: 'allow' })),
        control('denies', () => (asked.push('denies'), { decision: 'deny', reason: 'not today' })),
        control('never', () => void asked.push('never')),
      ]);
      assert.deepEqual(await fx.kernel.hooks.bus.decide('s', 'test', 'gate', {}), { decision: 'blocked', reason: 'not today', classification: 'hook_denied', hookId: 'denies' });
      assert.deepEqual(asked, ['silent', 'allows', 'denies']);
      assert.deepEqual(await fx.kernel.hooks.bus.decide('nobody', 'test', 'gate', {}), { decision: 'allow' });
    });

    it('fails open by default and closed with onError block, as webhook controls do; a non-verdict is a failure', async () => {
      fx.kernel.hooks.bus.register('open', 'test', [
        control('throws', () => {
          throw new Error('control broke');
        }),
        control('garbage', () => ({ decision: 'maybe' })),
      ]);
      assert.deepEqual(await fx.kernel.hooks.bus.decide('open', 'test', 'gate', {}), { decision: 'allow' });
      assert.deepEqual(fx.logs.filter((r) => r.msg === 'control handler failed').map((r) => r.hookId), ['throws', 'garbage']);

      fx.kernel.hooks.bus.register('closed', 'test', [control('throws', () => Promise.reject(new Error('down')), 'block'), control('never', () => assert.fail('the walk stopped'))]);
      assert.deepEqual(await fx.kernel.hooks.bus.decide('closed', 'test', 'gate', {}), { decision: 'blocked', reason: 'hook_control_error', classification: 'hook_control_error', hookId: 'throws' });
    });

    it('an aborted signal is cancelled, never permission', async () => {
      const ac = new AbortController();
      fx.kernel.hooks.bus.register('s', 'test', [control('aborts', () => void ac.abort()), control('allows', () => ({ decision: 'allow' }))]);
      assert.deepEqual(await fx.kernel.hooks.bus.decide('s', 'test', 'gate', {}, { signal: ac.signal }), { decision: 'cancelled' });
    });
  });

  describe('one batch registered for many scopes (thread hooks: one per operation)', () => {
    it('a frozen batch of frozen hooks runs in every scope it is registered for; forgetting one scope or adding to another leaves the rest', () => {
      const bus = fx.kernel.hooks.bus;
      const seen: string[] = [];
      const batch = Object.freeze([Object.freeze(observer('shared', (e) => seen.push(`shared ${String(e)}`)))]);
      for (const scope of ['a', 'b', 'c']) bus.register(scope, 'test', batch);
      bus.unregister('b', 'test');
      bus.register('c', 'test', [observer('extra', (e) => seen.push(`extra ${String(e)}`))]);
      for (const scope of ['a', 'b', 'c']) bus.observe(scope, 'test', 'noticed', scope);
      assert.deepEqual(seen, ['shared a', 'shared c', 'extra c']);
      // Adding to scope c made its own list: scope a still has the batch alone.
      seen.length = 0;
      bus.register('d', 'test', batch);
      bus.observe('a', 'test', 'noticed', 'a');
      bus.observe('d', 'test', 'noticed', 'd');
      assert.deepEqual(seen, ['shared a', 'shared d']);
      assert.throws(() => bus.register('d', 'test', [observer('shared', () => undefined)]), /duplicate hook id/);
    });

    it('a batch that is not frozen is validated again at every registration (changed after the first: HOOK_INVALID)', () => {
      const bus = fx.kernel.hooks.bus;
      const hook = Object.freeze(observer('later_broken', () => undefined));
      const batch = [hook] as BusHook[];
      bus.register('a', 'test', batch);
      batch[0] = { ...hook, type: 'noticd' };
      assert.throws(() => bus.register('b', 'test', batch), /noticd/);
      const open = observer('open_hook', () => undefined);
      const frozenList = Object.freeze([open]);
      bus.register('c', 'test', frozenList);
      open.type = 'noticd';
      assert.throws(() => bus.register('d', 'test', frozenList), /noticd/);
    });
  });

  it('bounds a handler by hooks.handlerTimeoutMs: a transform that never settles keeps the value; a control that never settles follows its onError', async () => {
    const logs: LogRecord[] = [];
    const dispatcher = new HookDispatcher({ logger: createLogger({ level: 'debug', sink: (_l, r) => logs.push(r) }), handlerTimeoutMs: 20 });
    dispatcher.bus.addVocabulary(TEST_VOCABULARY);
    dispatcher.bus.register('s', 'test', [shaper('hangs', () => new Promise(() => undefined)), shaper('after', (v) => `${v}!`), control('gate-hangs', () => new Promise(() => undefined), 'block')]);
    assert.equal(await dispatcher.bus.transform('s', 'test', 'shaped', 'v', {}), 'v!');
    assert.match(String(logs.find((r) => r.hookId === 'hangs')?.error), /hook "hangs" \(shaped\) handler did not settle within 20 ms/);
    assert.deepEqual(await dispatcher.bus.decide('s', 'test', 'gate', {}), { decision: 'blocked', reason: 'hook_control_error', classification: 'hook_control_error', hookId: 'gate-hangs' });
  });
});
