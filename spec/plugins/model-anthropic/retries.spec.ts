import assert from 'node:assert/strict';
import { HookgateError } from '../../../kernel/errors.js';
import type { ModelRequest } from '../../../kernel/model.js';
import { AnthropicMessagesModel, type AnthropicMessagesModelOptions } from '../../../plugins/model-anthropic/anthropic-messages-model.js';
import { errorBody, FakeAnthropicServer, json, messageStart, stream, textAnswer, textDelta, textStart } from '../../helpers/fake-anthropic-server.js';

const KEY_ENV = 'HOOKGATE_SPEC_ANTHROPIC_RETRY_KEY';
const KEY = 'sk-ant-spec-retry-0123456789';

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'claude-spec', purpose: 'turn', messages: [{ role: 'user', content: 'hi' }], tools: [], signal: new AbortController().signal, operationId: 'op-1', turnIndex: 0, ...overrides };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected the promise to reject');
}

const ok = () => stream(textAnswer('ok'));

describe('plugins/model-anthropic retries (the SDK\'s, against a loopback Messages API)', () => {
  let server: FakeAnthropicServer;

  function makeModel(options: Partial<AnthropicMessagesModelOptions> = {}): AnthropicMessagesModel {
    return new AnthropicMessagesModel({ baseUrl: server.baseUrl, apiKeyEnv: KEY_ENV, model: 'claude-spec', timeoutSeconds: 20, ...options });
  }

  beforeEach(async () => {
    server = await FakeAnthropicServer.start();
    process.env[KEY_ENV] = KEY;
  });

  afterEach(async () => {
    delete process.env[KEY_ENV];
    await server.close();
  });

  it('retries a 429 rate_limit_error after the pause its Retry-After asks for, then returns the answer', async () => {
    server.enqueue(json(errorBody('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'), 429, { 'retry-after': '1' }), ok());
    const res = await makeModel().complete(request());
    assert.equal(res.text, 'ok');
    assert.equal(server.requests.length, 2);
    // The SDK's own first backoff is at most 500 ms: a pause of a second is the server's.
    assert.ok(server.requests[1]!.receivedAt - server.requests[0]!.receivedAt >= 950, 'waited what Retry-After asked');
  });

  it('retries a 529 overloaded_error and a 500 api_error, then returns the answer', async () => {
    server.enqueue(json(errorBody('overloaded_error', 'Overloaded'), 529, { 'retry-after-ms': '10' }), json(errorBody('api_error', 'Internal server error'), 500, { 'retry-after-ms': '10' }), ok());
    const res = await makeModel().complete(request());
    assert.equal(res.text, 'ok');
    assert.equal(server.requests.length, 3);
  });

  it('retries a connection dropped before any answer, then returns the answer', async () => {
    server.enqueue({ kind: 'drop' }, ok());
    const res = await makeModel().complete(request());
    assert.equal(res.text, 'ok');
    assert.equal(server.requests.length, 2);
  });

  it('does not retry a 400 invalid_request_error, and says what the server said', async () => {
    server.enqueue(json(errorBody('invalid_request_error', 'messages: text content blocks must be non-empty'), 400), ok());
    const err = await rejection(makeModel().complete(request()));
    assert.ok(err instanceof HookgateError);
    assert.match(err.message, /400 \(invalid_request_error\): messages: text content blocks must be non-empty/);
    assert.equal(server.requests.length, 1);
  });

  it('gives up after maxRetries, naming the status and the retries', async () => {
    server.enqueue(...[1, 2, 3].map(() => json(errorBody('overloaded_error', 'Overloaded'), 529, { 'retry-after-ms': '10' })));
    const err = await rejection(makeModel({ maxRetries: 1 }).complete(request()));
    assert.ok(err instanceof HookgateError);
    assert.match(err.message, /529 \(overloaded_error\): Overloaded \(retried up to 1 times; models\.anthropic\.maxRetries\)/);
    assert.equal(server.requests.length, 2);
  });

  it('does not retry a stream cut after its headers: its text already reached onTextDelta', async () => {
    server.enqueue(stream([messageStart(1), textStart(0), textDelta(0, 'half')]), ok());
    const deltas: string[] = [];
    const err = await rejection(makeModel().complete(request({ onTextDelta: (d) => deltas.push(d) })));
    assert.match((err as Error).message, /no message_stop/);
    assert.deepEqual(deltas, ['half']);
    assert.equal(server.requests.length, 1);
  });

  it('stops a long Retry-After pause when the caller aborts, with the caller\'s reason and no second request', async function () {
    this.timeout(10_000); // the pause asked for is 30 s: only an abort that cuts it passes
    server.enqueue(json(errorBody('rate_limit_error', 'slow down'), 429, { 'retry-after': '30' }), ok());
    const controller = new AbortController();
    const reason = new Error('user pressed stop');
    const pending = makeModel({ timeoutSeconds: 120 }).complete(request({ signal: controller.signal }));
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    controller.abort(reason);
    assert.equal(await rejection(pending), reason);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(server.requests.length, 1);
  });

  it('fails at once with the server\'s answer when its Retry-After is longer than what is left of timeoutSeconds', async function () {
    this.timeout(10_000); // waiting 30 s or until the deadline would fail this
    server.enqueue(json(errorBody('rate_limit_error', 'slow down'), 429, { 'retry-after': '30' }), ok());
    const err = await rejection(makeModel({ timeoutSeconds: 5 }).complete(request()));
    assert.ok(err instanceof HookgateError);
    assert.match(err.message, /429.*slow down \(the server asks to wait 30s before a retry, more than the [0-9.]+s left of models\.anthropic\.timeoutSeconds\)/);
    assert.equal(err.details.status, 429);
    assert.equal(err.details.retryAfter, '30');
    assert.equal(server.requests.length, 1);
  });

  it('fails on its deadline when the answer after an honoured Retry-After never comes', async function () {
    this.timeout(10_000);
    server.enqueue(json(errorBody('rate_limit_error', 'slow down'), 429, { 'retry-after-ms': '100' }), { kind: 'hang' });
    const err = await rejection(makeModel({ timeoutSeconds: 0.5 }).complete(request()));
    assert.ok(err instanceof HookgateError);
    assert.match(err.message, /no complete answer within 0\.5s \(models\.anthropic\.timeoutSeconds\)/);
    assert.equal(server.requests.length, 2);
  });
});
