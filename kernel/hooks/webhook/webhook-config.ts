import * as v from 'valibot';
import { HookgateError } from '../../errors.js';
import { CONTROL_HOOK_TYPES, type HookType, type WebhookConfig } from '../hook-types.js';
import { CONTROL_CHARACTERS, findTemplateVariables, isForbiddenHeaderName } from './header-templates.js';

/** Longest timeout `setTimeout` can honour, in seconds. */
export const MAX_WEBHOOK_TIMEOUT_SECONDS = 2_147_483.647;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_VAR_NAME = /^[A-Z_][A-Z0-9_]*$/;

/** True for an app-relative path (`/hook`), which resolves against a configured base URL at send time. */
export function isAppRelativeUrl(url: string): boolean {
  return url.startsWith('/') && !url.startsWith('//');
}

function isAcceptableUrl(value: string): boolean {
  if (value.length === 0 || value.includes('\\')) return false;
  if (isAppRelativeUrl(value)) return true;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// Every message is fixed text: valibot's defaults echo the received value, which may be a secret.
const WebhookSchema = v.strictObject(
  {
    url: v.pipe(
      v.string('expected a string'),
      v.check(isAcceptableUrl, 'expected an absolute http(s) URL without credentials, or an app-relative path starting with /'),
    ),
    delivery: v.optional(v.picklist(['fetch', 'qstash'], 'expected "fetch" or "qstash"')),
    timeout: v.optional(
      v.pipe(
        v.number('expected a positive number'),
        v.check((n) => Number.isFinite(n) && n > 0, 'expected a positive number'),
        v.maxValue(MAX_WEBHOOK_TIMEOUT_SECONDS, `expected at most ${MAX_WEBHOOK_TIMEOUT_SECONDS} seconds`),
      ),
    ),
    headers: v.optional(v.record(v.string(), v.string('expected a string value'), 'expected an object of string values')),
    allowedEnvVars: v.optional(
      v.array(v.pipe(v.string('expected a string'), v.regex(ENV_VAR_NAME, 'expected an environment variable name matching [A-Z_][A-Z0-9_]*')), 'expected an array of environment variable names'),
    ),
    eventFields: v.optional(v.array(v.string('expected a string'), 'expected an array of field names')),
    body: v.optional(v.custom<Record<string, unknown>>(isPlainObject, 'expected an object')),
    responseHandling: v.optional(v.picklist(['ignore', 'toolCall'], 'expected "ignore" or "toolCall"')),
    onError: v.optional(v.picklist(['continue', 'block'], 'expected "continue" or "block"')),
    fallback: v.optional(v.picklist(['fetch', 'none'], 'expected "fetch" or "none"')),
  },
  'unknown key',
);

function fail(where: string, path: string, message: string): never {
  const at = path ? `webhook.${path}` : 'webhook';
  throw new HookgateError('WEBHOOK_CONFIG_INVALID', `${where} ${at}: ${message}`, { details: { where, path: at } });
}

function pathOf(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((item) => String(item.key)).join('.');
}

/**
 * Validates one hook's webhook settings strictly and returns an independent copy
 * (later changes to `raw` change nothing). Defaults (`delivery: 'fetch'`,
 * `timeout: 30`, `responseHandling: 'ignore'`, `onError: 'continue'`) are not
 * written in: the stored config stays what the caller wrote, header templates
 * included.
 *
 * Synchronous. Throws `HookgateError('WEBHOOK_CONFIG_INVALID')` on the first
 * problem, with a message such as
 * `hooks[2] "audit" webhook.timeout: expected a positive number`; `where` is
 * the caller's description of the hook. Messages never quote values, so a
 * secret pasted into a header cannot leak through an error.
 */
export function validateWebhookConfig(hookType: HookType, raw: unknown, where: string): WebhookConfig {
  if (!isPlainObject(raw)) fail(where, '', 'expected an object');
  // valibot's record() would accept an array as an object with index keys.
  if (raw.headers !== undefined && !isPlainObject(raw.headers)) fail(where, 'headers', 'expected an object of string values');
  const parsed = v.safeParse(WebhookSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    fail(where, pathOf(issue), issue.message);
  }
  const config = parsed.output;

  const allowed = new Set(config.allowedEnvVars ?? []);
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    const path = `headers.${name}`;
    if (!HEADER_NAME.test(name)) fail(where, path, 'not a valid HTTP header name');
    if (isForbiddenHeaderName(name)) fail(where, path, 'this header name is not allowed');
    if (CONTROL_CHARACTERS.test(value)) fail(where, path, 'value contains CR, LF or NUL');
    const { variables, malformed } = findTemplateVariables(value);
    if (malformed) fail(where, path, 'contains a "${" that is not a ${VAR} template');
    for (const variable of variables) {
      if (!allowed.has(variable)) fail(where, path, `template variable ${variable} is not listed in allowedEnvVars`);
    }
  }

  const control = config.responseHandling === 'toolCall';
  if (control) {
    if (!CONTROL_HOOK_TYPES.includes(hookType)) {
      fail(where, 'responseHandling', `toolCall is only allowed on ${CONTROL_HOOK_TYPES.join(' and ')}, not on ${hookType}`);
    }
    if ((config.delivery ?? 'fetch') !== 'fetch') fail(where, 'delivery', 'a toolCall control must use fetch delivery');
    if (config.eventFields !== undefined) fail(where, 'eventFields', 'a toolCall control receives the whole event and cannot select eventFields');
    if (config.body !== undefined) fail(where, 'body', 'a toolCall control cannot override the payload with body');
  } else if (config.onError === 'block') {
    fail(where, 'onError', 'block requires responseHandling: toolCall');
  }

  let body: Record<string, unknown> | undefined;
  if (config.body !== undefined) {
    try {
      body = JSON.parse(JSON.stringify(config.body)) as Record<string, unknown>;
    } catch {
      fail(where, 'body', 'expected JSON data');
    }
  }

  const copy: WebhookConfig = { url: config.url };
  if (config.delivery !== undefined) copy.delivery = config.delivery;
  if (config.timeout !== undefined) copy.timeout = config.timeout;
  if (config.headers !== undefined) copy.headers = { ...config.headers };
  if (config.allowedEnvVars !== undefined) copy.allowedEnvVars = [...config.allowedEnvVars];
  if (config.eventFields !== undefined) copy.eventFields = [...config.eventFields];
  if (body !== undefined) copy.body = body;
  if (config.responseHandling !== undefined) copy.responseHandling = config.responseHandling;
  if (config.onError !== undefined) copy.onError = config.onError;
  if (config.fallback !== undefined) copy.fallback = config.fallback;
  return copy;
}
