import assert from 'node:assert/strict';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { isHookgateError } from '../../../../kernel/errors.js';
import { createWebhookPayloadBuilder } from '../../../../kernel/hooks/webhook/webhook-payload.js';
import { WebhookSender } from '../../../../kernel/hooks/webhook/webhook-sender.js';
import { generateSigningSecret, signWebhook, verifyWebhookSignature } from '../../../../kernel/hooks/webhook/signing.js';
import { FetchWebhookTransport } from '../../../../plugins/transport-fetch/fetch-transport.js';
import { onCompleteEvent } from './fixtures.js';
import { captureLogger } from '../../../helpers/capture-logger.js';
import { RecordingReceiver } from '../../../helpers/webhook-receiver.js';

// The example secret and signature from the Standard Webhooks specification's test vectors.
const SPEC_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SPEC_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const SPEC_TIMESTAMP = 1614265330;
const SPEC_BODY = '{"test": 2432232314}';
const SPEC_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

describe('Standard Webhooks signing', () => {
  let receiver: RecordingReceiver;
  beforeEach(async () => (receiver = await RecordingReceiver.start()));
  afterEach(async () => receiver.close());

  it('matches the specification test vector', () => {
    const headers = signWebhook(SPEC_SECRET, SPEC_BODY, { id: SPEC_ID, timestampSeconds: SPEC_TIMESTAMP });
    assert.deepEqual(headers, { 'webhook-id': SPEC_ID, 'webhook-timestamp': String(SPEC_TIMESTAMP), 'webhook-signature': SPEC_SIGNATURE });
  });

  it('signs real deliveries so the receiver can verify them', async () => {
    const secret = generateSigningSecret();
    const log = captureLogger();
    const sender = new WebhookSender({
      transports: [new FetchWebhookTransport()],
      payloadBuilder: createWebhookPayloadBuilder({ logger: log.logger }),
      logger: log.logger,
      scrubber: log.scrubber,
      env: {},
      urlBases: {},
      signingSecret: () => secret,
    });
    await sender.sendNotification({ id: 'audit', type: 'onComplete', webhook: { url: receiver.url() } }, onCompleteEvent());
    const [request] = receiver.requests;
    assert.match(String(request.headers['webhook-id']), /^msg_/);
    assert.deepEqual(verifyWebhookSignature(secret, request.headers, request.rawBody), { ok: true });
  });

  it('rejects a tampered body', () => {
    const headers = signWebhook(SPEC_SECRET, SPEC_BODY);
    assert.deepEqual(verifyWebhookSignature(SPEC_SECRET, headers, SPEC_BODY.replace('2', '3')), { ok: false, reason: 'bad_signature' });
  });

  it('rejects another secret', () => {
    const headers = signWebhook(SPEC_SECRET, SPEC_BODY);
    assert.deepEqual(verifyWebhookSignature(generateSigningSecret(), headers, SPEC_BODY), { ok: false, reason: 'bad_signature' });
  });

  it('rejects a timestamp outside the tolerance', () => {
    const headers = signWebhook(SPEC_SECRET, SPEC_BODY, { id: SPEC_ID, timestampSeconds: SPEC_TIMESTAMP });
    assert.deepEqual(verifyWebhookSignature(SPEC_SECRET, headers, SPEC_BODY, 300, SPEC_TIMESTAMP + 301), { ok: false, reason: 'timestamp_out_of_tolerance' });
    assert.deepEqual(verifyWebhookSignature(SPEC_SECRET, headers, SPEC_BODY, 300, SPEC_TIMESTAMP + 300), { ok: true });
  });

  it('accepts any one matching signature among several', () => {
    const headers = { 'Webhook-Id': SPEC_ID, 'Webhook-Timestamp': String(SPEC_TIMESTAMP), 'Webhook-Signature': `v1,bm90LWl0 v2,xyz ${SPEC_SIGNATURE}` };
    assert.deepEqual(verifyWebhookSignature(SPEC_SECRET, headers, SPEC_BODY, 300, SPEC_TIMESTAMP), { ok: true });
  });

  it('reports missing headers', () => {
    assert.deepEqual(verifyWebhookSignature(SPEC_SECRET, {}, SPEC_BODY), { ok: false, reason: 'missing_headers' });
  });

  it('refuses a malformed secret without quoting it', () => {
    assert.throws(() => signWebhook('not-a-secret-value', 'x'), (err) => isHookgateError(err, 'WEBHOOK_CONFIG_INVALID') && !err.message.includes('not-a-secret-value'));
  });
});

describe('Standard Webhooks signing agrees with the reference library (standardwebhooks)', () => {
  const body = JSON.stringify({ type: 'beforeToolCall', args: { path: 'notes/ü.txt', content: 'x'.repeat(5000) } });

  it('the library verifies what signWebhook signs', () => {
    const secret = generateSigningSecret();
    const headers = signWebhook(secret, body);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  });

  it('verifyWebhookSignature accepts what the library signs, and refuses it for another body', () => {
    const secret = generateSigningSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': 'msg_lib', 'webhook-timestamp': String(timestamp), 'webhook-signature': new Webhook(secret).sign('msg_lib', new Date(timestamp * 1000), body) };
    assert.deepEqual(verifyWebhookSignature(secret, headers, body), { ok: true });
    assert.deepEqual(verifyWebhookSignature(secret, headers, Buffer.from(body)), { ok: true });
    assert.deepEqual(verifyWebhookSignature(secret, headers, body + ' '), { ok: false, reason: 'bad_signature' });
  });

  it('the library refuses what signWebhook signed with another secret', () => {
    const headers = signWebhook(generateSigningSecret(), body);
    assert.throws(() => new Webhook(generateSigningSecret()).verify(body, headers), WebhookVerificationError);
  });
});
