import { checkUserId, checkUserValueKey, parseUserValue, userValueText, type UserValueStore } from '../../kernel/user-values.js';

/**
 * Per-user values in process memory (kernel/user-values.ts): by user, then
 * key, each value kept as its JSON text (so what comes out is always a fresh
 * copy and what went in can be changed by the caller without effect). Maps,
 * not objects: a key such as `__proto__` is an ordinary key. A write is one
 * synchronous step, so concurrent writes are serialized by the event loop.
 */
export class MemoryUserValues implements UserValueStore {
  private readonly byUser = new Map<string, Map<string, string>>();

  constructor(private readonly assertOpen: () => void) {}

  async getUserValue(userId: string, key: string): Promise<unknown> {
    this.assertOpen();
    checkUserId(userId);
    checkUserValueKey(key);
    const text = this.byUser.get(userId)?.get(key);
    return text === undefined ? undefined : parseUserValue(text);
  }

  async setUserValue(userId: string, key: string, value: unknown): Promise<{ previous: unknown }> {
    this.assertOpen();
    checkUserId(userId);
    checkUserValueKey(key);
    const text = value === undefined ? undefined : userValueText(key, value);
    let values = this.byUser.get(userId);
    const before = values?.get(key);
    if (text === undefined) {
      values?.delete(key);
      if (values?.size === 0) this.byUser.delete(userId);
    } else {
      if (values === undefined) this.byUser.set(userId, (values = new Map()));
      values.set(key, text);
    }
    return { previous: before === undefined ? undefined : parseUserValue(before) };
  }

  async listUserValueKeys(userId: string): Promise<string[]> {
    this.assertOpen();
    checkUserId(userId);
    return [...(this.byUser.get(userId)?.keys() ?? [])].sort(byCodePoint);
  }
}

/** Code-point order (as SQLite's BINARY and PostgreSQL's "C" collation compare), not UTF-16 unit order. */
export function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
