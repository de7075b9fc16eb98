import { isHookgateError } from '../../kernel/errors.js';

/** 0 success, 1 the agent run (or a policy test) failed, 2 bad usage or bad config. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Which exit code an error that escaped a command deserves. */
export function exitCodeFor(err: unknown): number {
  if (isHookgateError(err) && err.category === 'user') return EXIT.usage;
  return EXIT.failed;
}
