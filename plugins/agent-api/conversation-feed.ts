import type { OperationEvents } from '../../kernel/runtime/operation-events.js';
import type { Store } from '../../kernel/store.js';
import { ConversationProjector, type ConversationRead } from './conversation-projection.js';
import type { ConversationChunkPosition, ConversationStreamChunk } from './conversation-stream.js';
import type { SubmissionCoordinator } from './submission-coordinator.js';

/** What a follower is handed per read: the new chunks and the position after them. Resolving `true` stops following. */
export type ChunkSink = (chunks: ConversationStreamChunk[], next: ConversationChunkPosition) => boolean | void | Promise<boolean | void>;

/** How often a follower reads again without being woken (changes made by another process, a missed wake-up). */
export const DEFAULT_FOLLOW_POLL_MS = 1_000;

/** The events after which an operation's thread may have new stored messages. */
const COMMITTING_EVENTS = new Set(['step_finished', 'tool_finished', 'approval_requested', 'compacted', 'operation_finished']);

interface Follower {
  wake: () => void;
  /** Thread events (`state.emit`, `tool_call_started`, `tool_call_done`) of the followed thread, as they happen. */
  threadEvent?: (event: string, data: unknown) => void;
}

/**
 * The live conversation stream of this process's instances: a history read
 * from an offset (`read`) and a tail (`follow`) that reads again after each
 * change, so live chunks are exactly the chunks a later history read
 * returns (same positions; nothing twice, nothing skipped). Woken by the
 * kernel's operation events that follow a commit and by the coordinator's
 * settlements, and by a slow poll for changes another process made.
 */
export class ConversationFeed {
  private readonly projector: ConversationProjector;
  private readonly followers = new Map<string, Set<Follower>>();
  private readonly threadOfOperation = new Map<string, string>();
  private readonly unsubscribe: Array<() => void> = [];
  private readonly closing = new AbortController();
  /** The kernel-events subscription, held only while a tail is open: a listener makes the runtime build every event. */
  private eventsOff: (() => void) | undefined;

  constructor(private readonly store: Store, private readonly events: OperationEvents, coordinator: SubmissionCoordinator) {
    this.projector = new ConversationProjector(store);
    this.unsubscribe.push(coordinator.onSettled((submission) => this.wakeThread(submission.threadId)));
  }

  private listenWhileFollowed(): void {
    if (this.followers.size > 0 && !this.eventsOff && !this.closing.signal.aborted) {
      this.eventsOff = this.events.on((event) => {
        if (COMMITTING_EVENTS.has(event.type)) this.wakeOperation(event.operationId);
        else if (event.type === 'thread_event') for (const follower of this.followers.get(event.threadId) ?? []) follower.threadEvent?.(event.event, event.data);
      });
    } else if (this.followers.size === 0 && this.eventsOff) {
      this.eventsOff();
      this.eventsOff = undefined;
    }
  }

  /** The chunks of the thread's stream after `after`. Rejects with the store's errors. */
  read(threadId: string, after?: ConversationChunkPosition): Promise<ConversationRead> {
    return this.projector.read(threadId, after);
  }

  /** How many tails are open (the server's drain waits for them to close). */
  get following(): number {
    let n = 0;
    for (const set of this.followers.values()) n += set.size;
    return n;
  }

  /**
   * Hands `sink` every chunk of the thread's stream after `after`, first
   * what is stored, then each change as it is committed, until the sink
   * resolves `true`, `signal` aborts or the feed closes (after one last
   * read, so a drained runtime's final settlements are handed over).
   * Chunks come in position order, each once. Rejects with the store's errors and the
   * sink's own. `onThreadEvent` hears the thread's events (document 003) as
   * this process's runtime emits them: live only, never stored, no position.
   */
  async follow(
    threadId: string,
    after: ConversationChunkPosition,
    sink: ChunkSink,
    options: { signal?: AbortSignal; pollMs?: number; onThreadEvent?: (event: string, data: unknown) => void } = {},
  ): Promise<void> {
    const signal = options.signal ? AbortSignal.any([options.signal, this.closing.signal]) : this.closing.signal;
    const pollMs = options.pollMs ?? DEFAULT_FOLLOW_POLL_MS;
    let cursor = after;
    let dirty = true;
    let resolveWait: (() => void) | undefined;
    const follower: Follower = {
      wake: () => {
        dirty = true;
        resolveWait?.();
      },
      ...(options.onThreadEvent !== undefined ? { threadEvent: options.onThreadEvent } : {}),
    };
    const set = this.followers.get(threadId) ?? new Set();
    set.add(follower);
    this.followers.set(threadId, set);
    this.listenWhileFollowed();
    const onAbort = () => follower.wake();
    signal.addEventListener('abort', onAbort);
    const readOnce = async (): Promise<boolean> => {
      const { chunks, next } = await this.projector.read(threadId, cursor);
      if (options.signal?.aborted || chunks.length === 0) return false;
      cursor = next;
      return (await sink(chunks, next)) === true;
    };
    try {
      for (;;) {
        if (options.signal?.aborted) return;
        // The feed closes once the runtime drained: what the last settlements recorded still reaches the tail.
        if (this.closing.signal.aborted) return void (await readOnce());
        if (dirty) {
          // A change during the read sets dirty again: the next turn reads it.
          dirty = false;
          if (await readOnce()) return;
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            dirty = true;
            resolve();
          }, pollMs);
          resolveWait = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        resolveWait = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      set.delete(follower);
      if (set.size === 0 && this.followers.get(threadId) === set) this.followers.delete(threadId);
      this.listenWhileFollowed();
    }
  }

  /** Ends every tail (their `follow` calls resolve) and stops listening. */
  close(): void {
    this.closing.abort();
    for (const off of this.unsubscribe.splice(0)) off();
    this.eventsOff?.();
    this.eventsOff = undefined;
  }

  private wakeThread(threadId: string): void {
    for (const follower of this.followers.get(threadId) ?? []) follower.wake();
  }

  private wakeOperation(operationId: string): void {
    const known = this.threadOfOperation.get(operationId);
    if (known !== undefined) return this.wakeThread(known);
    void this.store.getOperation(operationId).then(
      (op) => {
        if (!op) return;
        if (this.threadOfOperation.size >= 4_096) this.threadOfOperation.delete(this.threadOfOperation.keys().next().value!);
        this.threadOfOperation.set(operationId, op.threadId);
        this.wakeThread(op.threadId);
      },
      () => undefined,
    );
  }
}
