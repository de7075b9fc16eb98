import type { HookType } from '../hook-types.js';
import type { WebhookResponse } from '../webhook-transport.js';

/** A control response body larger than this many bytes is an error (65,536 itself is fine). */
export const MAX_CONTROL_RESPONSE_BYTES = 65_536;

/** What one control webhook said about a tool call or its result. */
export type ControlResponse =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string }
  /** Successful but no decision: the next control is still checked. Never permission. */
  | { kind: 'notification' }
  /** Follows the hook's `onError`. `reason` is for logs; it never contains response text or headers. */
  | { kind: 'error'; reason: string };

/** `Blocked by beforeToolCall hook.` / `Blocked by afterToolCall hook.` */
export function defaultDenyReason(hookType: HookType): string {
  return `Blocked by ${hookType} hook.`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads a control webhook's response. Synchronous and total (never throws).
 *
 * - transport failure (non-2xx, network, timeout, redirect), a body over
 *   65,536 bytes, invalid UTF-8, or a `decision` that is neither a valid
 *   allow nor a valid deny (`"ask"`, a non-string `reason`) => `error`;
 * - 204, an empty body, invalid JSON, anything but a JSON object, or an object
 *   without a top-level `decision` (including one with only a nested
 *   `hookSpecificOutput`) => `notification`;
 * - `{ decision: 'allow' }` => `allow`; `{ decision: 'deny', reason? }` =>
 *   `deny`, with the default reason when `reason` is omitted or empty.
 *
 * Any 2xx status counts. Extra fields are discarded.
 */
export function parseControlResponse(res: WebhookResponse, hookType: HookType): ControlResponse {
  if (!res.ok) {
    const status = res.status === undefined ? '' : ` (status ${res.status})`;
    return { kind: 'error', reason: `${res.kind}${status}` };
  }
  if (res.status < 200 || res.status > 299) return { kind: 'error', reason: `http_error (status ${res.status})` };
  if (res.tooLarge === true) return { kind: 'error', reason: `response body over ${MAX_CONTROL_RESPONSE_BYTES} bytes` };
  const body = res.body;
  if (body === undefined || body.length === 0) return { kind: 'notification' };
  if (body.length > MAX_CONTROL_RESPONSE_BYTES) return { kind: 'error', reason: `response body over ${MAX_CONTROL_RESPONSE_BYTES} bytes` };

  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return { kind: 'error', reason: 'response body is not valid UTF-8' };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'notification' };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json) || !Object.prototype.hasOwnProperty.call(json, 'decision')) {
    return { kind: 'notification' };
  }
  const { decision, reason } = json as { decision: unknown; reason?: unknown };
  if (decision === 'allow') return { kind: 'allow' };
  if (decision === 'deny') {
    if (reason === undefined) return { kind: 'deny', reason: defaultDenyReason(hookType) };
    if (typeof reason !== 'string') return { kind: 'error', reason: 'invalid decision: reason must be a string' };
    return { kind: 'deny', reason: reason === '' ? defaultDenyReason(hookType) : reason };
  }
  return { kind: 'error', reason: 'invalid decision' };
}
