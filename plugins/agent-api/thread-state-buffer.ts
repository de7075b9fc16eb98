import { isDeepStrictEqual } from 'node:util';
import type { RenderStateAccess } from './render-slot.js';

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

  /** Whether writes wait for a commit. */
  get dirty(): boolean {
    return this.overlay.size > 0;
  }

  /** The whole values after the buffered writes, which from now on count as committed; undefined when nothing changed. */
  take(): Record<string, unknown> | undefined {
    if (this.overlay.size === 0) return undefined;
    const next: Record<string, unknown> = { ...this.committed };
    for (const [name, value] of this.overlay) next[name] = value;
    this.overlay.clear();
    this.committed = Object.freeze(next);
    return next;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
