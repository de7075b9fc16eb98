import { createHash } from 'node:crypto';

interface Frame {
  value: object;
  keys: string[] | null;
  i: number;
}

/**
 * Writes the canonical JSON of `value` (object keys sorted, no whitespace,
 * `undefined`/functions dropped from objects and `null` in arrays, cycles as
 * "[Circular]") in chunks. Iterative, so deeply nested input cannot overflow
 * the stack. Synchronous; linear in the size of the input.
 */
export function writeCanonicalJson(value: unknown, write: (chunk: string) => void): void {
  const stack: Frame[] = [];
  const ancestors = new Set<object>();
  const open = (v: unknown, inArray: boolean): void => {
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      v = (v as { toJSON: () => unknown }).toJSON();
    }
    switch (typeof v) {
      case 'string':
        write(JSON.stringify(v));
        return;
      case 'number':
        write(Number.isFinite(v) ? String(v) : 'null');
        return;
      case 'boolean':
        write(v ? 'true' : 'false');
        return;
      case 'bigint':
        write(JSON.stringify(v.toString()));
        return;
      case 'object':
        if (v === null) {
          write('null');
          return;
        }
        if (ancestors.has(v)) {
          write('"[Circular]"');
          return;
        }
        ancestors.add(v);
        if (Array.isArray(v)) {
          write('[');
          stack.push({ value: v, keys: null, i: 0 });
        } else {
          write('{');
          const rec = v as Record<string, unknown>;
          const keys = Object.keys(rec)
            .filter((k) => rec[k] !== undefined && typeof rec[k] !== 'function' && typeof rec[k] !== 'symbol')
            .sort();
          stack.push({ value: v, keys, i: 0 });
        }
        return;
      default:
        if (inArray) write('null');
        else write('null');
    }
  };
  open(value, false);
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    const length = f.keys ? f.keys.length : (f.value as unknown[]).length;
    if (f.i >= length) {
      write(f.keys ? '}' : ']');
      ancestors.delete(f.value);
      stack.pop();
      continue;
    }
    if (f.i > 0) write(',');
    let child: unknown;
    if (f.keys) {
      const key = f.keys[f.i]!;
      write(JSON.stringify(key) + ':');
      child = (f.value as Record<string, unknown>)[key];
    } else child = (f.value as unknown[])[f.i];
    f.i++;
    open(child, f.keys === null);
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
  let buffer = '';
  writeCanonicalJson(value, (c) => {
    buffer += c;
    if (buffer.length >= 65536) {
      hash.update(buffer);
      buffer = '';
    }
  });
  hash.update(buffer);
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
