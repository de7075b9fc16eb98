import assert from 'node:assert/strict';
import { HookgateError } from '../../../../kernel/errors.js';
import { readEnvironmentHooks, RESERVED_ENV_HOOK_PREFIX } from '../../../../kernel/hooks/webhook/environment-hooks.js';

const TOKEN = 'env-token-very-secret';
const base = { AGENT_HOOK_WEBHOOK_URL: 'http://webhook-service/ingress', AGENT_HOOK_WEBHOOK_TOKEN: TOKEN };

function envError(env: Record<string, string | undefined>): string {
  try {
    readEnvironmentHooks(env);
  } catch (err) {
    assert.ok(err instanceof HookgateError);
    assert.equal(err.code, 'WEBHOOK_CONFIG_INVALID');
    assert.ok(!err.message.includes(TOKEN), 'the token must not appear');
    return err.message;
  }
  assert.fail('expected an error');
}

describe('readEnvironmentHooks', () => {
  it('returns no hooks when AGENT_HOOK_WEBHOOK_URL is unset', () => {
    assert.deepEqual(readEnvironmentHooks({ AGENT_HOOK_WEBHOOK_TOKEN: TOKEN, AGENT_HOOK_WEBHOOK_EVENTS: 'onComplete' }), []);
    assert.deepEqual(readEnvironmentHooks({}), []);
  });

  it('makes one notification hook per event with a templated bearer header', () => {
    const hooks = readEnvironmentHooks({ ...base, AGENT_HOOK_WEBHOOK_EVENTS: 'onComplete, afterToolCall' });
    assert.deepEqual(hooks, [
      {
        id: 'server-env-webhook:onComplete',
        type: 'onComplete',
        webhook: {
          url: 'http://webhook-service/ingress',
          delivery: 'fetch',
          headers: { Authorization: 'Bearer ${AGENT_HOOK_WEBHOOK_TOKEN}' },
          allowedEnvVars: ['AGENT_HOOK_WEBHOOK_TOKEN'],
          responseHandling: 'ignore',
          onError: 'continue',
        },
      },
      {
        id: 'server-env-webhook:afterToolCall',
        type: 'afterToolCall',
        webhook: {
          url: 'http://webhook-service/ingress',
          delivery: 'fetch',
          headers: { Authorization: 'Bearer ${AGENT_HOOK_WEBHOOK_TOKEN}' },
          allowedEnvVars: ['AGENT_HOOK_WEBHOOK_TOKEN'],
          responseHandling: 'ignore',
          onError: 'continue',
        },
      },
    ]);
    assert.ok(!JSON.stringify(hooks).includes(TOKEN));
    assert.ok(hooks.every((h) => h.id.startsWith(RESERVED_ENV_HOOK_PREFIX)));
  });

  it('trims the event list, drops blanks and removes duplicates', () => {
    const hooks = readEnvironmentHooks({ ...base, AGENT_HOOK_WEBHOOK_EVENTS: ' beforeToolCall, ,afterToolCall,beforeToolCall,, ' });
    assert.deepEqual(hooks.map((h) => h.type), ['beforeToolCall', 'afterToolCall']);
  });

  it('makes only beforeToolCall and afterToolCall controls under toolCall', () => {
    const hooks = readEnvironmentHooks({
      ...base,
      AGENT_HOOK_WEBHOOK_EVENTS: 'beforeToolCall,afterToolCall,onToolCallError',
      AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING: 'toolCall',
      AGENT_HOOK_WEBHOOK_ON_ERROR: 'block',
    });
    assert.deepEqual(
      hooks.map((h) => [h.id, h.webhook.responseHandling, h.webhook.onError]),
      [
        ['server-env-webhook:beforeToolCall', 'toolCall', 'block'],
        ['server-env-webhook:afterToolCall', 'toolCall', 'block'],
        ['server-env-webhook:onToolCallError', 'ignore', 'continue'],
      ],
    );
  });

  it('allows after-only checking', () => {
    const hooks = readEnvironmentHooks({ ...base, AGENT_HOOK_WEBHOOK_EVENTS: 'afterToolCall', AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING: 'toolCall' });
    assert.deepEqual(hooks.map((h) => [h.type, h.webhook.responseHandling, h.webhook.onError]), [['afterToolCall', 'toolCall', 'continue']]);
  });

  it('requires a non-blank token', () => {
    for (const token of [undefined, '', '   ']) {
      assert.equal(
        envError({ ...base, AGENT_HOOK_WEBHOOK_TOKEN: token, AGENT_HOOK_WEBHOOK_EVENTS: 'onComplete' }),
        'Invalid Agent Hook environment: AGENT_HOOK_WEBHOOK_URL requires non-empty AGENT_HOOK_WEBHOOK_TOKEN',
      );
    }
  });

  it('requires at least one event', () => {
    for (const events of [undefined, '', ' , ']) {
      assert.equal(envError({ ...base, AGENT_HOOK_WEBHOOK_EVENTS: events }), 'Invalid Agent Hook environment: AGENT_HOOK_WEBHOOK_URL requires non-empty AGENT_HOOK_WEBHOOK_EVENTS');
    }
  });

  it('rejects unknown event names', () => {
    assert.equal(
      envError({ ...base, AGENT_HOOK_WEBHOOK_EVENTS: 'onComplete,toolResult' }),
      'Invalid Agent Hook environment: AGENT_HOOK_WEBHOOK_EVENTS contains unknown hook types: toolResult',
    );
  });

  it('rejects a URL that is not http(s), without quoting it', () => {
    const message = envError({ ...base, AGENT_HOOK_WEBHOOK_URL: `ftp://user:${TOKEN}@host/x`, AGENT_HOOK_WEBHOOK_EVENTS: 'onComplete' });
    assert.equal(message, 'Invalid Agent Hook environment: AGENT_HOOK_WEBHOOK_URL must be an http(s) URL without credentials');
  });

  it('rejects unknown response handling and onError values', () => {
    assert.equal(
      envError({ ...base, AGENT_HOOK_WEBHOOK_EVENTS: 'beforeToolCall', AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING: 'toolCallAndResult' }),
      'Invalid Agent Hook environment: AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING must be "ignore" or "toolCall"',
    );
    assert.equal(
      envError({ ...base, AGENT_HOOK_WEBHOOK_EVENTS: 'beforeToolCall', AGENT_HOOK_WEBHOOK_ON_ERROR: 'retry' }),
      'Invalid Agent Hook environment: AGENT_HOOK_WEBHOOK_ON_ERROR must be "continue" or "block"',
    );
  });

  it('rejects block without toolCall', () => {
    assert.equal(
      envError({ ...base, AGENT_HOOK_WEBHOOK_EVENTS: 'beforeToolCall', AGENT_HOOK_WEBHOOK_ON_ERROR: 'block' }),
      'Invalid Agent Hook environment: AGENT_HOOK_WEBHOOK_ON_ERROR=block requires AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING=toolCall',
    );
  });

  it('rejects toolCall without beforeToolCall or afterToolCall among the events', () => {
    assert.equal(
      envError({ ...base, AGENT_HOOK_WEBHOOK_EVENTS: 'onToolCallError,onComplete', AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING: 'toolCall' }),
      'Invalid Agent Hook environment: AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING=toolCall requires beforeToolCall or afterToolCall in AGENT_HOOK_WEBHOOK_EVENTS',
    );
  });
});
