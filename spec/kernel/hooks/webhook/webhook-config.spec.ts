import assert from 'node:assert/strict';
import { HookgateError } from '../../../../kernel/errors.js';
import { validateWebhookConfig } from '../../../../kernel/hooks/webhook/webhook-config.js';

const WHERE = 'hooks[2] "audit"';

function rejects(raw: unknown, message: string, type: Parameters<typeof validateWebhookConfig>[0] = 'afterToolCall'): HookgateError {
  let caught: unknown;
  try {
    validateWebhookConfig(type, raw, WHERE);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof HookgateError, 'expected a HookgateError');
  assert.equal(caught.code, 'WEBHOOK_CONFIG_INVALID');
  assert.equal(caught.message, message);
  return caught;
}

describe('validateWebhookConfig', () => {
  it('accepts every documented field and returns a copy the caller can no longer change', () => {
    const raw = {
      url: 'https://example.com/hooks',
      delivery: 'qstash',
      timeout: 5,
      headers: { Authorization: 'Bearer ${HOOK_TOKEN}' },
      allowedEnvVars: ['HOOK_TOKEN'],
      eventFields: ['toolCallId', 'userEmail'],
      body: { source: 'audit', nested: { a: 1 } },
      responseHandling: 'ignore',
      onError: 'continue',
      fallback: 'none',
    };
    const config = validateWebhookConfig('afterToolCall', raw, WHERE);
    assert.deepEqual(config, raw);
    raw.headers.Authorization = 'changed';
    raw.eventFields.push('more');
    (raw.body.nested as { a: number }).a = 2;
    assert.equal(config.headers?.Authorization, 'Bearer ${HOOK_TOKEN}');
    assert.deepEqual(config.eventFields, ['toolCallId', 'userEmail']);
    assert.deepEqual(config.body, { source: 'audit', nested: { a: 1 } });
  });

  it('writes no defaults into the stored config', () => {
    assert.deepEqual(validateWebhookConfig('onComplete', { url: '/hooks/done' }, WHERE), { url: '/hooks/done' });
  });

  it('rejects unknown keys', () => {
    rejects({ url: 'https://example.com', retries: 3 }, `${WHERE} webhook.retries: unknown key`);
  });

  it('rejects a timeout that is not a positive number, naming where', () => {
    for (const timeout of [0, -1, '5', Number.NaN, Number.POSITIVE_INFINITY]) {
      rejects({ url: 'https://example.com', timeout }, `${WHERE} webhook.timeout: expected a positive number`);
    }
  });

  it('accepts absolute http(s) URLs and app-relative paths, and rejects everything else', () => {
    for (const url of ['http://127.0.0.1:8080/h', 'https://example.com/a?b=c', '/hooks/audit']) {
      assert.equal(validateWebhookConfig('onComplete', { url }, WHERE).url, url);
    }
    const message = `${WHERE} webhook.url: expected an absolute http(s) URL without credentials, or an app-relative path starting with /`;
    for (const url of ['', 'hooks', '//evil.example/x', 'ftp://example.com', 'https://user:pass@example.com/h', 'https://example.com\\x', 'javascript:alert(1)']) {
      rejects({ url }, message);
    }
  });

  it('never quotes a URL with credentials in its error', () => {
    const err = rejects({ url: 'https://admin:s3cr3t-pw@example.com/h' }, `${WHERE} webhook.url: expected an absolute http(s) URL without credentials, or an app-relative path starting with /`);
    assert.ok(!JSON.stringify(err.toJSON()).includes('s3cr3t-pw'));
  });

  it('rejects an unknown delivery, responseHandling, onError or fallback', () => {
    rejects({ url: '/h', delivery: 'smtp' }, `${WHERE} webhook.delivery: expected "fetch" or "qstash"`);
    rejects({ url: '/h', responseHandling: 'toolResult' }, `${WHERE} webhook.responseHandling: expected "ignore" or "toolCall"`);
    rejects({ url: '/h', onError: 'retry' }, `${WHERE} webhook.onError: expected "continue" or "block"`);
    rejects({ url: '/h', fallback: 'qstash' }, `${WHERE} webhook.fallback: expected "fetch" or "none"`);
  });

  it('rejects forbidden header names in any case', () => {
    const names = ['Host', 'content-length', 'CONNECTION', 'Transfer-Encoding', 'trailer', 'Upgrade', 'Proxy-Authorization', 'sec-fetch-mode', 'Upstash-Forward-X'];
    for (const name of names) {
      rejects({ url: '/h', headers: { [name]: 'x' } }, `${WHERE} webhook.headers.${name}: this header name is not allowed`);
    }
  });

  it('rejects CR, LF or NUL in a header value without quoting the value', () => {
    for (const value of ['Bearer abc\r\nX-Injected: 1', 'a\nb', 'a\0b']) {
      const err = rejects({ url: '/h', headers: { 'X-Key': value } }, `${WHERE} webhook.headers.X-Key: value contains CR, LF or NUL`);
      assert.ok(!err.message.includes('abc'));
    }
  });

  it('rejects non-string header values', () => {
    rejects({ url: '/h', headers: { 'X-Count': 3 } }, `${WHERE} webhook.headers.X-Count: expected a string value`);
    rejects({ url: '/h', headers: ['x'] }, `${WHERE} webhook.headers: expected an object of string values`);
  });

  it('rejects a header template whose variable is not in allowedEnvVars', () => {
    rejects(
      { url: '/h', headers: { Authorization: 'Bearer ${HOOK_TOKEN}' }, allowedEnvVars: ['OTHER'] },
      `${WHERE} webhook.headers.Authorization: template variable HOOK_TOKEN is not listed in allowedEnvVars`,
    );
    rejects(
      { url: '/h', headers: { Authorization: 'Bearer ${HOOK_TOKEN}' } },
      `${WHERE} webhook.headers.Authorization: template variable HOOK_TOKEN is not listed in allowedEnvVars`,
    );
  });

  it('rejects a "${" that is not a complete template', () => {
    rejects({ url: '/h', headers: { 'X-A': 'Bearer ${HOOK_TOKEN' }, allowedEnvVars: ['HOOK_TOKEN'] }, `${WHERE} webhook.headers.X-A: contains a "\${" that is not a \${VAR} template`);
  });

  it('rejects allowedEnvVars that are not upper-case variable names', () => {
    for (const name of ['hook_token', '1TOKEN', 'A-B', '']) {
      rejects({ url: '/h', allowedEnvVars: [name] }, `${WHERE} webhook.allowedEnvVars.0: expected an environment variable name matching [A-Z_][A-Z0-9_]*`);
    }
  });

  it('rejects eventFields that are not strings and a body that is not an object', () => {
    rejects({ url: '/h', eventFields: ['a', 1] }, `${WHERE} webhook.eventFields.1: expected a string`);
    rejects({ url: '/h', body: [1, 2] }, `${WHERE} webhook.body: expected an object`);
  });

  it('allows toolCall only on beforeToolCall and afterToolCall', () => {
    assert.equal(validateWebhookConfig('beforeToolCall', { url: '/h', responseHandling: 'toolCall' }, WHERE).responseHandling, 'toolCall');
    assert.equal(validateWebhookConfig('afterToolCall', { url: '/h', responseHandling: 'toolCall', onError: 'block' }, WHERE).onError, 'block');
    for (const type of ['onToolCallError', 'onComplete', 'beforeStep'] as const) {
      rejects({ url: '/h', responseHandling: 'toolCall' }, `${WHERE} webhook.responseHandling: toolCall is only allowed on beforeToolCall and afterToolCall, not on ${type}`, type);
    }
  });

  it('rejects a toolCall control with qstash delivery, eventFields or body', () => {
    rejects({ url: '/h', responseHandling: 'toolCall', delivery: 'qstash' }, `${WHERE} webhook.delivery: a toolCall control must use fetch delivery`);
    rejects({ url: '/h', responseHandling: 'toolCall', eventFields: ['args'] }, `${WHERE} webhook.eventFields: a toolCall control receives the whole event and cannot select eventFields`);
    rejects({ url: '/h', responseHandling: 'toolCall', body: {} }, `${WHERE} webhook.body: a toolCall control cannot override the payload with body`);
  });

  it('rejects onError block without toolCall', () => {
    rejects({ url: '/h', onError: 'block' }, `${WHERE} webhook.onError: block requires responseHandling: toolCall`);
    rejects({ url: '/h', onError: 'block', responseHandling: 'ignore' }, `${WHERE} webhook.onError: block requires responseHandling: toolCall`);
  });

  it('rejects a webhook that is not an object', () => {
    for (const raw of [null, 'https://example.com', [], 3]) rejects(raw, `${WHERE} webhook: expected an object`);
  });

  it('never includes a literal header value in any error', () => {
    const secret = 'sk-live-literal-secret-value';
    const err = rejects({ url: '/h', headers: { Authorization: `Bearer ${secret}`, Host: secret } }, `${WHERE} webhook.headers.Host: this header name is not allowed`);
    assert.ok(!JSON.stringify({ m: err.message, d: err.details }).includes(secret));
  });
});
