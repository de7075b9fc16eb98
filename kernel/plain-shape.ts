/**
 * Guards for the stores' per-shape copies and JSON texts (kernel/step-copies.ts,
 * store-sqlite's step-json.ts): a record of the step loop's
 * usual shape is copied or written field by field, anything else takes the
 * generic path, so both give exactly what a JSON round trip gives.
 */

/**
 * The own enumerable keys of an object JSON would write key by key (it has
 * no `toJSON`, own or inherited), in order; undefined when it has one.
 * Synchronous; throws only what a `toJSON` getter throws.
 */
export function plainKeys(value: object): string[] | undefined {
  // A property load, not Object.getPrototypeOf (which showed up as a runtime call in the profile); a class instance or a
  // null-prototype object without toJSON is written like a plain object by JSON and by jsonCopy alike.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
  return Object.keys(value);
}

/**
 * Whether `value` has no `toJSON` (see {@link plainKeys}) and its own
 * enumerable keys are exactly `keys`, in that order. An own `__proto__` key,
 * a missing or extra key, another order or a `toJSON` all answer false, so
 * the caller falls back to the generic copy.
 */
export function hasExactKeys(value: object, keys: readonly string[]): boolean {
  const own = plainKeys(value);
  return own !== undefined && startsWithKeys(own, keys) && own.length === keys.length;
}

/** Whether `own` starts with `keys`, in that order. */
export function startsWithKeys(own: readonly string[], keys: readonly string[]): boolean {
  if (own.length < keys.length) return false;
  for (let i = 0; i < keys.length; i++) if (own[i] !== keys[i]) return false;
  return true;
}

/** Whether `value` is an array JSON would write element by element (no `toJSON`, own or inherited). */
export function isPlainArray(value: unknown): value is unknown[] {
  return Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/** A number JSON keeps as it is (NaN and the infinities become null in JSON). */
export function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
