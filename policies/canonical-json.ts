import { createHash } from 'node:crypto';

interface Frame {
  value: object;
  /** Sorted keys for an object, null for an array. */
  keys: string[] | null;
  i: number;
  /** Whether something was written into this container yet (for commas). */
  wrote: boolean;
}

/** Depth after which ancestors are tracked to detect cycles: cheaper than tracking every object, and a cycle always gets this deep (it is then written out to this depth once, then "[Circular]"). */
const CYCLE_CHECK_DEPTH = 64;
const FLUSH_AT = 1 << 16;

/**
 * Writes the canonical JSON of `value` (object keys sorted, no whitespace,
 * `undefined`/functions dropped from objects and `null` in arrays, cycles as
 * "[Circular]") in chunks of about 64 KB. Iterative, so deeply nested input
 * cannot overflow the stack. Synchronous; linear in the size of the input.
 * For JSON data the text is RFC 8785's (JCS).
 *
 * Hand-written on purpose, next to `canonicalize` (RFC 8785), which the specs
 * use to check that both write the same text for JSON data: the decision log
 * digests whatever a policy input holds and must never throw, and
 * `canonicalize` throws on a lone surrogate (valid JSON in a model's tool
 * arguments: `"\ud800"`), NaN or Infinity, a BigInt and a cycle, where this
 * writes `"\ud800"`, `null`, the digits as a string and `"[Circular]"`. It also
 * builds the whole text as one string, where this hands the digest 64 KB
 * chunks, and it recurses (4.x, the line that supports Node 20), so 10,000
 * levels of nesting overflow its stack where this one is iterative. Speed
 * decides nothing either way (bench/library-bench.ts: `canonicalize` runs at
 * 0.3 to 1.6 times this one's rate for the text, 0.5 to 1.2 for the digest).
 */
export function writeCanonicalJson(value: unknown, write: (chunk: string) => void): void {
  const stack: Frame[] = [];
  let ancestors: Set<object> | undefined;
  let out = '';
  /** Writes a scalar, or opens a container (pushing a frame); returns false for values objects omit. */
  const open = (input: unknown): boolean => {
    let v = input;
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON: () => unknown }).toJSON();
    switch (typeof v) {
      case 'string':
        out += JSON.stringify(v);
        return true;
      case 'number':
        out += Number.isFinite(v) ? String(v) : 'null';
        return true;
      case 'boolean':
        out += v ? 'true' : 'false';
        return true;
      case 'bigint':
        out += '"' + v.toString() + '"';
        return true;
      case 'object': {
        if (v === null) {
          out += 'null';
          return true;
        }
        if (stack.length >= CYCLE_CHECK_DEPTH) {
          ancestors ??= new Set(stack.map((f) => f.value));
          if (ancestors.has(v)) {
            out += '"[Circular]"';
            return true;
          }
          ancestors.add(v);
        }
        if (Array.isArray(v)) {
          out += '[';
          stack.push({ value: v, keys: null, i: 0, wrote: false });
        } else {
          out += '{';
          const keys = Object.keys(v);
          if (keys.length > 1) keys.sort();
          stack.push({ value: v, keys, i: 0, wrote: false });
        }
        return true;
      }
      default:
        return false;
    }
  };
  open(value) || (out += 'null');
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if (f.keys === null) {
      const arr = f.value as unknown[];
      if (f.i >= arr.length) {
        out += ']';
        close(f);
        continue;
      }
      if (f.i > 0) out += ',';
      open(arr[f.i++]) || (out += 'null');
    } else {
      if (f.i >= f.keys.length) {
        out += '}';
        close(f);
        continue;
      }
      const key = f.keys[f.i++]!;
      const child = (f.value as Record<string, unknown>)[key];
      if (child === undefined || typeof child === 'function' || typeof child === 'symbol') continue;
      out += (f.wrote ? ',' : '') + JSON.stringify(key) + ':';
      f.wrote = true;
      open(child);
    }
    if (out.length >= FLUSH_AT) {
      write(out);
      out = '';
    }
  }
  if (out.length > 0) write(out);

  function close(f: Frame): void {
    ancestors?.delete(f.value);
    stack.pop();
  }
}

/** Canonical JSON as one string. */
export function canonicalJson(value: unknown): string {
  let out = '';
  writeCanonicalJson(value, (c) => (out += c));
  return out;
}

/** sha256 (hex) of the canonical JSON, hashed in chunks (no giant string for huge input). */
export function canonicalDigest(value: unknown): string {
  const hash = createHash('sha256');
  writeCanonicalJson(value, (chunk) => hash.update(chunk));
  return hash.digest('hex');
}

/** Nesting depth of objects/arrays, stopping early once `limit` is passed. Iterative. */
export function nestingDepthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    if (depth >= limit) return true;
    seen.add(v);
    for (const child of Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
