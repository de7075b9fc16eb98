import { HookgateError } from '../../errors.js';
import type { SecretScrubber } from '../../logger.js';
import type { WebhookConfig } from '../hook-types.js';

const TEMPLATE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** Characters no header value may contain (they would split or end the header). */
export const CONTROL_CHARACTERS = /[\r\n\0]/;
/** Header names a webhook may never set (compared lower-case); `proxy-`, `sec-` and `upstash-` are prefixes. */
const FORBIDDEN_HEADER_NAMES: readonly string[] = ['host', 'content-length', 'connection', 'transfer-encoding', 'trailer', 'upgrade'];
const FORBIDDEN_HEADER_PREFIXES: readonly string[] = ['proxy-', 'sec-', 'upstash-'];

/** True when a header name is one hookgate never lets a webhook set (checked in the config and again at send time). */
export function isForbiddenHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return FORBIDDEN_HEADER_NAMES.includes(lower) || FORBIDDEN_HEADER_PREFIXES.some((p) => lower.startsWith(p));
}

/** The environment a send reads: `process.env` in production, a plain object in specs. */
export type TemplateEnvironment = Readonly<Record<string, string | undefined>>;

/**
 * The `${VAR}` templates in one header value, in order of appearance.
 * `malformed` is true when a `${` remains that is not part of a `${NAME}` template.
 */
export function findTemplateVariables(value: string): { variables: string[]; malformed: boolean } {
  const variables = [...value.matchAll(TEMPLATE)].map((m) => m[1]);
  return { variables, malformed: value.replace(TEMPLATE, '').includes('${') };
}

function configError(header: string, problem: string): never {
  throw new HookgateError('WEBHOOK_CONFIG_INVALID', `webhook header "${header}": ${problem}`, { details: { header } });
}

/**
 * Resolves a webhook's header templates for one send. Called at send time, every
 * time: the current value of each `${VAR}` is read from `env`, so a rotated
 * secret is used by the next send. The stored config is not changed and keeps
 * its templates.
 *
 * Only variables listed in `allowedEnvVars` resolve. Every resolved variable,
 * and every whole header value built from one, is registered with `scrubber`
 * before it is returned, so it is redacted from every log line and every deny
 * reason from then on.
 *
 * Synchronous. Throws `HookgateError('WEBHOOK_CONFIG_INVALID')` when a
 * variable is not allowed or not set (an empty value counts as not set), when
 * a header name is forbidden, or when the resolved value contains CR, LF, NUL
 * or a leftover `${`. The message names the header and the variable, never a
 * value.
 */
export function resolveHeaders(config: Pick<WebhookConfig, 'headers' | 'allowedEnvVars'>, env: TemplateEnvironment, scrubber: SecretScrubber): Record<string, string> {
  const allowed = new Set(config.allowedEnvVars ?? []);
  const resolved: Record<string, string> = {};
  for (const [name, template] of Object.entries(config.headers ?? {})) {
    if (isForbiddenHeaderName(name)) configError(name, 'this header name is not allowed');
    if (CONTROL_CHARACTERS.test(template)) configError(name, 'value contains CR, LF or NUL');
    const used: string[] = [];
    const value = template.replace(TEMPLATE, (_match, variable: string) => {
      if (!allowed.has(variable)) configError(name, `template variable ${variable} is not listed in allowedEnvVars`);
      const secret = env[variable];
      if (secret === undefined || secret === '') configError(name, `environment variable ${variable} is not set`);
      scrubber.add(secret);
      used.push(variable);
      return secret;
    });
    const which = used.length > 0 ? ` (from ${used.join(', ')})` : '';
    if (CONTROL_CHARACTERS.test(value)) configError(name, `resolved value${which} contains CR, LF or NUL`);
    if (value.includes('${')) configError(name, `resolved value${which} still contains "\${"`);
    // The whole value too (`Bearer <secret>`), so a short secret inside it is still caught.
    if (used.length > 0) scrubber.add(value);
    resolved[name] = value;
  }
  return resolved;
}
