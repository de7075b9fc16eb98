import { HookgateError } from '../../errors.js';
import { CONTROL_HOOK_TYPES, isHookType, type HookType, type SerializedHook, type WebhookConfig } from '../hook-types.js';
import { isAppRelativeUrl } from './webhook-config.js';

/** Ids of environment hooks start with this; caller hooks with such an id are dropped. */
export const RESERVED_ENV_HOOK_PREFIX = 'server-env-webhook:';

/** The variable whose value becomes the bearer token; referenced as a template, never copied. */
export const ENV_HOOK_TOKEN_VARIABLE = 'AGENT_HOOK_WEBHOOK_TOKEN';

/** True for an id that belongs to an environment hook. */
export function isReservedEnvHookId(id: string): boolean {
  return id.startsWith(RESERVED_ENV_HOOK_PREFIX);
}

function invalid(message: string): never {
  throw new HookgateError('WEBHOOK_CONFIG_INVALID', `Invalid Agent Hook environment: ${message}`);
}

function isAbsoluteHttpUrl(value: string): boolean {
  if (value.includes('\\')) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/**
 * Builds the environment hooks from `AGENT_HOOK_WEBHOOK_*` in `env`. Call it at
 * every evaluation with the current environment: the result is never persisted,
 * so a changed or removed variable takes effect on the next evaluation, also
 * after an approval or a restart.
 *
 * - `AGENT_HOOK_WEBHOOK_URL` unset or empty: no hooks (`[]`).
 * - Otherwise `AGENT_HOOK_WEBHOOK_TOKEN` must be non-blank and
 *   `AGENT_HOOK_WEBHOOK_EVENTS` a comma list of hook types (trimmed, blanks
 *   dropped, duplicates removed, unknown names rejected, at least one).
 * - `AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING`: `ignore` (default) or `toolCall`,
 *   which needs beforeToolCall or afterToolCall among the events; only those two
 *   become controls (with `AGENT_HOOK_WEBHOOK_ON_ERROR`), every other event is an
 *   `ignore`/`continue` notification.
 * - `AGENT_HOOK_WEBHOOK_ON_ERROR`: `continue` (default) or `block`, which needs `toolCall`.
 *
 * Each event becomes `{ id: 'server-env-webhook:<event>', type, webhook }` with
 * fetch delivery and the header `Authorization: Bearer ${AGENT_HOOK_WEBHOOK_TOKEN}`
 * (a template; the token is resolved at send time).
 *
 * Synchronous. Throws `HookgateError('WEBHOOK_CONFIG_INVALID')` naming the
 * variables involved; no message contains the token or the URL's value.
 */
export function readEnvironmentHooks(env: Readonly<Record<string, string | undefined>>): SerializedHook[] {
  const url = env.AGENT_HOOK_WEBHOOK_URL;
  if (url === undefined || url === '') return [];
  if (!isAbsoluteHttpUrl(url) && !isAppRelativeUrl(url)) {
    invalid('AGENT_HOOK_WEBHOOK_URL must be an http(s) URL without credentials');
  }
  const token = env[ENV_HOOK_TOKEN_VARIABLE];
  if (token === undefined || token.trim() === '') invalid('AGENT_HOOK_WEBHOOK_URL requires non-empty AGENT_HOOK_WEBHOOK_TOKEN');

  const names = [...new Set((env.AGENT_HOOK_WEBHOOK_EVENTS ?? '').split(',').map((e) => e.trim()).filter((e) => e !== ''))];
  if (names.length === 0) invalid('AGENT_HOOK_WEBHOOK_URL requires non-empty AGENT_HOOK_WEBHOOK_EVENTS');
  const unknown = names.filter((name) => !isHookType(name));
  if (unknown.length > 0) invalid(`AGENT_HOOK_WEBHOOK_EVENTS contains unknown hook types: ${unknown.join(', ')}`);
  const events = names as HookType[];

  const responseHandling = env.AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING || 'ignore';
  if (responseHandling !== 'ignore' && responseHandling !== 'toolCall') {
    invalid('AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING must be "ignore" or "toolCall"');
  }
  const onError = env.AGENT_HOOK_WEBHOOK_ON_ERROR || 'continue';
  if (onError !== 'continue' && onError !== 'block') invalid('AGENT_HOOK_WEBHOOK_ON_ERROR must be "continue" or "block"');
  if (onError === 'block' && responseHandling !== 'toolCall') {
    invalid('AGENT_HOOK_WEBHOOK_ON_ERROR=block requires AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING=toolCall');
  }
  if (responseHandling === 'toolCall' && !events.some((e) => CONTROL_HOOK_TYPES.includes(e))) {
    invalid('AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING=toolCall requires beforeToolCall or afterToolCall in AGENT_HOOK_WEBHOOK_EVENTS');
  }

  return events.map((type): SerializedHook => {
    const control = responseHandling === 'toolCall' && CONTROL_HOOK_TYPES.includes(type);
    const webhook: WebhookConfig = {
      url,
      delivery: 'fetch',
      headers: { Authorization: `Bearer \${${ENV_HOOK_TOKEN_VARIABLE}}` },
      allowedEnvVars: [ENV_HOOK_TOKEN_VARIABLE],
      responseHandling: control ? 'toolCall' : 'ignore',
      onError: control ? (onError as 'continue' | 'block') : 'continue',
    };
    return { id: `${RESERVED_ENV_HOOK_PREFIX}${type}`, type, webhook };
  });
}
