import { HookgateError } from '../../errors.js';
import { isAppRelativeUrl } from './webhook-config.js';

/** The configured bases (`config.webhooks`) app-relative webhook URLs resolve against. */
export interface WebhookUrlBases {
  /** Seen from inside the deployment; wins when set. */
  internalBaseUrl?: string;
  /** Seen from outside. */
  publicBaseUrl?: string;
}

/**
 * Turns a hook's `url` into the absolute URL to send to. An absolute URL is
 * returned unchanged; an app-relative path (`/hooks/audit`) is appended to
 * `internalBaseUrl`, else `publicBaseUrl` (a path in the base is kept:
 * `https://app.example/api` + `/hook` = `https://app.example/api/hook`).
 *
 * Synchronous. Throws `HookgateError('WEBHOOK_CONFIG_INVALID')` when the path
 * is app-relative and no base URL is configured, or when the result is not an
 * http(s) URL without credentials.
 */
export function resolveWebhookUrl(url: string, bases: WebhookUrlBases): string {
  let absolute = url;
  if (isAppRelativeUrl(url)) {
    const base = bases.internalBaseUrl ?? bases.publicBaseUrl;
    if (base === undefined || base === '') {
      throw new HookgateError(
        'WEBHOOK_CONFIG_INVALID',
        `webhook url ${url} is app-relative but neither webhooks.internalBaseUrl nor webhooks.publicBaseUrl is configured`,
      );
    }
    absolute = base.replace(/\/+$/, '') + url;
  }
  let parsed: URL;
  try {
    parsed = new URL(absolute);
  } catch {
    throw new HookgateError('WEBHOOK_CONFIG_INVALID', 'webhook url is not a valid URL');
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username !== '' || parsed.password !== '') {
    throw new HookgateError('WEBHOOK_CONFIG_INVALID', 'webhook url must be http(s) without credentials');
  }
  return parsed.toString();
}
