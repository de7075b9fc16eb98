/**
 * What `harness.prompt()` returns (document 001 `CallHandle`): the awaited
 * value, plus `signal` (fires on abort from either source, so tools given to
 * the call can observe it) and `abort()`. Aborting rejects the awaited value
 * with a standard `AbortError` (`DOMException`).
 */
export interface CallHandle<T> extends Promise<T> {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

/**
 * Builds a handle around `run`, which gets the handle's signal (merged with
 * `external`). Once the signal fires the handle rejects with an AbortError
 * at once (whatever `run` still does to stop); otherwise it settles as
 * `run` does.
 */
export function createCallHandle<T>(run: (signal: AbortSignal) => Promise<T>, external?: AbortSignal): CallHandle<T> {
  const controller = new AbortController();
  const onExternal = () => controller.abort(external?.reason);
  if (external?.aborted) controller.abort(external.reason);
  else external?.addEventListener('abort', onExternal, { once: true });
  const signal = controller.signal;
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => reject(abortError(signal.reason));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  // Nobody may await `aborted` alone: its rejection is observed through the race.
  aborted.catch(() => undefined);
  const settled = Promise.race([run(signal), aborted]).finally(() => external?.removeEventListener('abort', onExternal));
  return Object.assign(settled, {
    signal,
    abort(reason?: unknown) {
      controller.abort(reason);
    },
  });
}

/** A standard AbortError; a reason the caller gave is its `cause`. */
export function abortError(reason?: unknown): DOMException {
  if (reason instanceof DOMException && reason.name === 'AbortError') return reason;
  const error = new DOMException('The harness call was aborted.', 'AbortError');
  if (reason !== undefined) Object.defineProperty(error, 'cause', { value: reason, enumerable: false });
  return error;
}
