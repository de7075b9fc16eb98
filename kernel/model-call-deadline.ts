import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The signal a model provider hands its HTTP client for one call: the
 * caller's signal, plus a deadline for the whole call (every attempt, every
 * backoff pause and the whole stream) when `timeoutSeconds` is above 0.
 * `timedOut()` tells a deadline from the caller's abort afterwards.
 */
export interface ModelCallDeadline {
  readonly signal: AbortSignal;
  timedOut(): boolean;
}

/** Starts the deadline now; no timer when `timeoutSeconds` is 0 or less. Never throws. */
export function startCallDeadline(callerSignal: AbortSignal, timeoutSeconds: number): ModelCallDeadline {
  if (!(timeoutSeconds > 0)) return { signal: callerSignal, timedOut: () => false };
  const timeout = AbortSignal.timeout(Math.ceil(timeoutSeconds * 1000));
  return { signal: AbortSignal.any([callerSignal, timeout]), timedOut: () => timeout.aborted && !callerSignal.aborted };
}

/**
 * `work`, but settled as soon as `signal` aborts (rejecting with its reason),
 * even when `work` is parked in a pause that does not listen to the signal
 * (an SDK's backoff sleep). `work`'s own late settlement is swallowed, so it
 * never becomes an unhandled rejection. Resolves or rejects as `work` does
 * otherwise.
 */
export function settleOnAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** The deadline of the model call running in this async context, for {@link fetchWithinDeadline}. */
const callDeadlines = new AsyncLocalStorage<{ deadlineAt: number; timeoutKey: string }>();

/** The header {@link fetchWithinDeadline} adds to an answer whose retry it called off (read back by the error mapping). */
export const RETRY_BEYOND_DEADLINE_HEADER = 'x-hookgate-retry-beyond-deadline';

/**
 * Runs `work` (one SDK call) with its deadline known to {@link fetchWithinDeadline}:
 * `deadlineAt` in `Date.now()` milliseconds, `timeoutKey` the config key errors name.
 * No deadline (`timeoutSeconds` 0) runs `work` as it is.
 */
export function runWithinDeadline<T>(timeoutSeconds: number, timeoutKey: string, work: () => Promise<T>): Promise<T> {
  if (!(timeoutSeconds > 0)) return work();
  return callDeadlines.run({ deadlineAt: Date.now() + timeoutSeconds * 1000, timeoutKey }, work);
}

/**
 * A fetch for an SDK client that calls off a retry the call's deadline
 * cannot wait for: when an answer the SDK would retry (408, 409, 429, 5xx)
 * asks, by `retry-after-ms` or `Retry-After`, for a pause longer than what is
 * left of the deadline, the answer is handed on with `x-should-retry: false`
 * (which the SDKs obey) and {@link RETRY_BEYOND_DEADLINE_HEADER}, so the call
 * fails at once with the server's status and message instead of sleeping into
 * its deadline. Every other answer passes untouched, body unread.
 */
export function fetchWithinDeadline(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    const call = callDeadlines.getStore();
    if (!call || response.ok || !(response.status === 408 || response.status === 409 || response.status === 429 || response.status >= 500)) return response;
    const waitMs = retryAfterMs(response.headers);
    const leftMs = call.deadlineAt - Date.now();
    if (waitMs === undefined || waitMs <= leftMs) return response;
    const headers = new Headers(response.headers);
    headers.set('x-should-retry', 'false');
    headers.set(RETRY_BEYOND_DEADLINE_HEADER, `the server asks to wait ${seconds(waitMs)} before a retry, more than the ${seconds(Math.max(0, leftMs))} left of ${call.timeoutKey}`);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  };
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))}s`;
}

/** The pause an answer asks for, as the SDKs read it: `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms > 0) return ms;
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isFinite(at) && at > Date.now() ? at - Date.now() : undefined;
}
