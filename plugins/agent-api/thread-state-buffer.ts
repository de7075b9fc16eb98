import { isDeepStrictEqual } from 'node:util';
import type { RenderStateAccess } from './render-slot.js';
import { deepFreeze } from '../../kernel/agent-definition.js';

/** Thread value names starting with this are the runtime's (usePersistentState refuses them). */
export const RESERVED_VALUE_PREFIX = '\u0000';

/**
 * The thread value holding the data parts (`useDataWriter`) of the latest
 * response that wrote any: `{ operationId, parts, writes }`. It commits with
 * the step that wrote, like state; the next response's first write replaces
 * it. `writes` lists every write in order (`name`, and `seq`: the operation's
 * last message `seq` in the commit that stored it), which places the write in
 * the conversation stream (conversation-data-parts.ts).
 */
export const DATA_PARTS_VALUE = `${RESERVED_VALUE_PREFIX}hookgate.dataParts`;

/** One data part write in the stored value: which part, and (once committed) after which message of the operation. */
export interface DataPartWrite {
  name: string;
  seq?: number;
}

/** The stored form of DATA_PARTS_VALUE. */
export interface StoredDataParts {
  operationId: string;
  parts: Record<string, unknown[]>;
  /** Absent in values stored before writes were placed in the stream. */
  writes?: DataPartWrite[];
}

/** The most data part writes one response keeps: each takes an index of its message's batch in the stream. */
export const MAX_DATA_PART_WRITES = 10_000;

/** The data parts operation `operationId` wrote, as the thread's values hold them (empty when none). */
export function dataPartsOf(values: Readonly<Record<string, unknown>> | undefined, operationId: string): Record<string, unknown[]> {
  const stored = values?.[DATA_PARTS_VALUE] as Partial<StoredDataParts> | undefined;
  if (stored === undefined || stored.operationId !== operationId || stored.parts === undefined) return {};
  const out: Record<string, unknown[]> = {};
  for (const [name, writes] of Object.entries(stored.parts)) Object.defineProperty(out, name, { value: structuredClone(writes), enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * One operation's view of its thread's persisted values: what is committed,
 * overlaid by the writes its tools and event hooks made since the last
 * commit. Renders read through it (a render sees the turn's own writes), and
 * the runtime takes the changed values into the commit of the step that
 * made them (`take`), so a write is durable with its step or not at all.
 */
export class ThreadStateBuffer implements RenderStateAccess {
  private committed: Readonly<Record<string, unknown>>;
  private readonly overlay = new Map<string, unknown>();

  constructor(values: Readonly<Record<string, unknown>>) {
    this.committed = deepFreeze(structuredClone(values));
  }

  current(name: string): { readonly value: unknown } | undefined {
    if (this.overlay.has(name)) return { value: this.overlay.get(name) };
    return Object.hasOwn(this.committed, name) ? { value: this.committed[name] } : undefined;
  }

  /** Buffers `value` (a JSON value) for `name`; a write deep-equal to the current value changes nothing. */
  readonly write = (name: string, value: unknown): void => {
    const now = this.current(name);
    if (now !== undefined && isDeepStrictEqual(now.value, value)) return;
    this.overlay.set(name, deepFreeze(value));
  };

  /**
   * Appends `value` (a JSON value) to the data part `name` of operation
   * `operationId` (the first write of a new operation drops the previous
   * one's parts). Throws RangeError past MAX_DATA_PART_WRITES writes.
   */
  appendData(operationId: string, name: string, value: unknown): void {
    const now = this.current(DATA_PARTS_VALUE)?.value as StoredDataParts | undefined;
    const same = now !== undefined && now.operationId === operationId;
    const order = same ? (now.writes ?? []) : [];
    if (order.length >= MAX_DATA_PART_WRITES) throw new RangeError(`data part "${name}" was not written: a response keeps at most ${MAX_DATA_PART_WRITES} data part writes`);
    const parts: Record<string, unknown[]> = {};
    if (same) {
      for (const [key, writes] of Object.entries(now.parts)) Object.defineProperty(parts, key, { value: writes, enumerable: true, writable: true, configurable: true });
    }
    const writes = Object.hasOwn(parts, name) ? [...parts[name]!, value] : [value];
    Object.defineProperty(parts, name, { value: writes, enumerable: true, writable: true, configurable: true });
    this.overlay.set(DATA_PARTS_VALUE, deepFreeze({ operationId, parts, writes: [...order, { name }] }));
  }

  /** Whether writes wait for a commit. */
  get dirty(): boolean {
    return this.overlay.size > 0;
  }

  /**
   * The whole values after the buffered writes, which from now on count as
   * committed; undefined when nothing changed. Data part writes not yet
   * placed are placed after message `seqAfterCommit` of the operation (the
   * last one the commit taking them stores).
   */
  take(seqAfterCommit: number): Record<string, unknown> | undefined {
    if (this.overlay.size === 0) return undefined;
    const data = this.overlay.get(DATA_PARTS_VALUE) as StoredDataParts | undefined;
    if (data?.writes !== undefined && data.writes.some((w) => w.seq === undefined)) {
      this.overlay.set(DATA_PARTS_VALUE, deepFreeze({ ...data, writes: data.writes.map((w) => (w.seq === undefined ? { name: w.name, seq: seqAfterCommit } : w)) }));
    }
    const next: Record<string, unknown> = { ...this.committed };
    for (const [name, value] of this.overlay) next[name] = value;
    this.overlay.clear();
    this.committed = Object.freeze(next);
    return next;
  }
}
