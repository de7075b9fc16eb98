import assert from 'node:assert/strict';
import type { SerializedHook, WebhookConfig } from '../../../../kernel/hooks/hook-types.js';
import type { WebhookTransport } from '../../../../kernel/hooks/webhook-transport.js';
import { controlStep } from '../../../../kernel/hooks/webhook/control-step.js';
import { createWebhookPayloadBuilder } from '../../../../kernel/hooks/webhook/webhook-payload.js';
import { WebhookSender, type WebhookSenderOptions } from '../../../../kernel/hooks/webhook/webhook-sender.js';
import { FetchWebhookTransport } from '../../../../plugins/transport-fetch/fetch-transport.js';
import { afterToolCallEvent, beforeToolCallEvent, CountingDirectory, onCompleteEvent } from './fixtures.js';
import { captureLogger } from '../../../helpers/capture-logger.js';
import { json, RecordingReceiver, type ReceiverReply } from '../../../helpers/webhook-receiver.js';

const SECRET = 'hook-secret-4f9a1c7e';

describe('WebhookSender', () => {
  let receiver: RecordingReceiver;
  let other: RecordingReceiver;
  let env: Record<string, string | undefined>;
  let log: ReturnType<typeof captureLogger>;
  let directory: CountingDirectory;

  beforeEach(async () => {
    receiver = await RecordingReceiver.start();
    other = await RecordingReceiver.start();
    env = { HOOK_TOKEN: SECRET };
    log = captureLogger();
    directory = new CountingDirectory({ user_1: 'ada@example.com' });
  });

  afterEach(async () => {
    await receiver.close();
    await other.close();
  });

  function sender(overrides: Partial<WebhookSenderOptions> = {}): WebhookSender {
    return new WebhookSender({
      transports: [new FetchWebhookTransport()],
      payloadBuilder: createWebhookPayloadBuilder({ logger: log.logger, userDirectory: directory }),
      logger: log.logger,
      scrubber: log.scrubber,
      env,
      urlBases: {},
      ...overrides,
    });
  }

  function control(type: 'beforeToolCall' | 'afterToolCall' = 'beforeToolCall', webhook: Partial<WebhookConfig> = {}): SerializedHook {
    return {
      id: 'policy',
      type,
      webhook: { url: receiver.url(), responseHandling: 'toolCall', headers: { Authorization: 'Bearer ${HOOK_TOKEN}' }, allowedEnvVars: ['HOOK_TOKEN'], ...webhook },
    };
  }

  function notification(webhook: Partial<WebhookConfig> = {}, type: SerializedHook['type'] = 'onComplete'): SerializedHook {
    return { id: 'audit', type, webhook: { url: receiver.url(), headers: { Authorization: 'Bearer ${HOOK_TOKEN}' }, allowedEnvVars: ['HOOK_TOKEN'], ...webhook } };
  }

  async function ask(reply: ReceiverReply, type: 'beforeToolCall' | 'afterToolCall' = 'beforeToolCall', webhook: Partial<WebhookConfig> = {}) {
    receiver.reply = reply;
    const event = type === 'beforeToolCall' ? beforeToolCallEvent() : afterToolCallEvent();
    return sender().evaluateControl(control(type, webhook), event);
  }

  describe('controls: notification-shaped responses move on to the next control', () => {
    const shapes: Array<[string, ReceiverReply]> = [
      ['HTTP 204', { status: 204 }],
      ['an empty 200 body', { status: 200, body: '' }],
      ['invalid JSON', { status: 200, body: '{"decision": "deny"' }],
      ['{}', json({})],
      ['[]', json([])],
      ['a number', json(1)],
      ['a string', json('x')],
      ['null', json(null)],
      ['only a nested hookSpecificOutput', json({ hookSpecificOutput: { hookEventName: 'beforeToolCall', permissionDecision: 'deny' } })],
      ['an array holding a decision', json([{ decision: 'deny' }])],
    ];
    for (const [name, reply] of shapes) {
      it(`treats ${name} as a notification`, async () => {
        assert.deepEqual(await ask(reply), { kind: 'notification' });
        assert.equal(receiver.requests.length, 1);
      });
    }

    it('keeps a notification a notification under onError: block', async () => {
      const hook = control('beforeToolCall', { onError: 'block' });
      receiver.reply = json({});
      const outcome = await sender().evaluateControl(hook, beforeToolCallEvent());
      assert.deepEqual(controlStep(hook, outcome), { next: true });
    });
  });

  describe('controls: decisions', () => {
    it('allows on { decision: "allow" } and discards extra fields', async () => {
      assert.deepEqual(await ask(json({ decision: 'allow', updatedInput: { path: '/etc/passwd' }, additionalContext: 'x' })), { kind: 'allow' });
    });

    it('denies with the receiver reason', async () => {
      assert.deepEqual(await ask(json({ decision: 'deny', reason: '禁止执行该操作', extra: true })), { kind: 'deny', reason: '禁止执行该操作' });
    });

    it('uses the default reason for a deny without one', async () => {
      assert.deepEqual(await ask(json({ decision: 'deny' })), { kind: 'deny', reason: 'Blocked by beforeToolCall hook.' });
      assert.deepEqual(await ask(json({ decision: 'deny' }), 'afterToolCall'), { kind: 'deny', reason: 'Blocked by afterToolCall hook.' });
    });

    it('uses the default reason for a deny with an empty reason', async () => {
      assert.deepEqual(await ask(json({ decision: 'deny', reason: '' }), 'afterToolCall'), { kind: 'deny', reason: 'Blocked by afterToolCall hook.' });
    });

    it('accepts a decision with a 2xx status other than 200', async () => {
      assert.deepEqual(await ask(json({ decision: 'deny', reason: 'created' }, 201)), { kind: 'deny', reason: 'created' });
    });

    it('turns a deny into a hook_denied verdict that stops the walk', async () => {
      const hook = control();
      receiver.reply = json({ decision: 'deny', reason: 'no' });
      const step = controlStep(hook, await sender().evaluateControl(hook, beforeToolCallEvent()));
      assert.deepEqual(step, { next: false, verdict: { decision: 'blocked', reason: 'no', classification: 'hook_denied', hookId: 'policy' } });
    });
  });

  describe('controls: errors follow onError', () => {
    it('treats an invalid decision as an error', async () => {
      assert.equal((await ask(json({ decision: 'ask' }))).kind, 'error');
      assert.equal((await ask(json({ decision: 'deny', reason: 42 }))).kind, 'error');
      assert.equal((await ask(json({ decision: true }))).kind, 'error');
    });

    it('treats a non-2xx status as an error, even with a decision in the body', async () => {
      assert.deepEqual(await ask(json({ decision: 'allow' }, 500)), { kind: 'error', reason: 'http_error (status 500)' });
    });

    it('accepts a body of exactly 65,536 bytes', async () => {
      const body = padded({ decision: 'deny', reason: 'big' }, 65_536);
      assert.deepEqual(await ask({ status: 200, body }), { kind: 'deny', reason: 'big' });
    });

    it('treats a body of 65,537 bytes as too large', async () => {
      const body = padded({ decision: 'allow' }, 65_537);
      assert.deepEqual(await ask({ status: 200, body }), { kind: 'error', reason: 'response body over 65536 bytes' });
    });

    it('treats invalid UTF-8 as an error', async () => {
      assert.deepEqual(await ask({ status: 200, body: Buffer.from([0x7b, 0x22, 0x64, 0xff, 0x22, 0x7d]) }), { kind: 'error', reason: 'response body is not valid UTF-8' });
    });

    it('treats a receiver that hangs past the timeout as an error', async () => {
      // The receiver never answers: an outcome at all means the sender's own timeout ended the wait.
      const outcome = await ask({ hang: true }, 'beforeToolCall', { timeout: 1 });
      assert.deepEqual(outcome, { kind: 'error', reason: 'timeout' });
      assert.equal(receiver.requests.length, 1, 'the request reached the receiver before the sender gave up');
      await receiver.waitFor(([request]) => request!.abandoned);
    });

    it('treats a connection reset as an error', async () => {
      assert.deepEqual(await ask({ reset: true }), { kind: 'error', reason: 'network_error' });
    });

    it('never follows a redirect', async () => {
      other.reply = json({ decision: 'allow' });
      const outcome = await ask({ status: 302, headers: { location: other.url('/elsewhere') } });
      assert.deepEqual(outcome, { kind: 'error', reason: 'http_error (status 302)' });
      assert.equal(other.requests.length, 0);
    });

    it('blocks with hook_control_error under onError: block', async () => {
      const hook = control('afterToolCall', { onError: 'block' });
      receiver.reply = { status: 503 };
      const step = controlStep(hook, await sender().evaluateControl(hook, afterToolCallEvent()));
      assert.deepEqual(step, { next: false, verdict: { decision: 'blocked', reason: 'hook_control_error', classification: 'hook_control_error', hookId: 'policy' } });
    });

    it('moves on to the next control under onError: continue (the default)', async () => {
      for (const onError of ['continue', undefined] as const) {
        const hook = control('afterToolCall', onError ? { onError } : {});
        receiver.reply = { status: 503 };
        assert.deepEqual(controlStep(hook, await sender().evaluateControl(hook, afterToolCallEvent())), { next: true });
      }
    });

    it('treats an unresolvable header template as an error without sending', async () => {
      env.HOOK_TOKEN = undefined;
      const outcome = await ask(json({ decision: 'allow' }));
      assert.equal(outcome.kind, 'error');
      assert.equal(receiver.requests.length, 0);
    });
  });

  describe('controls: cancellation is never permission', () => {
    it('is cancelled without a request when the signal already aborted', async () => {
      receiver.reply = json({ decision: 'allow' });
      const outcome = await sender().evaluateControl(control(), beforeToolCallEvent(), AbortSignal.abort());
      assert.deepEqual(outcome, { kind: 'cancelled' });
      assert.equal(receiver.requests.length, 0);
    });

    it('is cancelled when the signal aborts while the receiver thinks', async () => {
      receiver.reply = { hang: true };
      const controller = new AbortController();
      const pending = sender().evaluateControl(control(), beforeToolCallEvent(), controller.signal);
      setTimeout(() => controller.abort(), 100);
      assert.deepEqual(await pending, { kind: 'cancelled' });
    });

    it('is cancelled when the signal aborts after an allow arrived', async () => {
      receiver.reply = json({ decision: 'allow' });
      const controller = new AbortController();
      const real = new FetchWebhookTransport();
      const abortingAfterResponse: WebhookTransport = {
        delivery: 'fetch',
        send: async (request) => {
          const response = await real.send(request);
          controller.abort();
          return response;
        },
      };
      const outcome = await sender({ transports: [abortingAfterResponse] }).evaluateControl(control(), beforeToolCallEvent(), controller.signal);
      assert.deepEqual(outcome, { kind: 'cancelled' });
      assert.equal(receiver.requests.length, 1);
      assert.deepEqual(controlStep(control(), outcome), { next: false, verdict: { decision: 'cancelled' } });
    });
  });

  describe('control payloads', () => {
    it('sends the whole event with the untrimmed result, hookId, hookType and userEmail, as a JSON POST', async () => {
      receiver.reply = json({ decision: 'allow' });
      const event = afterToolCallEvent({ userEmail: 'forged@example.com' } as never);
      await sender().evaluateControl(control('afterToolCall'), event);
      const [request] = receiver.requests;
      assert.equal(request.method, 'POST');
      assert.equal(request.headers['content-type'], 'application/json');
      assert.equal(request.headers.authorization, `Bearer ${SECRET}`);
      const { mock: _mock, ...expected } = { ...event, mock: undefined };
      assert.deepEqual(request.body, { ...expected, hookId: 'policy', hookType: 'afterToolCall', userEmail: 'ada@example.com' });
      assert.deepEqual(request.body.result.data, { work: 'x'.repeat(50) });
    });

    it('never sends the mock callback', async () => {
      receiver.reply = json({});
      await sender().evaluateControl(control(), beforeToolCallEvent());
      assert.ok(!('mock' in receiver.requests[0].body));
    });

    it('still asks without userEmail when the look-up fails', async () => {
      directory.failFor.add('user_1');
      receiver.reply = json({ decision: 'allow' });
      assert.deepEqual(await sender().evaluateControl(control(), beforeToolCallEvent()), { kind: 'allow' });
      assert.ok(!('userEmail' in receiver.requests[0].body));
    });
  });

  describe('notifications', () => {
    it('ignores the response content of any 2xx', async () => {
      for (const reply of [{ status: 204 }, json({ decision: 'deny' }), { status: 200, body: 'not json' }, { status: 205 }] as ReceiverReply[]) {
        receiver.reply = reply;
        assert.deepEqual(await sender().sendNotification(notification(), onCompleteEvent()), { ok: true });
      }
    });

    it('sends the projection with hookId, hookType, body last and the email', async () => {
      const hook = notification({ eventFields: ['operationId', 'status', 'missing', 'userEmail'], body: { source: 'hookgate', status: 'overridden' } });
      await sender().sendNotification(hook, onCompleteEvent());
      assert.deepEqual(receiver.requests[0].body, { operationId: 'op_1', status: 'overridden', hookId: 'audit', hookType: 'onComplete', source: 'hookgate', userEmail: 'ada@example.com' });
    });

    it('trims only skill Work data from afterToolCall results (issue 9, item 19)', async () => {
      const workRegistration = { type: 'skill', name: 'report', data: { rows: [1, 2] }, args: { raw: 'payload' } };
      const base = afterToolCallEvent();
      await sender().sendNotification(notification({}, 'afterToolCall'), { ...base, result: { ...base.result, workRegistration } });
      assert.deepEqual(receiver.requests[0].body.result, {
        content: 'file text',
        success: true,
        executionTime: 12,
        data: { work: 'x'.repeat(50) },
        args: { raw: 'payload' },
        workRegistration: { type: 'skill', name: 'report', data: null },
      });
    });

    it('reports a failed delivery as non-critical by default', async () => {
      receiver.reply = { status: 500 };
      const result = await sender().sendNotification(notification(), onCompleteEvent());
      assert.deepEqual(result, { ok: false, kind: 'http_error', critical: false, status: 500, message: 'receiver answered HTTP 500' });
    });

    it('reports a failed delivery with fallback none as critical', async () => {
      receiver.reply = { reset: true };
      const result = await sender().sendNotification(notification({ fallback: 'none' }), onCompleteEvent());
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.kind, 'network_error');
      assert.equal(!result.ok && result.critical, true);
    });

    it('reports a cancelled delivery as not critical and sends nothing', async () => {
      const result = await sender().sendNotification(notification({ fallback: 'none' }), onCompleteEvent(), AbortSignal.abort());
      assert.deepEqual(result, { ok: false, kind: 'cancelled', critical: false, message: 'cancelled before sending' });
      assert.equal(receiver.requests.length, 0);
    });

    it('resolves an app-relative URL against the internal base URL', async () => {
      const hook = notification({ url: '/hooks/done' });
      await sender({ urlBases: { internalBaseUrl: receiver.origin + '/internal', publicBaseUrl: 'https://public.invalid' } }).sendNotification(hook, onCompleteEvent());
      assert.equal(receiver.requests[0].path, '/internal/hooks/done');
    });

    it('is a configuration failure when an app-relative URL has no base', async () => {
      const result = await sender().sendNotification(notification({ url: '/hooks/done', fallback: 'none' }), onCompleteEvent());
      assert.equal(!result.ok && result.kind, 'configuration');
      assert.equal(!result.ok && result.critical, true);
    });

    it('uses a rotated env value on the next send', async () => {
      const s = sender();
      await s.sendNotification(notification(), onCompleteEvent());
      env.HOOK_TOKEN = 'rotated-secret-7b2d';
      await s.sendNotification(notification(), onCompleteEvent());
      assert.deepEqual(receiver.requests.map((r) => r.headers.authorization), [`Bearer ${SECRET}`, 'Bearer rotated-secret-7b2d']);
    });
  });

  describe('secrets', () => {
    it('keeps resolved header values out of results, logs and errors', async () => {
      const s = sender();
      receiver.reply = { status: 500, body: `echo ${SECRET}` };
      const results = [
        await s.sendNotification(notification({ fallback: 'none' }), onCompleteEvent()),
        await s.evaluateControl(control('beforeToolCall', { onError: 'block' }), beforeToolCallEvent()),
      ];
      receiver.reply = { reset: true };
      results.push(await s.evaluateControl(control(), beforeToolCallEvent()));
      env.HOOK_TOKEN = `${SECRET}\r\nX-Evil: 1`;
      results.push(await s.sendNotification(notification(), onCompleteEvent()));
      log.logger.error(`a careless line with ${SECRET}`);
      assert.ok(log.lines.length >= 5);
      const everything = JSON.stringify(results) + log.lines.join('\n');
      assert.ok(!everything.includes(SECRET), everything);
      assert.ok(log.lines.at(-1)!.includes('[redacted]'));
    });
  });
});

/** A JSON body padded with spaces to exactly `bytes` bytes. */
function padded(value: unknown, bytes: number): string {
  const text = JSON.stringify(value);
  return text + ' '.repeat(bytes - Buffer.byteLength(text));
}
