import assert from 'node:assert/strict';
import type { SerializedHook } from '../../../../kernel/hooks/hook-types.js';
import { createWebhookPayloadBuilder } from '../../../../kernel/hooks/webhook/webhook-payload.js';
import { afterToolCallEvent, beforeToolCallEvent, CountingDirectory, onCompleteEvent } from './fixtures.js';
import { captureLogger } from '../../../helpers/capture-logger.js';

function hook(webhook: Partial<SerializedHook['webhook']> = {}, type: SerializedHook['type'] = 'onComplete'): SerializedHook {
  return { id: 'audit', type, webhook: { url: '/h', ...webhook } };
}

describe('createWebhookPayloadBuilder', () => {
  let directory: CountingDirectory;
  let log: ReturnType<typeof captureLogger>;
  let clock: number;

  beforeEach(() => {
    directory = new CountingDirectory({ user_1: 'ada@example.com', user_2: 'bob@example.com' });
    log = captureLogger();
    clock = 1_000_000;
  });

  const builder = () => createWebhookPayloadBuilder({ logger: log.logger, userDirectory: directory, now: () => clock });

  describe('payloads', () => {
    it('takes every event field, adds hookId and hookType, and drops finalState', async () => {
      const event = onCompleteEvent();
      const payload = await builder().build(hook(), event, 'notification');
      const { finalState: _f, ...fields } = event;
      assert.deepEqual(payload, { ...fields, hookId: 'audit', hookType: 'onComplete', userEmail: 'ada@example.com' });
    });

    it('projects only the listed eventFields that exist', async () => {
      const payload = await builder().build(hook({ eventFields: ['operationId', 'finalText', 'nope'] }), onCompleteEvent(), 'notification');
      assert.deepEqual(payload, { operationId: 'op_1', finalText: 'bye', hookId: 'audit', hookType: 'onComplete' });
    });

    it('merges body last, so the body wins overlapping fields', async () => {
      const payload = await builder().build(hook({ eventFields: ['status'], body: { status: 'from-body', hookType: 'custom', team: 'sec' } }), onCompleteEvent(), 'notification');
      assert.deepEqual(payload, { status: 'from-body', hookId: 'audit', hookType: 'custom', team: 'sec' });
    });

    it('removes finalState and userEmail even when the body supplies them', async () => {
      const payload = await builder().build(hook({ eventFields: ['status'], body: { finalState: 1, userEmail: 'forged@example.com' } }), onCompleteEvent(), 'notification');
      assert.deepEqual(payload, { status: 'done', hookId: 'audit', hookType: 'onComplete' });
    });

    // Issue 9, item 19: only a skill's Work registration is raw Work data (the reference's
    // redactResultForEvents); the result's own data and args reach the receiver.
    it('trims skill Work data in afterToolCall notification results: the skill registration keeps its fields but data: null and no args', async () => {
      const skill = { type: 'skill', name: 'report', data: { rows: 'x'.repeat(50) }, args: { raw: 'payload' } };
      const event = afterToolCallEvent({ result: { content: 'done', success: true, data: { subOperationId: 'op_9' }, workRegistration: skill } as never });
      const payload = await builder().build(hook({}, 'afterToolCall'), event, 'notification');
      assert.deepEqual(payload?.result, { content: 'done', success: true, data: { subOperationId: 'op_9' }, workRegistration: { type: 'skill', name: 'report', data: null } });
      // The in-process result (Work registration, local handlers) keeps everything.
      assert.deepEqual((event.result as unknown as { workRegistration: unknown }).workRegistration, skill);
    });

    it('leaves result.data, result.args and other Work registrations as they are', async () => {
      const event = afterToolCallEvent();
      const payload = await builder().build(hook({}, 'afterToolCall'), event, 'notification');
      assert.deepEqual(payload?.result, { content: 'file text', success: true, executionTime: 12, data: { work: 'x'.repeat(50) }, args: { raw: 'payload' } });
      const task = { type: 'task', data: { id: 't1' }, args: { a: 1 } };
      const withTask = await builder().build(hook({}, 'afterToolCall'), afterToolCallEvent({ result: { content: 'ok', success: true, workRegistration: task } as never }), 'notification');
      assert.deepEqual(withTask?.result, { content: 'ok', success: true, workRegistration: task });
    });

    it('gives controls the full result and ignores eventFields and body', async () => {
      const event = afterToolCallEvent();
      const payload = await builder().build(hook({ eventFields: ['toolCallId'], body: { x: 1 } }, 'afterToolCall'), event, 'control');
      assert.deepEqual(payload, { ...event, hookId: 'audit', hookType: 'afterToolCall', userEmail: 'ada@example.com' });
    });

    it('never includes the mock callback', async () => {
      const payload = await builder().build(hook({}, 'beforeToolCall'), beforeToolCallEvent(), 'notification');
      assert.ok(payload && !('mock' in payload));
      assert.doesNotThrow(() => JSON.stringify(payload));
    });

    it('never changes the event', async () => {
      const event = afterToolCallEvent({ userEmail: 'x@example.com', finalState: {} } as never);
      const before = structuredClone({ ...event, mock: undefined });
      await builder().build(hook({ body: { userId: 'user_2' } }, 'afterToolCall'), event, 'notification');
      await builder().build(hook({}, 'afterToolCall'), event, 'control');
      assert.deepEqual({ ...event, mock: undefined }, before);
    });

    it('resolves undefined when the signal already aborted', async () => {
      assert.equal(await builder().build(hook(), onCompleteEvent(), 'notification', { signal: AbortSignal.abort() }), undefined);
    });
  });

  describe('userEmail', () => {
    it('uses the payload userId when the body overrides it', async () => {
      const payload = await builder().build(hook({ body: { userId: 'user_2' } }), onCompleteEvent(), 'notification');
      assert.equal(payload?.userEmail, 'bob@example.com');
      assert.deepEqual(directory.calls, ['user_2']);
    });

    it('uses the event userId for an email-only projection', async () => {
      const payload = await builder().build(hook({ eventFields: ['userEmail'] }), onCompleteEvent(), 'notification');
      assert.deepEqual(payload, { hookId: 'audit', hookType: 'onComplete', userEmail: 'ada@example.com' });
    });

    it('looks nothing up when the projection leaves out userEmail', async () => {
      const payload = await builder().build(hook({ eventFields: ['userId'] }), onCompleteEvent(), 'notification');
      assert.deepEqual(payload, { userId: 'user_1', hookId: 'audit', hookType: 'onComplete' });
      assert.deepEqual(directory.calls, []);
    });

    it('omits the email for an explicit invalid or empty id', async () => {
      for (const userId of ['', 42, null]) {
        const payload = await builder().build(hook({ body: { userId } }), onCompleteEvent(), 'notification');
        assert.ok(payload && !('userEmail' in payload));
      }
      assert.deepEqual(directory.calls, []);
    });

    it('omits the email when the user has none', async () => {
      const payload = await builder().build(hook(), onCompleteEvent({ userId: 'ghost' }), 'notification');
      assert.ok(payload && !('userEmail' in payload));
    });

    it('logs a look-up error and omits the email', async () => {
      directory.failFor.add('user_1');
      const payload = await builder().build(hook(), onCompleteEvent(), 'notification');
      assert.ok(payload && !('userEmail' in payload));
      assert.ok(log.lines.some((l) => l.includes('email look-up failed') && l.includes('database unavailable')));
    });
  });

  describe('email cache', () => {
    it('looks each user up once while cached', async () => {
      const b = builder();
      for (let i = 0; i < 5; i++) await b.build(hook(), onCompleteEvent(), 'notification');
      assert.deepEqual(directory.calls, ['user_1']);
    });

    it('caches "no email" answers', async () => {
      const b = builder();
      await b.build(hook(), onCompleteEvent({ userId: 'ghost' }), 'notification');
      await b.build(hook(), onCompleteEvent({ userId: 'ghost' }), 'notification');
      assert.deepEqual(directory.calls, ['ghost']);
    });

    it('shares one pending look-up among concurrent sends', async () => {
      const b = builder();
      directory.hold();
      const all = Promise.all(Array.from({ length: 10 }, () => b.build(hook(), onCompleteEvent(), 'notification')));
      await new Promise((r) => setImmediate(r));
      directory.open();
      const payloads = await all;
      assert.deepEqual(directory.calls, ['user_1']);
      assert.ok(payloads.every((p) => p?.userEmail === 'ada@example.com'));
    });

    it('keeps 1,000 users and evicts the least recently used first', async () => {
      const b = builder();
      for (let i = 0; i < 1000; i++) await b.build(hook(), onCompleteEvent({ userId: `u${i}` }), 'notification');
      await b.build(hook(), onCompleteEvent({ userId: 'u0' }), 'notification'); // u0 becomes most recent
      await b.build(hook(), onCompleteEvent({ userId: 'u1000' }), 'notification'); // evicts u1
      assert.equal(directory.calls.length, 1001);
      await b.build(hook(), onCompleteEvent({ userId: 'u0' }), 'notification');
      await b.build(hook(), onCompleteEvent({ userId: 'u999' }), 'notification');
      assert.equal(directory.calls.length, 1001);
      await b.build(hook(), onCompleteEvent({ userId: 'u1' }), 'notification');
      assert.equal(directory.calls.length, 1002);
    });

    it('expires an entry 5 minutes after insertion, however often it was hit', async () => {
      const b = builder();
      await b.build(hook(), onCompleteEvent(), 'notification');
      clock += 200_000;
      await b.build(hook(), onCompleteEvent(), 'notification');
      clock += 99_999; // 299,999 ms after insertion
      await b.build(hook(), onCompleteEvent(), 'notification');
      assert.equal(directory.calls.length, 1);
      clock += 1; // exactly 300,000 ms: expired (issue 9, item 18), so the user is looked up again
      await b.build(hook(), onCompleteEvent(), 'notification');
      assert.equal(directory.calls.length, 2);
      // The new entry is fresh from this second insertion: hit until 299,999 ms after it, expired at 300,000.
      clock += 299_999;
      await b.build(hook(), onCompleteEvent(), 'notification');
      assert.equal(directory.calls.length, 2);
      clock += 1;
      await b.build(hook(), onCompleteEvent(), 'notification');
      assert.equal(directory.calls.length, 3);
    });

    it('is per builder', async () => {
      await builder().build(hook(), onCompleteEvent(), 'notification');
      await builder().build(hook(), onCompleteEvent(), 'notification');
      assert.equal(directory.calls.length, 2);
    });

    it('lets one waiter give up without cancelling the shared look-up', async () => {
      const b = builder();
      directory.hold();
      const controller = new AbortController();
      const quitter = b.build(hook(), onCompleteEvent(), 'notification', { signal: controller.signal });
      const stayer = b.build(hook(), onCompleteEvent(), 'notification');
      await new Promise((r) => setImmediate(r));
      controller.abort();
      assert.equal(await quitter, undefined);
      directory.open();
      assert.equal((await stayer)?.userEmail, 'ada@example.com');
      assert.equal((await b.build(hook(), onCompleteEvent(), 'notification'))?.userEmail, 'ada@example.com');
      assert.deepEqual(directory.calls, ['user_1']);
    });
  });
});
