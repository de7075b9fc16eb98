import type { MessageImage } from '../messages.js';
import type { RunningOperation } from './running-operation.js';

/**
 * A message waiting to join a running operation at its next model turn
 * (document 001: a send to a busy instance joins the live response at the
 * next turn boundary). `resolve(true)` once the step commit that carried it
 * is stored; `resolve(false)` when the operation's loop here ended first (it
 * finished, parked or stopped), so the sender can deliver it otherwise.
 */
export interface TurnDelivery {
  /** The stored message's id (the store refuses a second message with it). */
  readonly id: string;
  readonly content: string;
  /** Images that go with it (validated by the sender: checkMessageImages). */
  readonly images?: readonly MessageImage[];
  readonly resolve: (joined: boolean) => void;
}

/** Takes the deliveries waiting for the operation's next model turn (they move to `inboxTaken` until their commit is stored). */
export function takeTurnDeliveries(op: RunningOperation): TurnDelivery[] {
  const waiting = op.inbox;
  if (waiting === undefined || waiting.length === 0) return [];
  op.inbox = [];
  (op.inboxTaken ??= []).push(...waiting);
  return waiting;
}

/** The commit carrying `deliveries` is stored: they joined. */
export function confirmTurnDeliveries(op: RunningOperation, deliveries: readonly TurnDelivery[]): void {
  op.inboxTaken = (op.inboxTaken ?? []).filter((d) => !deliveries.includes(d));
  for (const d of deliveries) d.resolve(true);
}

/** The loop here ended: every delivery not confirmed resolves false (the sender checks the store for a commit that landed anyway). */
export function dropTurnDeliveries(op: RunningOperation): void {
  const left = [...(op.inboxTaken ?? []), ...(op.inbox ?? [])];
  op.inbox = [];
  op.inboxTaken = [];
  for (const d of left) d.resolve(false);
}
