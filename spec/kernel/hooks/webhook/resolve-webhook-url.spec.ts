import assert from 'node:assert/strict';
import { isHookgateError } from '../../../../kernel/errors.js';
import { resolveWebhookUrl } from '../../../../kernel/hooks/webhook/resolve-webhook-url.js';

describe('resolveWebhookUrl', () => {
  it('returns an absolute URL unchanged', () => {
    assert.equal(resolveWebhookUrl('https://example.com/hooks?x=1', { internalBaseUrl: 'http://internal' }), 'https://example.com/hooks?x=1');
  });

  it('resolves an app-relative path against the internal base URL first', () => {
    assert.equal(resolveWebhookUrl('/hooks/audit', { internalBaseUrl: 'http://app.internal:3000/', publicBaseUrl: 'https://app.example' }), 'http://app.internal:3000/hooks/audit');
  });

  it('falls back to the public base URL and keeps its path', () => {
    assert.equal(resolveWebhookUrl('/hooks/audit', { publicBaseUrl: 'https://app.example/api' }), 'https://app.example/api/hooks/audit');
  });

  it('is a configuration error when no base URL is configured', () => {
    assert.throws(
      () => resolveWebhookUrl('/hooks/audit', {}),
      (err) => isHookgateError(err, 'WEBHOOK_CONFIG_INVALID') && err.message.includes('neither webhooks.internalBaseUrl nor webhooks.publicBaseUrl'),
    );
  });

  it('is a configuration error for a stored URL with credentials', () => {
    assert.throws(() => resolveWebhookUrl('https://u:p@example.com/h', {}), (err) => isHookgateError(err, 'WEBHOOK_CONFIG_INVALID') && !err.message.includes('u:p'));
  });
});
