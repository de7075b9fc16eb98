import assert from 'node:assert/strict';
import { HookgateError } from '../../../../kernel/errors.js';
import { SecretScrubber } from '../../../../kernel/logger.js';
import { resolveHeaders } from '../../../../kernel/hooks/webhook/header-templates.js';
import type { WebhookConfig } from '../../../../kernel/hooks/hook-types.js';

const config: WebhookConfig = {
  url: '/h',
  headers: { Authorization: 'Bearer ${HOOK_TOKEN}', 'X-Static': 'plain' },
  allowedEnvVars: ['HOOK_TOKEN'],
};

function configError(fn: () => unknown): HookgateError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof HookgateError);
    assert.equal(err.code, 'WEBHOOK_CONFIG_INVALID');
    return err;
  }
  assert.fail('expected a configuration error');
}

describe('resolveHeaders', () => {
  it('resolves ${VAR} from the environment and registers the value with the scrubber', () => {
    const scrubber = new SecretScrubber();
    const headers = resolveHeaders(config, { HOOK_TOKEN: 'tok-one-123' }, scrubber);
    assert.deepEqual(headers, { Authorization: 'Bearer tok-one-123', 'X-Static': 'plain' });
    assert.equal(scrubber.scrub('saw tok-one-123'), 'saw [redacted]');
  });

  it('reads the current value at every call, so a rotated secret is used next time', () => {
    const env: Record<string, string> = { HOOK_TOKEN: 'first-token' };
    const scrubber = new SecretScrubber();
    assert.equal(resolveHeaders(config, env, scrubber).Authorization, 'Bearer first-token');
    env.HOOK_TOKEN = 'second-token';
    assert.equal(resolveHeaders(config, env, scrubber).Authorization, 'Bearer second-token');
  });

  it('leaves the stored config a template', () => {
    resolveHeaders(config, { HOOK_TOKEN: 'tok-one-123' }, new SecretScrubber());
    assert.equal(config.headers?.Authorization, 'Bearer ${HOOK_TOKEN}');
  });

  it('fails naming the header and variable when the variable is not set', () => {
    const err = configError(() => resolveHeaders(config, {}, new SecretScrubber()));
    assert.equal(err.message, 'webhook header "Authorization": environment variable HOOK_TOKEN is not set');
  });

  it('never resolves a variable missing from allowedEnvVars', () => {
    const err = configError(() => resolveHeaders({ headers: { 'X-Key': '${PATH}' } }, { PATH: '/usr/bin' }, new SecretScrubber()));
    assert.equal(err.message, 'webhook header "X-Key": template variable PATH is not listed in allowedEnvVars');
  });

  it('fails without the value when the resolved value contains CR, LF or NUL', () => {
    for (const value of ['abc\r\nX-Evil: 1', 'abc\n', 'abc\0def']) {
      const err = configError(() => resolveHeaders(config, { HOOK_TOKEN: value }, new SecretScrubber()));
      assert.equal(err.message, 'webhook header "Authorization": resolved value (from HOOK_TOKEN) contains CR, LF or NUL');
    }
  });

  it('fails when a "${" is left after resolution', () => {
    const err = configError(() => resolveHeaders(config, { HOOK_TOKEN: 'x${OTHER}' }, new SecretScrubber()));
    assert.equal(err.message, 'webhook header "Authorization": resolved value (from HOOK_TOKEN) still contains "${"');
    const malformed = configError(() => resolveHeaders({ headers: { 'X-A': 'a ${B' } }, {}, new SecretScrubber()));
    assert.equal(malformed.message, 'webhook header "X-A": resolved value still contains "${"');
  });

  it('refuses forbidden header names at send time too', () => {
    const err = configError(() => resolveHeaders({ headers: { 'Proxy-Authorization': 'x' } }, {}, new SecretScrubber()));
    assert.equal(err.message, 'webhook header "Proxy-Authorization": this header name is not allowed');
  });
});
