import { checkMessageImages } from '../message-images.js';
import type { MessageImage } from '../messages.js';
import type { Store } from '../store.js';
import type { OperationEvents } from './operation-events.js';
import type { RunningOperation } from './running-operation.js';
import type { TurnDelivery } from './turn-inbox.js';

/**
 * Queue mode's turn inbox (turn-inbox.ts across processes): a message sent to
 * an operation whose steps run in workers joins it at its next model turn
 * through the store. The records are kept with the operation's durable tool
 * steps (kernel/tool-steps.ts: record-once per key, first record wins,
 * pruned with the operation) under a call id no runtime-minted call has:
 *
 * - `offer:<message id>`: the sender's message (`content`, `images`).
 * - `take:<message id>`: who has it, recorded once: `{ version }` (the model
 *   turn that runs on that state version took it: its commit stores the
 *   message) or `{ withdrawn: true }` (the sender took it back: the
 *   operation was no longer running). Record-once is the compare-and-swap:
 *   a worker's take and a sender's withdrawal race, and exactly one wins.
 *
 * A worker killed after the take runs the same step again on the same
 * version, and takes the same offer again (its record names that version).
 * The sender's answer comes from the store: taken at version V, it joined
 * once the operation is past V and the message is stored (a commit refused
 * by compare-and-swap, or a thread hook that prevented it, leaves it out:
 * then it did not join, and runs as its own submission).
 */
export const TURN_INBOX_CALL_ID = '#turn-inbox';

/** How often a sender reads the store again when no event of the operation woke it (events come from workers through the relay). */
export const STORED_DELIVERY_POLL_MS = 400;

type Take = { version: number } | { withdrawn: true };

/** What a sender offers (the runtime's `deliverAtNextTurn` arguments). */
export interface StoredDelivery {
  id: string;
  content: string;
  images?: readonly MessageImage[];
}

/**
 * Sender side: records the offer, then waits until it is decided; true once
 * the commit that carries the message is stored, false when the operation
 * stopped running first (the offer withdrawn) or a taken offer's commit did
 * not store it. Woken by the operation's events (relayed from workers) and a
 * poll; `stopped()` true ends the wait with a withdrawal attempt. Rejects
 * with the store's errors.
 */
export async function deliverThroughStore(store: Store, events: OperationEvents, operationId: string, delivery: StoredDelivery, stopped: () => boolean): Promise<boolean> {
  const op = await store.getOperation(operationId);
  if (!op || op.status !== 'running') return false;
  const value = delivery.images === undefined ? { content: delivery.content } : { content: delivery.content, images: delivery.images };
  await store.recordToolStep({ operationId, toolCallId: TURN_INBOX_CALL_ID, name: offerName(delivery.id), value });
  let wake: () => void = () => undefined;
  const off = events.onOperation(operationId, () => wake());
  try {
    for (;;) {
      const decided = await decideStoredDelivery(store, operationId, op.threadId, delivery.id, stopped());
      if (decided !== undefined) return decided;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STORED_DELIVERY_POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = () => undefined;
    }
  } finally {
    off();
  }
}

/**
 * One look at an offer: true (joined), false (withdrawn, or taken and left
 * out of the commit), or undefined (still open). An open offer is withdrawn
 * when the operation no longer runs, or at once with `withdraw` (a sender
 * that stops waiting, a recovering process): exactly one of a withdrawal
 * and a take wins. An offer never made counts as withdrawn (false).
 */
export async function decideStoredDelivery(store: Store, operationId: string, threadId: string, deliveryId: string, withdraw = false): Promise<boolean | undefined> {
  const records = await store.listToolSteps(operationId, TURN_INBOX_CALL_ID);
  if (!records.some((r) => r.name === offerName(deliveryId))) return false;
  const taken = records.find((r) => r.name === takeName(deliveryId));
  // A take record that is not one this module writes (written by hand) decides it: not joined.
  if (taken !== undefined) return decideTaken(store, operationId, threadId, deliveryId, readTake(taken.value));
  const now = await store.getOperation(operationId);
  if (now?.status === 'running' && !withdraw) return undefined;
  const { recorded, step } = await store.recordToolStep({ operationId, toolCallId: TURN_INBOX_CALL_ID, name: takeName(deliveryId), value: { withdrawn: true } });
  if (recorded) return false;
  // A worker took it meanwhile: decided by that take.
  return decideTaken(store, operationId, threadId, deliveryId, readTake(step.value));
}

async function decideTaken(store: Store, operationId: string, threadId: string, deliveryId: string, take: Take | undefined): Promise<boolean | undefined> {
  if (take === undefined || 'withdrawn' in take) return false;
  // Read after the take: the commit that stores the message moves the version past the take's in one transaction.
  const now = await store.getOperation(operationId);
  if (now !== undefined && now.version <= take.version && now.status === 'running') return undefined;
  const messages = await store.listThreadMessages(threadId, { includeCompacted: true });
  return messages.some((m) => m.id === deliveryId && m.operationId === operationId);
}

/**
 * Worker side, at a model turn of a queued step: takes every open offer
 * (and those this step's version took before a crash) into the operation's
 * in-memory inbox, in the order they were offered, so the turn joins them
 * as it joins local ones. Their `resolve` is a no-op: the sender reads the
 * outcome from the store. An offer whose record is malformed is skipped.
 */
export async function takeStoredDeliveries(store: Store, op: RunningOperation): Promise<void> {
  const operationId = op.record.id;
  const version = op.record.version;
  const records = await store.listToolSteps(operationId, TURN_INBOX_CALL_ID);
  if (records.length === 0) return;
  const takes = new Map(records.filter((r) => r.name.startsWith('take:')).map((r) => [r.name.slice(5), readTake(r.value)]));
  const held = new Set([...(op.inbox ?? []), ...(op.inboxTaken ?? [])].map((d) => d.id));
  for (const record of records) {
    if (!record.name.startsWith('offer:')) continue;
    const id = record.name.slice(6);
    const offer = readOffer(id, record.value);
    if (offer === undefined || held.has(id)) continue;
    let take = takes.get(id);
    if (!takes.has(id)) {
      const claimed = await store.recordToolStep({ operationId, toolCallId: TURN_INBOX_CALL_ID, name: takeName(id), value: { version } });
      take = readTake(claimed.step.value);
    }
    if (take === undefined || 'withdrawn' in take || take.version !== version) continue;
    held.add(id);
    (op.inbox ??= []).push({ ...offer, resolve: () => undefined });
  }
}

function offerName(id: string): string {
  return `offer:${id}`;
}

function takeName(id: string): string {
  return `take:${id}`;
}

function readTake(value: unknown): Take | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { version, withdrawn } = value as { version?: unknown; withdrawn?: unknown };
  if (withdrawn === true) return { withdrawn: true };
  return typeof version === 'number' && Number.isInteger(version) ? { version } : undefined;
}

function readOffer(id: string, value: unknown): Omit<TurnDelivery, 'resolve'> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { content, images } = value as { content?: unknown; images?: unknown };
  if (typeof content !== 'string') return undefined;
  let checked: readonly MessageImage[] | undefined;
  try {
    checked = checkMessageImages(images, 'images');
  } catch {
    return undefined;
  }
  return checked === undefined ? { id, content } : { id, content, images: checked };
}
