import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookRequest } from '../../../kernel/hooks/webhook-transport.js';
import transportFetch, { FetchWebhookTransport } from '../../../plugins/transport-fetch/index.js';
import { json, RecordingReceiver } from '../../helpers/webhook-receiver.js';

const SECRET = 'fetch-secret-0d6e2b';

describe('transport-fetch', () => {
  let receiver: RecordingReceiver;
  let other: RecordingReceiver;
  const transport = new FetchWebhookTransport();

  beforeEach(async () => {
    receiver = await RecordingReceiver.start();
    other = await RecordingReceiver.start();
  });
  afterEach(async () => {
    await receiver.close();
    await other.close();
  });

  function request(overrides: Partial<WebhookRequest> = {}): WebhookRequest {
    return { url: receiver.url(), headers: { Authorization: `Bearer ${SECRET}` }, body: '{"a":1}', timeoutMs: 5000, readResponse: true, maxResponseBytes: 65_536, ...overrides };
  }

  it('is a plugin that provides a webhook transport for fetch delivery', () => {
    assert.equal(transportFetch.id, 'transport-fetch');
    assert.equal(transportFetch.provides?.[0]?.id, 'webhook-transport');
    assert.equal(transport.delivery, 'fetch');
  });

  it('POSTs the JSON body with the given headers', async () => {
    receiver.reply = json({ ok: true });
    const response = await transport.send(request());
    assert.deepEqual(response, { ok: true, status: 200, body: Buffer.from('{"ok":true}') });
    const [got] = receiver.requests;
    assert.equal(got.method, 'POST');
    assert.equal(got.rawBody, '{"a":1}');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers.authorization, `Bearer ${SECRET}`);
  });

  it('does not read the body when the response is not needed', async () => {
    receiver.reply = json({ ignored: true });
    assert.deepEqual(await transport.send(request({ readResponse: false })), { ok: true, status: 200 });
  });

  it('reports a non-2xx as http_error with its status', async () => {
    receiver.reply = { status: 500, body: 'boom' };
    assert.deepEqual(await transport.send(request()), { ok: false, kind: 'http_error', status: 500, message: 'receiver answered HTTP 500' });
  });

  it('reports a redirect as http_error and never follows it', async () => {
    receiver.reply = { status: 302, headers: { location: other.url('/steal') } };
    const response = await transport.send(request());
    assert.deepEqual(response, { ok: false, kind: 'http_error', status: 302, message: 'receiver answered HTTP 302 (redirects are not followed)' });
    assert.equal(other.requests.length, 0);
  });

  it('reports a hanging receiver as a timeout', async () => {
    // The receiver never answers: a response at all means the transport's timeout ended the wait.
    receiver.reply = { hang: true };
    const response = await transport.send(request({ timeoutMs: 1000 }));
    assert.equal(!response.ok && response.kind, 'timeout');
    assert.equal(receiver.requests.length, 1);
    await receiver.waitFor(([got]) => got!.abandoned);
  });

  it('applies the timeout to a body that never ends', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"decision":');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const response = await transport.send(request({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, timeoutMs: 500 }));
      assert.equal(!response.ok && response.kind, 'timeout');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('reports a caller abort as cancelled', async () => {
    receiver.reply = { hang: true };
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const response = await transport.send(request({ signal: controller.signal }));
    assert.equal(!response.ok && response.kind, 'cancelled');
  });

  it('sends nothing when the caller already aborted', async () => {
    const response = await transport.send(request({ signal: AbortSignal.abort() }));
    assert.equal(!response.ok && response.kind, 'cancelled');
    assert.equal(receiver.requests.length, 0);
  });

  it('reports a connection reset as network_error', async () => {
    receiver.reply = { reset: true };
    const response = await transport.send(request());
    assert.equal(!response.ok && response.kind, 'network_error');
  });

  it('reports a refused connection as network_error', async () => {
    const closed = await RecordingReceiver.start();
    const url = closed.url();
    await closed.close();
    const response = await transport.send(request({ url }));
    assert.equal(!response.ok && response.kind, 'network_error');
  });

  it('stops reading after maxResponseBytes + 1 and reports tooLarge', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(16_384, 0x20);
      const pump = () => {
        while (res.write(chunk)) {
          /* keep writing until the socket pushes back */
        }
      };
      res.on('drain', pump);
      pump();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const response = await transport.send(request({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` }));
      assert.deepEqual(response, { ok: true, status: 200, tooLarge: true });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('reads a body of exactly maxResponseBytes', async () => {
    receiver.reply = { status: 200, body: 'x'.repeat(10) };
    const response = await transport.send(request({ maxResponseBytes: 10 }));
    assert.deepEqual(response, { ok: true, status: 200, body: Buffer.from('x'.repeat(10)) });
    receiver.reply = { status: 200, body: 'x'.repeat(11) };
    assert.deepEqual(await transport.send(request({ maxResponseBytes: 10 })), { ok: true, status: 200, tooLarge: true });
  });

  it('does not retry', async () => {
    receiver.reply = { status: 503 };
    await transport.send(request());
    assert.equal(receiver.requests.length, 1);
  });

  it('reports an invalid header value as a configuration failure without quoting it', async () => {
    const response = await transport.send(request({ headers: { 'X-Key': `${SECRET}\r\nX-Injected: 1` } }));
    assert.equal(!response.ok && response.kind, 'configuration');
    assert.ok(!JSON.stringify(response).includes(SECRET));
    assert.equal(receiver.requests.length, 0);
  });

  it('never puts header values in failure messages', async () => {
    const failures = [];
    for (const reply of [{ status: 500 }, { reset: true }, { status: 301, headers: { location: '/x' } }] as const) {
      receiver.reply = reply;
      failures.push(await transport.send(request()));
    }
    assert.ok(!JSON.stringify(failures).includes(SECRET));
  });
});
