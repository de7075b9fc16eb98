import { randomUUID } from 'node:crypto';
import type { Redis as RedisClient } from 'ioredis';
import { HookgateError, errorMessage } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import type { OperationEventRelay } from '../../kernel/operation-event-relay.js';
import type { OperationEvent, OperationEvents } from '../../kernel/runtime/operation-events.js';
import type { RedisAddress } from './redis-address.js';

/** The pub/sub channel under the queue's key prefix: installations sharing one Redis never hear each other. */
export function eventChannel(prefix: string): string {
  return `${prefix}:operation-events`;
}

/** The relay's connection names (`CLIENT LIST` shows them): `hookgate:<prefix>:relay-sub` and `...:relay-pub`. */
export function relayConnectionName(prefix: string, role: 'sub' | 'pub'): string {
  return `hookgate:${prefix.replace(/[^A-Za-z0-9_.:-]/g, '_')}:relay-${role}`;
}

/** The largest relayed message (JSON characters): a bigger event (a huge tool result) is not relayed; the store has it. */
export const MAX_RELAYED_EVENT_CHARS = 1_048_576;

/** Publishes waiting for Redis at once: past this, events are dropped (live-only chunks lost; stored ones are read from the store). */
export const MAX_PENDING_PUBLISHES = 1_024;

/** How long the start-up subscribe waits for Redis before it calls it unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;

const EVENT_TYPES = new Set<OperationEvent['type']>([
  'operation_started', 'step_started', 'text_delta', 'assistant_message', 'tool_started', 'tool_finished', 'tool_log',
  'thread_event', 'hook', 'approval_requested', 'compacted', 'step_finished', 'operation_finished',
]);

export interface RedisEventRelayOptions {
  address: RedisAddress;
  prefix: string;
  logger: Logger;
}

/**
 * Operation events across processes on Redis pub/sub (the queue's Redis;
 * docs/queue-mode.md says why not PostgreSQL LISTEN/NOTIFY). Every process
 * publishes the events its runtime emits on one channel per key prefix,
 * tagged with a random id of its own, and emits the others' into its
 * `kernel.events`. Publishing never waits for Redis: while it is away or
 * slow, events past {@link MAX_PENDING_PUBLISHES} in flight are dropped
 * (counted, logged once per outage). The subscriber reconnects and
 * subscribes again by itself (ioredis); the conversation stream fills what
 * it missed from the store by position.
 */
export class RedisEventRelay implements OperationEventRelay {
  /** This process on the channel: its own messages come back to it and are skipped. */
  private readonly origin = randomUUID();
  private publisher: RedisClient | undefined;
  private subscriber: RedisClient | undefined;
  private off: (() => void) | undefined;
  /** True while a relayed event is emitted here: the publishing listener skips it (no echo between processes). */
  private relaying = false;
  private pending = 0;
  private dropped = 0;
  private readonly warned = new Set<string>();

  constructor(private readonly options: RedisEventRelayOptions) {}

  /** Whether the subscriber is connected and subscribed now (specs wait for a reconnect with it). */
  get listening(): boolean {
    return this.subscriber?.status === 'ready';
  }

  async open(events: OperationEvents): Promise<void> {
    if (this.subscriber) return;
    const { address, prefix, logger } = this.options;
    const { Redis } = await import('ioredis');
    const channel = eventChannel(prefix);
    const subscriber = new Redis({ ...address.options, connectionName: relayConnectionName(prefix, 'sub'), lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, maxRetriesPerRequest: null });
    const publisher = new Redis({ ...address.options, connectionName: relayConnectionName(prefix, 'pub'), lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    subscriber.on('error', (err) => this.warnOnce('subscriber', err));
    publisher.on('error', (err) => this.warnOnce('publisher', err));
    subscriber.on('ready', () => this.warned.clear());
    subscriber.on('message', (from: string, text: string) => {
      if (from !== channel) return;
      const event = this.read(text);
      if (event === undefined) return;
      this.relaying = true;
      try {
        events.emit(event);
      } finally {
        this.relaying = false;
      }
    });
    try {
      await subscriber.connect();
      await subscriber.subscribe(channel);
      await publisher.connect();
    } catch (err) {
      subscriber.disconnect();
      publisher.disconnect();
      throw new HookgateError('QUEUE_UNAVAILABLE', `cannot reach Redis at ${address.shown} (queue.redis) for the event relay: ${errorMessage(err)}`, { details: { redis: address.shown }, cause: err });
    }
    this.subscriber = subscriber;
    this.publisher = publisher;
    this.off = events.on((event) => {
      if (!this.relaying) this.publish(channel, event);
    });
    logger.debug('relaying operation events', { redis: address.shown, channel });
  }

  async close(): Promise<void> {
    this.off?.();
    this.off = undefined;
    const { subscriber, publisher } = this;
    this.subscriber = undefined;
    this.publisher = undefined;
    await Promise.all([subscriber?.quit().catch(() => subscriber.disconnect()), publisher?.quit().catch(() => publisher.disconnect())]);
  }

  private publish(channel: string, event: OperationEvent): void {
    const publisher = this.publisher;
    if (!publisher) return;
    let text: string;
    try {
      text = JSON.stringify({ origin: this.origin, event });
    } catch {
      return; // A thread event whose data JSON cannot carry: heard only here.
    }
    if (text.length > MAX_RELAYED_EVENT_CHARS || this.pending >= MAX_PENDING_PUBLISHES || publisher.status !== 'ready') {
      this.drop(event);
      return;
    }
    this.pending += 1;
    publisher.publish(channel, text).then(
      () => void (this.pending -= 1),
      (err: unknown) => {
        this.pending -= 1;
        this.drop(event, err);
      },
    );
  }

  private drop(event: OperationEvent, err?: unknown): void {
    this.dropped += 1;
    this.warnOnce('publish', err ?? new Error(`Redis is not ready or ${MAX_PENDING_PUBLISHES} events are in flight; event ${event.type} of ${event.operationId} is not relayed (${this.dropped} so far)`));
  }

  /** A message another process published, or undefined (this process's own, or not one a relay wrote: ignored). */
  private read(text: string): OperationEvent | undefined {
    if (text.length > MAX_RELAYED_EVENT_CHARS) return undefined;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (typeof message !== 'object' || message === null) return undefined;
    const { origin, event } = message as { origin?: unknown; event?: unknown };
    if (typeof origin !== 'string' || origin === this.origin) return undefined;
    if (typeof event !== 'object' || event === null || Array.isArray(event)) return undefined;
    const { type, operationId } = event as { type?: unknown; operationId?: unknown };
    if (typeof type !== 'string' || !EVENT_TYPES.has(type as OperationEvent['type'])) return undefined;
    if (typeof operationId !== 'string' || operationId === '' || operationId.length > 200) return undefined;
    return event as OperationEvent;
  }

  /** Redis errors repeat on every reconnect attempt: each kind is logged once until the subscriber is back. */
  private warnOnce(where: string, err: unknown): void {
    const message = errorMessage(err);
    const key = `${where}:${message}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.options.logger.warn('the event relay lost events or its Redis connection (it reconnects)', { redis: this.options.address.shown, where, error: message });
  }
}
