import type { Context } from 'koa';
import { AgentApiError, MethodNotAllowedError } from '../agent-errors.js';

/** The headers every agent-route response carries (reads and errors alike). */
export const FIXED_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Content-Type-Options': 'nosniff',
  'Cross-Origin-Resource-Policy': 'cross-origin',
});

/** How long a client waits before retrying a 503 `runtime_unavailable` (seconds, `Retry-After`). */
export const RUNTIME_UNAVAILABLE_RETRY_AFTER_S = 1;

/** The wire error envelope: `{ error: { type, message, details } }`. */
export interface ErrorEnvelope {
  error: { type: string; message: string; details: Record<string, unknown> };
}

/** What a failed request answers: the status, the envelope and the headers that go with it. */
export interface RenderedError {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
}

/**
 * The envelope of an error: a typed agent-API error with its own status,
 * type, message and details (405 with `Allow`, 503 with `Retry-After`);
 * anything else is 500 `internal_error` with a fixed message, so no stack,
 * path or secret of the server reaches the client (`unexpected` is told of
 * it, for the log).
 */
export function renderError(err: unknown, unexpected?: (err: unknown) => void): RenderedError {
  if (err instanceof AgentApiError && err.status >= 400 && err.status < 600 && err.type !== 'agent_run_failed') {
    const headers: Record<string, string> = {};
    if (err instanceof MethodNotAllowedError) headers.Allow = err.allow.join(', ');
    if (err.status === 503) headers['Retry-After'] = String(RUNTIME_UNAVAILABLE_RETRY_AFTER_S);
    return { status: err.status, body: { error: { type: err.type, message: err.message, details: { ...(err.details ?? {}) } } }, headers };
  }
  unexpected?.(err);
  return { status: 500, body: { error: { type: 'internal_error', message: 'the server failed to handle this request', details: {} } }, headers: {} };
}

/** Writes the envelope of `err` as the Koa response (a HEAD answer gets the status and headers only). */
export function respondWithError(ctx: Context, err: unknown, unexpected?: (err: unknown) => void): void {
  const rendered = renderError(err, unexpected);
  ctx.status = rendered.status;
  ctx.set({ ...FIXED_RESPONSE_HEADERS, ...rendered.headers, 'Cache-Control': 'no-store' });
  if (ctx.method === 'HEAD') {
    ctx.body = null;
    ctx.set('Content-Type', 'application/json');
    return;
  }
  ctx.body = rendered.body;
}
