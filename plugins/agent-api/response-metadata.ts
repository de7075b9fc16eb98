import { AgentRenderError } from './agent-errors.js';

/** Keys never merged into metadata: they would reach an object's prototype. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * `next` deep-merged over `base`, as a fresh object: later values win,
 * `undefined` values are skipped, plain objects merge key by key, and the
 * keys `__proto__`, `constructor` and `prototype` are dropped at every
 * depth. Inputs are never changed.
 */
export function deepMergeMetadata(base: Readonly<Record<string, unknown>>, next: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) if (!PROTOTYPE_KEYS.has(key)) setKey(merged, key, value);
  for (const [key, value] of Object.entries(next)) {
    if (value === undefined || PROTOTYPE_KEYS.has(key)) continue;
    const current = merged[key];
    setKey(merged, key, isPlainObject(current) && isPlainObject(value) ? deepMergeMetadata(current, value) : isPlainObject(value) ? deepMergeMetadata({}, value) : value);
  }
  return merged;
}

/**
 * Runs one boundary's callbacks (`useResponseStart` or `useResponseFinish`)
 * in declaration order, each with the metadata merged so far, and returns
 * the metadata after all of them. A callback that throws, returns a
 * Promise (or any thenable) or a non-object fails with AgentRenderError
 * naming the hook and its declaration index.
 */
export function runMetadataCallbacks<C>(
  hook: 'useResponseStart' | 'useResponseFinish',
  callbacks: ReadonlyArray<(ctx: C) => unknown>,
  contextFor: (metadata: Readonly<Record<string, unknown>>) => C,
  initial: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  let metadata: Record<string, unknown> = { ...initial };
  callbacks.forEach((callback, index) => {
    let result: unknown;
    try {
      result = callback(contextFor(Object.freeze({ ...metadata })));
    } catch (err) {
      throw new AgentRenderError(`${hook} callback #${index} threw: ${err instanceof Error ? err.message : String(err)}`, { hook, index });
    }
    if (result === undefined || result === null) return;
    if (typeof (result as { then?: unknown }).then === 'function') {
      // Its rejection is this failure's, not an unhandled one.
      if (result instanceof Promise) result.catch(() => undefined);
      throw new AgentRenderError(`${hook} callback #${index} returned a Promise: response boundary hooks are synchronous (do async work in useAgentStart / useAgentFinish or a tool)`, { hook, index });
    }
    if (typeof result !== 'object' || Array.isArray(result)) {
      throw new AgentRenderError(`${hook} callback #${index} must return an object of metadata or nothing; got ${Array.isArray(result) ? 'an array' : typeof result}`, { hook, index });
    }
    metadata = deepMergeMetadata(metadata, result as Record<string, unknown>);
  });
  return metadata;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
