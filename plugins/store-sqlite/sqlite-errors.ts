import { HookgateError } from '../../kernel/errors.js';

function sqliteCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/** True for SQLite's "damaged file" and "not a database" errors. */
export function isCorruptionError(err: unknown): boolean {
  const code = sqliteCode(err);
  return code !== undefined && (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || code.startsWith('SQLITE_CORRUPT_'));
}

/** True when a write broke a PRIMARY KEY constraint (a key taken). */
export function isPrimaryKeyError(err: unknown): boolean {
  return sqliteCode(err) === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** True when a write broke a PRIMARY KEY or UNIQUE constraint (a duplicate id). */
export function isDuplicateKeyError(err: unknown): boolean {
  const code = sqliteCode(err);
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

export function corruptError(path: string, cause?: unknown): HookgateError {
  return new HookgateError('STORE_CORRUPT', `The database file ${path} is not a hookgate database or is damaged; it was left untouched`, {
    cause,
    details: { path },
  });
}

/**
 * Maps a SQLite failure to the store's catalog: damage becomes STORE_CORRUPT,
 * anything else is returned unchanged (HookgateErrors thrown inside a
 * transaction pass through as they are).
 */
export function translateSqliteError(err: unknown, path: string): unknown {
  if (isCorruptionError(err)) return corruptError(path, err);
  return err;
}
