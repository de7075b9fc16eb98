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
