/**
 * Copies like a JSON round trip would, as a database column does: the stored
 * value and the caller's object never share references, `undefined` and
 * function fields disappear (in arrays they become null), `toJSON` is honoured,
 * and a cycle or a BigInt throws. A direct walk: several times faster than
 * JSON.parse(JSON.stringify()) on the small records of every step.
 */
export function jsonCopy<T>(value: T): T {
  return value === undefined ? value : (copyValue(value, 0) as T);
}

const MAX_DEPTH = 1000;

function copyValue(value: unknown, depth: number): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') throw new TypeError('Do not know how to serialize a BigInt');
  if (typeof value !== 'object') return undefined;
  if (depth > MAX_DEPTH) throw new TypeError('Converting circular structure to JSON (or nesting too deep)');
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === 'function') return copyValue(withJson.toJSON(), depth + 1);
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = copyValue(value[i], depth + 1);
      out[i] = item === undefined ? null : item;
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  // Indexed, not for-of: the copy runs for every commit's records, and an iterator per object showed in the profile.
  const keys = Object.keys(value);
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    const item = copyValue((value as Record<string, unknown>)[key], depth + 1);
    if (item === undefined) continue;
    // A JSON key "__proto__" (JSON.parse makes it an own property) stays an own property, as a database column keeps
    // it: assigning it would set the copy's prototype instead, so every reader of own keys (policies, webhooks, the
    // store) would see nothing while inherited reads (`args.instruction`) saw the hidden value.
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}
