/**
 * Guards for the stores' per-shape copies and serializers (store-memory's
 * step-copies.ts, store-sqlite's step-json.ts): a record of the step loop's
 * usual shape is copied or written field by field, anything else takes the
 * generic path, so both give exactly what a JSON round trip gives.
 */

/**
 * The own enumerable keys of a plain object (its prototype is
 * Object.prototype, which has no `toJSON`), in order; undefined for a class
 * instance, a null prototype or while Object.prototype has a `toJSON`.
 * Synchronous; never throws for an object.
 */
export function plainKeys(value: object): string[] | undefined {
  if (Object.getPrototypeOf(value) !== Object.prototype || OBJECT_PROTOTYPE.toJSON !== undefined) return undefined;
  return Object.keys(value);
}

/**
 * Whether `value` is a plain object (see {@link plainKeys}) whose own
 * enumerable keys are exactly `keys`, in that order. An own `__proto__` key,
 * a missing or extra key, another order, a class instance or a null
 * prototype all answer false, so the caller falls back to the generic copy.
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

/** Whether `value` is an array JSON would write element by element (no `toJSON` on Array.prototype). */
export function isPlainArray(value: unknown): value is unknown[] {
  return Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype && ARRAY_PROTOTYPE.toJSON === undefined;
}

/** A number JSON keeps as it is (NaN and the infinities become null in JSON). */
export function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

// Read at every call, not once: someone may define Object.prototype.toJSON later, and JSON.stringify would honour it.
const OBJECT_PROTOTYPE = Object.prototype as { toJSON?: unknown };
const ARRAY_PROTOTYPE = Array.prototype as { toJSON?: unknown };
