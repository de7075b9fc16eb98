import { HookgateError } from '../errors.js';

/**
 * Waits for a handler's promise, at most `ms`; past that it rejects with
 * HOOK_HANDLER_TIMEOUT naming the hook (the handler keeps running,
 * unobserved: its late result or rejection is ignored). The timer keeps the
 * process alive, so a handler that never settles cannot end it mid-run.
 */
export function boundedHandler(pending: PromiseLike<unknown>, hook: { readonly id: string; readonly type: string }, ms: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new HookgateError('HOOK_HANDLER_TIMEOUT', `hook "${hook.id}" (${hook.type}) handler did not settle within ${ms} ms`, { details: { hookId: hook.id, hookType: hook.type, timeoutMs: ms } })),
      ms,
    );
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** Whether `value` is a promise or another thenable (only those are awaited: a sync handler costs no microtask). */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
