import { AgentRenderError } from './agent-errors.js';
import { agentPrefix, isRendering, requireRootFrame } from './render-slot.js';
import { RESERVED_VALUE_PREFIX } from './thread-state-buffer.js';

/** Sets a persisted value, or derives it from the current one (`previous` sees this turn's buffered writes). */
export type StateSetter<T> = (next: T | ((previous: T) => T)) => void;

/** How deep a persisted value may nest. */
const MAX_DEPTH = 64;

/**
 * Durable state of the agent instance (the thread's values), by `name`:
 * the value as of this render (the default before the first write; the
 * default is never stored) and a setter. Values are JSON: a write is
 * checked and copied, `undefined` throws (there is no unset), a write
 * deep-equal to the current value is a no-op, an updater sees the writes
 * buffered this turn. The setter throws during a render and on a bare
 * render; call it from a tool's `run` or an event hook callback, and the
 * write commits with that tool's step (or that hook's commit). Declaring a
 * name twice in one render throws. Synchronous.
 */
export function usePersistentState<T>(name: string, defaultValue: T): [T, StateSetter<T>];
export function usePersistentState<T = unknown>(name: string): [T | undefined, StateSetter<T | undefined>];
export function usePersistentState(name: string, defaultValue?: unknown): [unknown, StateSetter<unknown>] {
  const frame = requireRootFrame('usePersistentState', 'durable state belongs to the agent instance; pass a delegate what it needs in its task.');
  if (typeof name !== 'string' || name === '') throw new AgentRenderError('usePersistentState(name, default?) takes the state name, a non-empty string, first', { hook: 'usePersistentState' });
  if (name.startsWith(RESERVED_VALUE_PREFIX)) throw new AgentRenderError(`state names may not start with a NUL character (reserved for the runtime): "${printable(name)}"`, { hook: 'usePersistentState', name: printable(name) });
  if (frame.stateNames.has(name)) {
    throw new AgentRenderError(`${agentPrefix(frame)}two usePersistentState declarations named "${printable(name)}" in one render: a state name identifies one value`, { hook: 'usePersistentState', name: printable(name) });
  }
  frame.stateNames.add(name);
  const state = frame.input.state;
  const stored = state?.current(name);
  const value = stored !== undefined ? stored.value : defaultValue;
  const write = state?.write;
  const setValue: StateSetter<unknown> = (next) => {
    if (isRendering()) {
      throw new AgentRenderError(`state "${printable(name)}" was set during a render: a render only reads; set state from a tool's run or an event hook callback`, { hook: 'usePersistentState', name: printable(name) });
    }
    if (state === undefined || write === undefined) {
      throw new AgentRenderError(`state "${printable(name)}" has no agent instance behind this render, so it cannot be set`, { hook: 'usePersistentState', name: printable(name) });
    }
    if (typeof next === 'function') {
      const now = state.current(name);
      next = (next as (previous: unknown) => unknown)(now !== undefined ? now.value : defaultValue);
    }
    if (next === undefined) throw new AgentRenderError(`state "${printable(name)}" cannot be set to undefined: state values are JSON and there is no unset`, { hook: 'usePersistentState', name: printable(name) });
    write(name, toJsonValue(next, printable(name)));
  };
  return [value, setValue];
}

/** A fresh JSON copy of `value`, or AgentRenderError naming the state and the path of what JSON cannot carry. */
export function toJsonValue(value: unknown, where: string, depth = 0, seen = new Set<object>(), noun = 'state'): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    throw notJson(noun, where, `the number ${String(value)}`);
  }
  if (typeof value !== 'object') throw notJson(noun, where, `a ${typeof value}`);
  if (depth >= MAX_DEPTH) throw notJson(noun, where, `a value nested deeper than ${MAX_DEPTH}`);
  if (seen.has(value)) throw notJson(noun, where, 'a cycle');
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item, i) => toJsonValue(item, `${where}[${i}]`, depth + 1, seen, noun));
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) throw notJson(noun, where, `a ${(value as object).constructor?.name ?? 'class'} instance`);
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (inner === undefined) continue;
      // Defined as data, so a key such as __proto__ stays an ordinary key of the copy.
      Object.defineProperty(out, key, { value: toJsonValue(inner, `${where}.${key}`, depth + 1, seen, noun), enumerable: true, writable: true, configurable: true });
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

function notJson(noun: string, where: string, what: string): AgentRenderError {
  return new AgentRenderError(`${noun} "${where}" is not a JSON value: it holds ${what}`, { hook: noun === 'state' ? 'usePersistentState' : 'useDataWriter' });
}

/** `text` escaped and cut to 80 characters, for error messages. */
export function printable(text: string): string {
  const escaped = JSON.stringify(text).slice(1, -1);
  return escaped.length > 80 ? `${escaped.slice(0, 77)}...` : escaped;
}
