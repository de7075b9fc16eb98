import assert from 'node:assert/strict';
import type { WebhookRequest } from '../../../kernel/hooks/webhook-transport.js';
import type { SerializedHook } from '../../../kernel/hooks/hook-types.js';
import { createWebhookPayloadBuilder } from '../../../kernel/hooks/webhook/webhook-payload.js';
import { WebhookSender } from '../../../kernel/hooks/webhook/webhook-sender.js';
import { FetchWebhookTransport } from '../../../plugins/transport-fetch/fetch-transport.js';
import transportQstash, { QStashWebhookTransport } from '../../../plugins/transport-qstash/index.js';
import { onCompleteEvent } from '../../kernel/hooks/webhook/fixtures.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { FakeQStashServer } from './fake-qstash-server.js';

const QSTASH_TOKEN = 'qstash-token-9c1e55aa';
const HOOK_SECRET = 'hook-secret-77e0c3';

describe('transport-qstash', () => {
  let qstash: FakeQStashServer;
  let destination: RecordingReceiver;
  let env: Record<string, string | undefined>;
  let log: ReturnType<typeof captureLogger>;

  beforeEach(async () => {
    qstash = await FakeQStashServer.start(QSTASH_TOKEN);
    destination = await RecordingReceiver.start();
    env = { QSTASH_TOKEN, HOOK_TOKEN: HOOK_SECRET };
    log = captureLogger();
  });
  afterEach(async () => {
    await qstash.close();
    await destination.close();
  });

  const transport = (overrides: { baseUrl?: string } = {}) =>
    new QStashWebhookTransport({ baseUrl: overrides.baseUrl ?? qstash.url, tokenEnv: 'QSTASH_TOKEN', env, scrubber: log.scrubber });

  function request(overrides: Partial<WebhookRequest> = {}): WebhookRequest {
    return {
      url: destination.url('/hook'),
      headers: { Authorization: `Bearer ${HOOK_SECRET}`, 'X-Team': 'sec' },
      body: '{"hookId":"audit"}',
      timeoutMs: 5000,
      readResponse: false,
      maxResponseBytes: 0,
      ...overrides,
    };
  }

  function sender(): WebhookSender {
    return new WebhookSender({
      transports: [transport(), new FetchWebhookTransport()],
      payloadBuilder: createWebhookPayloadBuilder({ logger: log.logger }),
      logger: log.logger,
      scrubber: log.scrubber,
      env,
      urlBases: {},
    });
  }

  function qstashHook(fallback?: 'fetch' | 'none'): SerializedHook {
    return {
      id: 'queued',
      type: 'onComplete',
      webhook: {
        url: destination.url('/hook'),
        delivery: 'qstash',
        timeout: 7,
        headers: { Authorization: 'Bearer ${HOOK_TOKEN}' },
        allowedEnvVars: ['HOOK_TOKEN'],
        ...(fallback ? { fallback } : {}),
      },
    };
  }

  it('is a plugin that provides a webhook transport for qstash delivery', () => {
    assert.equal(transportQstash.id, 'transport-qstash');
    assert.equal(transportQstash.provides?.[0]?.id, 'webhook-transport');
    assert.equal(transport().delivery, 'qstash');
  });

  it('publishes with the bearer token, the forwarded headers, the timeout and the body', async () => {
    const response = await transport().send(request({ timeoutMs: 7000 }));
    assert.deepEqual(response, { ok: true, status: 201 });
    const [message] = qstash.published;
    assert.equal(message.destination, destination.url('/hook'));
    assert.equal(message.headers.authorization, `Bearer ${QSTASH_TOKEN}`);
    assert.equal(message.headers['content-type'], 'application/json');
    assert.equal(message.headers['upstash-timeout'], '7s');
    assert.equal(message.headers['upstash-method'], 'POST');
    assert.deepEqual(message.forwarded, { authorization: `Bearer ${HOOK_SECRET}`, 'x-team': 'sec' });
    assert.equal(message.body, '{"hookId":"audit"}');
  });

  it('reaches the destination end to end through the queue', async () => {
    await transport().send(request());
    await qstash.delivered();
    const [got] = destination.requests;
    assert.equal(got.method, 'POST');
    assert.equal(got.path, '/hook');
    assert.equal(got.headers.authorization, `Bearer ${HOOK_SECRET}`);
    assert.equal(got.headers['x-team'], 'sec');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.deepEqual(got.body, { hookId: 'audit' });
  });

  it('is a configuration failure when the token variable is unset, and publishes nothing', async () => {
    env.QSTASH_TOKEN = undefined;
    assert.deepEqual(await transport().send(request()), { ok: false, kind: 'configuration', message: 'QStash token env var QSTASH_TOKEN is not set' });
    env.QSTASH_TOKEN = '  ';
    assert.equal((await transport().send(request())).ok, false);
    assert.equal(qstash.published.length, 0);
  });

  it('reads the token at every send', async () => {
    const t = transport();
    env.QSTASH_TOKEN = 'stale-token-value';
    assert.deepEqual(await t.send(request()), { ok: false, kind: 'http_error', status: 401, message: 'QStash publish failed with HTTP 401' });
    env.QSTASH_TOKEN = QSTASH_TOKEN;
    assert.deepEqual(await t.send(request()), { ok: true, status: 201 });
  });

  it('reduces QStash errors to their status code, without SDK text or the token', async () => {
    qstash.failWith = 500;
    const response = await transport().send(request());
    assert.deepEqual(response, { ok: false, kind: 'http_error', status: 500, message: 'QStash publish failed with HTTP 500' });
    assert.ok(!JSON.stringify(response).includes(QSTASH_TOKEN));
  });

  it('reports an unreachable QStash as network_error', async () => {
    const url = qstash.url;
    await qstash.close();
    const response = await transport({ baseUrl: url }).send(request());
    assert.equal(!response.ok && response.kind, 'network_error');
    qstash = await FakeQStashServer.start(QSTASH_TOKEN);
  });

  it('is cancelled without publishing when the signal already aborted', async () => {
    const response = await transport().send(request({ signal: AbortSignal.abort() }));
    assert.equal(!response.ok && response.kind, 'cancelled');
    assert.equal(qstash.published.length, 0);
  });

  describe('through WebhookSender', () => {
    it('delivers a qstash hook through the queue with the enriched payload', async () => {
      const result = await sender().sendNotification(qstashHook(), onCompleteEvent());
      assert.deepEqual(result, { ok: true });
      await qstash.delivered();
      assert.equal(qstash.published.length, 1);
      assert.equal(destination.requests.length, 1);
      assert.equal(destination.requests[0].body.hookId, 'queued');
      assert.equal(destination.requests[0].headers.authorization, `Bearer ${HOOK_SECRET}`);
    });

    it('falls back to fetch once by default when QStash fails, and logs it without secrets', async () => {
      qstash.failWith = 503;
      const result = await sender().sendNotification(qstashHook(), onCompleteEvent());
      assert.deepEqual(result, { ok: true });
      assert.equal(destination.requests.length, 1);
      assert.equal(destination.requests[0].headers.authorization, `Bearer ${HOOK_SECRET}`);
      const fallbackLines = log.lines.filter((l) => l.includes('falling back to fetch'));
      assert.equal(fallbackLines.length, 1);
      assert.match(fallbackLines[0], /"status":503/);
      assert.ok(!log.lines.join('\n').includes(HOOK_SECRET));
      assert.ok(!log.lines.join('\n').includes(QSTASH_TOKEN));
    });

    it('falls back when the QStash token is missing', async () => {
      env.QSTASH_TOKEN = undefined;
      assert.deepEqual(await sender().sendNotification(qstashHook('fetch'), onCompleteEvent()), { ok: true });
      assert.equal(destination.requests.length, 1);
    });

    it('falls back only once: a failing fallback is the result', async () => {
      qstash.failWith = 500;
      destination.reply = { status: 500 };
      const result = await sender().sendNotification(qstashHook(), onCompleteEvent());
      assert.deepEqual(result, { ok: false, kind: 'http_error', critical: false, status: 500, message: 'receiver answered HTTP 500' });
      assert.equal(destination.requests.length, 1);
    });

    it('does not fall back with fallback none and reports a critical failure', async () => {
      qstash.failWith = 500;
      const result = await sender().sendNotification(qstashHook('none'), onCompleteEvent());
      assert.deepEqual(result, { ok: false, kind: 'http_error', critical: true, status: 500, message: 'QStash publish failed with HTTP 500' });
      assert.equal(destination.requests.length, 0);
    });
  });
});
