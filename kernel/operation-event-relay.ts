import type { OperationEvents } from './runtime/operation-events.js';

/**
 * Queue mode's seam for operation events across processes (plugin
 * `execution-queue`: Redis pub/sub). A step runs in whichever worker takes
 * its job, so its events (`kernel.events`: text deltas, tool log lines,
 * thread events, step ends) happen there; a relay publishes each event this
 * process emits and emits here, into the same `OperationEvents`, the events
 * the other processes published. An API process serving a conversation
 * stream then hears a worker's live chunks and commits as if the step ran
 * here. Delivery is at most once and best effort: what a stream stores is
 * read from the store by position, so a lost event delays a stored chunk
 * until the next read, never loses it; a live-only chunk lost with a
 * dropped connection is gone, as for a reader that was not connected.
 */
export interface OperationEventRelay {
  /**
   * Starts relaying `events` (called by the kernel at start, once its
   * runtime is built): publishes every event emitted here (never one it
   * relayed in) and emits the other processes' events here. Resolves once it
   * listens; rejects with the relay's error (QUEUE_UNAVAILABLE for Redis)
   * when it cannot.
   */
  open(events: OperationEvents): Promise<void>;
  /** Stops relaying and closes the connections. Idempotent. */
  close(): Promise<void>;
}
