import { nowIso } from '../../kernel/clock.js';
import { checkUserId, checkUserValueKey, parseUserValue, userValueText } from '../../kernel/user-values.js';
import type { PostgresConnection } from './postgres-connection.js';

/**
 * Per-user values in store-postgres (`user_values`, migration 2). A write is
 * one READ COMMITTED transaction that locks the row before it reads the
 * previous value (SELECT ... FOR UPDATE; a removal is DELETE ... RETURNING),
 * so concurrent writers of one key, in any process, each see what the one
 * before stored. When the row does not exist yet and another writer inserts
 * it first, the insert skips (ON CONFLICT DO NOTHING) and the write goes
 * round again, now finding and locking that row.
 */
export class PostgresUserValues {
  constructor(private readonly db: PostgresConnection) {}

  async get(userId: string, key: string): Promise<unknown> {
    checkUserId(userId);
    checkUserValueKey(key);
    const { rows } = await this.db.query<{ value: string }>('SELECT value FROM user_values WHERE user_id = $1 AND key = $2', [userId, key]);
    return rows[0] === undefined ? undefined : parseUserValue(rows[0].value);
  }

  async set(userId: string, key: string, value: unknown): Promise<{ previous: unknown }> {
    checkUserId(userId);
    checkUserValueKey(key);
    const text = value === undefined ? undefined : userValueText(key, value);
    const before = await this.db.transaction(async (c): Promise<string | undefined> => {
      if (text === undefined) {
        const removed = await c.query<{ value: string }>('DELETE FROM user_values WHERE user_id = $1 AND key = $2 RETURNING value', [userId, key]);
        return removed.rows[0]?.value;
      }
      for (;;) {
        const locked = await c.query<{ value: string }>('SELECT value FROM user_values WHERE user_id = $1 AND key = $2 FOR UPDATE', [userId, key]);
        if (locked.rows[0] !== undefined) {
          await c.query('UPDATE user_values SET value = $3, updated_at = $4 WHERE user_id = $1 AND key = $2', [userId, key, text, nowIso()]);
          return locked.rows[0].value;
        }
        const inserted = await c.query('INSERT INTO user_values (user_id, key, value, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (user_id, key) DO NOTHING', [userId, key, text, nowIso()]);
        if (inserted.rowCount === 1) return undefined;
      }
    });
    return { previous: before === undefined ? undefined : parseUserValue(before) };
  }

  async keys(userId: string): Promise<string[]> {
    checkUserId(userId);
    const { rows } = await this.db.query<{ key: string }>('SELECT key FROM user_values WHERE user_id = $1 ORDER BY key', [userId]);
    return rows.map((r) => r.key);
  }
}
