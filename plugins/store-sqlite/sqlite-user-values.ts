import type Database from 'better-sqlite3';
import { nowIso } from '../../kernel/clock.js';
import { checkUserId, checkUserValueKey, parseUserValue, userValueText } from '../../kernel/user-values.js';

/**
 * Per-user values in store-sqlite (the `user_values` table of schema 11). A
 * write is its own IMMEDIATE transaction: the previous value is read under
 * the write lock, so concurrent writers (other connections, other
 * processes) each see what the one before stored. Methods run inside the
 * store's guard; arguments are checked before anything is read.
 */
export class SqliteUserValues {
  private readonly s;
  private readonly setTx: Database.Transaction<(userId: string, key: string, text: string | undefined) => string | undefined>;

  constructor(db: Database.Database) {
    const s = (this.s = {
      get: db.prepare<[string, string], string>('SELECT value FROM user_values WHERE user_id = ? AND key = ?').pluck(),
      upsert: db.prepare<[string, string, string, string]>(
        'INSERT INTO user_values (user_id, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      ),
      remove: db.prepare<[string, string]>('DELETE FROM user_values WHERE user_id = ? AND key = ?'),
      keys: db.prepare<[string], string>('SELECT key FROM user_values WHERE user_id = ? ORDER BY key').pluck(),
    });
    this.setTx = db.transaction((userId: string, key: string, text: string | undefined) => {
      const before = s.get.get(userId, key);
      if (text === undefined) s.remove.run(userId, key);
      else s.upsert.run(userId, key, text, nowIso());
      return before;
    });
  }

  get(userId: string, key: string): unknown {
    checkUserId(userId);
    checkUserValueKey(key);
    const text = this.s.get.get(userId, key);
    return text === undefined ? undefined : parseUserValue(text);
  }

  set(userId: string, key: string, value: unknown): { previous: unknown } {
    checkUserId(userId);
    checkUserValueKey(key);
    const before = this.setTx.immediate(userId, key, value === undefined ? undefined : userValueText(key, value));
    return { previous: before === undefined ? undefined : parseUserValue(before) };
  }

  keys(userId: string): string[] {
    checkUserId(userId);
    return this.s.keys.all(userId);
  }
}
