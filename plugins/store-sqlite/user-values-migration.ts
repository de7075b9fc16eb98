import type { Migration } from './migrations.js';

/**
 * Schema 11: per-user values (document 003's `UserState`). One row per user
 * and key, the value as JSON text; the primary key is both the upsert target
 * and the look-up of one user's keys (in BINARY, i.e. code-point, order).
 * Not tied to threads or operations: the pruner never removes them.
 */
export const USER_VALUES_MIGRATION: Migration = Object.freeze({
  version: 11,
  description: 'user values: JSON values per user and key (UserState.getValue / setValue)',
  sql: `
    CREATE TABLE user_values (
      user_id TEXT NOT NULL,
      key TEXT NOT NULL,
      value TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      PRIMARY KEY (user_id, key)
    ) WITHOUT ROWID;
  `,
});
