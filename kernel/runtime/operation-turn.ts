import type { RunningOperation } from './running-operation.js';

/**
 * Takes the operation's turn: one change to an operation at a time in this
 * process (a step of its loop, a deferred completion, a human decision), so
 * each reads the state the previous one committed. Undefined when the turn
 * was free and is now held, else a promise that resolves once it is handed
 * over (uncontended, the usual case: no promise and no queue).
 */
export function acquireTurn(op: RunningOperation): Promise<void> | undefined {
  if (!op.exclusiveHeld) {
    op.exclusiveHeld = true;
    return undefined;
  }
  return new Promise<void>((resolve) => (op.exclusiveWaiters ??= []).push(resolve));
}

/** Hands the turn straight to the next waiter, or frees it. */
export function releaseTurn(op: RunningOperation): void {
  const next = op.exclusiveWaiters?.shift();
  if (next) next();
  else op.exclusiveHeld = false;
}

/** Runs `fn` in the operation's turn. */
export async function inTurn<T>(op: RunningOperation, fn: () => Promise<T>): Promise<T> {
  const turn = acquireTurn(op);
  if (turn) await turn;
  try {
    return await fn();
  } finally {
    releaseTurn(op);
  }
}
