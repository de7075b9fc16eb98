import type { OperationEvents } from '../../kernel/runtime/operation-events.js';
import type { Store } from '../../kernel/store.js';
import { ConversationProjector, type ConversationRead } from './conversation-projection.js';
import type { ConversationChunkPosition, ConversationStreamChunk, ConversationStreamChunkBody } from './conversation-stream.js';
import { nowIso } from '../../kernel/clock.js';
import type { SubmissionCoordinator } from './submission-coordinator.js';

/** What a follower is handed per read: the new chunks and the position after them. Resolving `true` stops following. */
export type ChunkSink = (chunks: ConversationStreamChunk[], next: ConversationChunkPosition) => boolean | void | Promise<boolean | void>;

/** How often a follower reads again without being woken (changes made by another process, a missed wake-up). */
export const DEFAULT_FOLLOW_POLL_MS = 1_000;

/** The events after which an operation's thread may have new stored messages. */
const COMMITTING_EVENTS = new Set(['step_finished', 'tool_finished', 'approval_requested', 'compacted', 'operation_finished']);

interface Follower {
  wake: () => void;
  /** A live-only chunk body for this tail (handed over in arrival order with the reads). */
  live: (body: ConversationStreamChunkBody) => void;
  /** Thread events (`state.emit`, `tool_call_started`, `tool_call_done`) of the followed thread, as they happen. */
  threadEvent?: (event: string, data: unknown) => void;
}

/** The most live-only chunks one tail holds for its sink; more are dropped while it is behind. */
export const MAX_QUEUED_LIVE = 1_024;

/** In a tail's queue: read the store again. */
const READ = Symbol('read');

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
  /** Operation -> thread look-ups in flight. */
  private readonly lookups = new Map<string, Promise<string | undefined>>();
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
        else if (event.type === 'tool_log') {
          const { toolCallId, level, message, attributes, truncated } = event;
          const timestamp = nowIso();
          this.liveFor(event.operationId, (conversationId) => ({ type: 'tool-log', conversationId, toolCallId, level, message, ...(attributes !== undefined ? { attributes } : {}), ...(truncated ? { truncated } : {}), timestamp }));
        } else if (event.type === 'text_delta') {
          const { operationId, delta } = event;
          this.liveFor(operationId, (conversationId) => ({ type: 'text-delta', conversationId, messageId: `resp_${operationId}`, delta }));
        } else if (event.type === 'thread_event') {
          for (const follower of this.followers.get(event.threadId) ?? []) follower.threadEvent?.(event.event, event.data);
        }
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
    // Reads and live chunks in the order their causes happened: a log line written before a commit comes before it.
    const queue: Array<typeof READ | ConversationStreamChunkBody> = [READ];
    let liveSeq = 0;
    let resolveWait: (() => void) | undefined;
    const follower: Follower = {
      wake: () => {
        if (queue.at(-1) !== READ) queue.push(READ);
        resolveWait?.();
      },
      live: (body) => {
        // A tail that does not keep up loses live-only chunks past the bound, never stored ones (those are re-read).
        if (queue.length >= MAX_QUEUED_LIVE) return;
        queue.push(body);
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
      if (next.batch !== cursor.batch || next.index !== cursor.index) liveSeq = 0;
      cursor = next;
      return (await sink(chunks, next)) === true;
    };
    // A live chunk sits right after the last stored chunk handed over (`live` counts from 1); the resume offset stays
    // there, so a reconnecting reader gets the stored chunks after it and never a live one again.
    const handLive = async (body: ConversationStreamChunkBody): Promise<boolean> => {
      const chunk = { ...body, position: { batch: cursor.batch, index: cursor.index, live: ++liveSeq } } as ConversationStreamChunk;
      return (await sink([chunk], cursor)) === true;
    };
    try {
      for (;;) {
        if (options.signal?.aborted) return;
        // The feed closes once the runtime drained: what the last settlements recorded still reaches the tail.
        if (this.closing.signal.aborted) return void (await readOnce());
        const next = queue.shift();
        if (next !== undefined) {
          // A change during the read queues another read: the next turn makes it.
          if (next === READ ? await readOnce() : await handLive(next)) return;
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            queue.push(READ);
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

  /** Hands the live-only chunk `body` makes to every tail of the operation's thread (in event order: one lookup chain per operation). */
  private liveFor(operationId: string, body: (conversationId: string) => ConversationStreamChunkBody): void {
    this.forOperation(operationId, (threadId) => {
      const tails = this.followers.get(threadId);
      if (tails === undefined) return;
      const chunk = body(threadId);
      for (const follower of tails) follower.live(chunk);
    });
  }

  private wakeOperation(operationId: string): void {
    this.forOperation(operationId, (threadId) => this.wakeThread(threadId));
  }

  /** Calls `then` with the operation's thread (looked up once, then cached); nothing when it is unknown or the read fails. */
  private forOperation(operationId: string, then: (threadId: string) => void): void {
    const known = this.threadOfOperation.get(operationId);
    if (known !== undefined) return then(known);
    // Events that come while the lookup runs wait on the same one, so they are handed over in the order they came.
    let lookup = this.lookups.get(operationId);
    if (lookup === undefined) {
      lookup = this.store.getOperation(operationId).then(
        (op) => {
          this.lookups.delete(operationId);
          if (!op) return undefined;
          if (this.threadOfOperation.size >= 4_096) this.threadOfOperation.delete(this.threadOfOperation.keys().next().value!);
          this.threadOfOperation.set(operationId, op.threadId);
          return op.threadId;
        },
        () => {
          this.lookups.delete(operationId);
          return undefined;
        },
      );
      this.lookups.set(operationId, lookup);
    }
    void lookup.then((threadId) => {
      if (threadId !== undefined) then(threadId);
    });
  }
}
