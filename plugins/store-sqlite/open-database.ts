import { mkdirSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { HookgateError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import { applyMigrations, AUTO_VACUUM_INCREMENTAL, LATEST_SCHEMA_VERSION } from './migrations.js';
import { corruptError, isCorruptionError } from './sqlite-errors.js';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** Pages (4 KB by default) of WAL that trigger an automatic checkpoint after a commit. */
const WAL_AUTOCHECKPOINT_PAGES = 4000;
/** Tables every hookgate database has, and those of the message and step storage before and after schema 4. */
const REQUIRED_TABLES = ['operations', 'hook_registrations', 'users', 'decisions'];
const LOG_TABLES_BEFORE_4 = ['messages', 'steps'];
const LOG_TABLES_FROM_4 = ['operation_log', 'store_identity', 'agent_definitions'];

/**
 * Opens (or creates) the database at `file` and brings its schema to the
 * latest version. Synchronous. A missing or empty file is created from
 * scratch (parent folders included). Every check runs before the first write,
 * so a refused file is never modified:
 * - not a SQLite file, damaged, or a SQLite file hookgate did not create -> STORE_CORRUPT;
 * - `user_version` above {@link LATEST_SCHEMA_VERSION} -> STORE_SCHEMA_NEWER.
 */
const NEW_DATABASE_PAGE_SIZE = 2048;

export function openDatabase(file: string, logger?: Logger): Database.Database {
  const inMemory = file === ':memory:';
  if (!inMemory) {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    assertSqliteHeader(file);
  }
  const db = new Database(file);
  try {
    const version = inspect(db, file);
    // A new database gets 2 KB pages: every commit writes whole pages to the WAL, and a step's rows are small, so
    // smaller pages mean fewer bytes per commit (about 20% less time per step here). Existing files keep theirs.
    if (version === 0 && !inMemory) db.pragma(`page_size = ${NEW_DATABASE_PAGE_SIZE}`);
    // Set before the first table, so a new database needs no VACUUM for it (migration 7 says why).
    if (version === 0) db.pragma(`auto_vacuum = ${AUTO_VACUUM_INCREMENTAL}`);
    if (!inMemory) db.pragma('journal_mode = WAL');
    // Checkpoint every ~16 MB of WAL instead of SQLite's 4 MB: a checkpoint copies each page once however often it
    // was rewritten and costs two fsyncs, so fewer, larger ones take less time per step commit.
    if (!inMemory) db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    // WAL + NORMAL: consistent after any crash and durable against process crashes, without an fsync per commit.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    applyMigrations(db, version, logger);
    return db;
  } catch (err) {
    db.close();
    throw isCorruptionError(err) ? corruptError(file, err) : err;
  }
}

/** Refuses a non-empty file that does not start with the SQLite header, before SQLite touches it. */
function assertSqliteHeader(file: string): void {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (size === 0) return;
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (!header.equals(SQLITE_HEADER)) throw corruptError(file);
}

/** Reads the schema version and checks the file is one of ours, without writing. */
function inspect(db: Database.Database, file: string): number {
  const version = db.pragma('user_version', { simple: true }) as number;
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]),
  );
  if (version > LATEST_SCHEMA_VERSION) {
    throw new HookgateError(
      'STORE_SCHEMA_NEWER',
      `The database ${file} has schema version ${version}, newer than version ${LATEST_SCHEMA_VERSION} this hookgate supports; upgrade hookgate`,
      { details: { path: file, version, supported: LATEST_SCHEMA_VERSION } },
    );
  }
  if (version === 0 && tables.size > 0) throw corruptError(file);
  const required = [...REQUIRED_TABLES, ...(version >= 4 ? LOG_TABLES_FROM_4 : LOG_TABLES_BEFORE_4)];
  if (version > 0 && required.some((t) => !tables.has(t))) throw corruptError(file);
  return version;
}
