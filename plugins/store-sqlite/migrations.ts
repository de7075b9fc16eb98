import type Database from 'better-sqlite3';
import type { Logger } from '../../kernel/logger.js';
import { MESSAGE_IMAGES_MIGRATION } from './message-images-migration.js';
import { MESSAGE_STATUS_MIGRATION } from './message-status-migration.js';
import { SUBMISSIONS_MIGRATION } from './submissions-migration.js';
import { TOOL_STEPS_MIGRATION } from './tool-steps-migration.js';
import { USER_VALUES_MIGRATION } from './user-values-migration.js';

/** One schema step. `version` counts up from 1 without gaps; a shipped migration never changes. */
export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
  /**
   * Work that cannot run inside a transaction (VACUUM), run before the migration's own transaction. It must be
   * idempotent: a crash between it and the version bump runs it again on the next open.
   */
  readonly beforeTransaction?: (db: Database.Database) => void;
}

/** `PRAGMA auto_vacuum` value of INCREMENTAL: freed pages stay in the file until `incremental_vacuum` hands them back. */
export const AUTO_VACUUM_INCREMENTAL = 2;

/**
 * The schema history, oldest first. JSON columns are TEXT; timestamps are ISO
 * strings. `seq` integer keys give a stable insertion order (rowids may be
 * renumbered by VACUUM, an INTEGER PRIMARY KEY never is).
 */
export const MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    description: 'operations, messages, steps, hook registrations, users, decision log',
    sql: `
      CREATE TABLE operations (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        parent_operation_id TEXT,
        user_id TEXT,
        status TEXT NOT NULL,
        reason TEXT,
        agent TEXT NOT NULL,
        context TEXT NOT NULL,
        state TEXT NOT NULL,
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX operations_by_status ON operations (status, seq);
      CREATE INDEX operations_by_parent ON operations (parent_operation_id, seq);

      CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        operation_id TEXT NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        tool_result TEXT,
        compacted_into TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (operation_id, seq)
      );

      CREATE TABLE steps (
        seq INTEGER PRIMARY KEY,
        operation_id TEXT NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
        step_index INTEGER NOT NULL,
        kind TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        usage TEXT NOT NULL,
        summary TEXT NOT NULL
      );
      CREATE INDEX steps_by_operation ON steps (operation_id, step_index, seq);

      CREATE TABLE hook_registrations (
        operation_id TEXT NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        hook TEXT NOT NULL,
        PRIMARY KEY (operation_id, position)
      ) WITHOUT ROWID;

      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        email TEXT
      );

      CREATE TABLE decisions (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        operation_id TEXT,
        tool_call_id TEXT,
        agent_id TEXT,
        event TEXT NOT NULL,
        identifier TEXT,
        api_name TEXT,
        policies TEXT NOT NULL,
        decision TEXT NOT NULL,
        reason TEXT,
        defaulted INTEGER NOT NULL,
        latency_micros INTEGER NOT NULL,
        input_digest TEXT NOT NULL,
        raw_input TEXT
      );
      CREATE INDEX decisions_by_operation ON decisions (operation_id, created_at);
      CREATE INDEX decisions_by_created ON decisions (created_at);
      CREATE INDEX decisions_by_decision ON decisions (decision, created_at);

      -- Every evaluated policy of a decision (shadow ones included), so "decisions of policy X" is an index lookup.
      CREATE TABLE decision_policies (
        policy_id TEXT NOT NULL,
        decision_seq INTEGER NOT NULL REFERENCES decisions (seq) ON DELETE CASCADE,
        PRIMARY KEY (policy_id, decision_seq)
      ) WITHOUT ROWID;
      CREATE INDEX decision_policies_by_decision ON decision_policies (decision_seq);
    `,
  },
  {
    version: 2,
    description: 'narrow rows for the per-step writes: agent and context apart, messages and steps clustered by operation seq',
    // Each page a per-step commit touches is one WAL frame (a write, a checksum, later a checkpoint copy), so:
    // - the write-once agent (kilobytes) and context move to operation_definitions, and the per-step UPDATE
    //   rewrites a small operations row;
    // - messages and steps become WITHOUT ROWID tables keyed by the operation's integer seq (one b-tree each
    //   instead of table + index, short keys, and the newest operations sit at the right edge); the message id
    //   keeps a unique index of its own.
    // Only the child tables are copied, dropped and renamed; operations is narrowed in place (DROP COLUMN), so no
    // ON DELETE CASCADE fires during the migration.
    sql: `
      CREATE TABLE operation_definitions (
        operation_seq INTEGER PRIMARY KEY REFERENCES operations (seq) ON DELETE CASCADE,
        agent TEXT NOT NULL,
        context TEXT NOT NULL
      );
      INSERT INTO operation_definitions (operation_seq, agent, context) SELECT seq, agent, context FROM operations ORDER BY seq;
      ALTER TABLE operations DROP COLUMN agent;
      ALTER TABLE operations DROP COLUMN context;

      CREATE TABLE messages_v2 (
        operation_seq INTEGER NOT NULL REFERENCES operations (seq) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        tool_result TEXT,
        compacted_into TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (operation_seq, seq)
      ) WITHOUT ROWID;
      INSERT INTO messages_v2 (operation_seq, seq, id, role, content, tool_calls, tool_call_id, tool_result, compacted_into, created_at)
        SELECT o.seq, m.seq, m.id, m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_result, m.compacted_into, m.created_at
        FROM messages m JOIN operations o ON o.id = m.operation_id ORDER BY o.seq, m.seq;
      DROP TABLE messages;
      ALTER TABLE messages_v2 RENAME TO messages;
      CREATE UNIQUE INDEX messages_by_id ON messages (id);

      -- seq orders the steps that share an index; the v1 values (one global counter) keep their order.
      CREATE TABLE steps_v2 (
        operation_seq INTEGER NOT NULL REFERENCES operations (seq) ON DELETE CASCADE,
        step_index INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        usage TEXT NOT NULL,
        summary TEXT NOT NULL,
        PRIMARY KEY (operation_seq, step_index, seq)
      ) WITHOUT ROWID;
      INSERT INTO steps_v2 (operation_seq, step_index, seq, kind, started_at, finished_at, usage, summary)
        SELECT o.seq, s.step_index, s.seq, s.kind, s.started_at, s.finished_at, s.usage, s.summary
        FROM steps s JOIN operations o ON o.id = s.operation_id ORDER BY o.seq, s.step_index, s.seq;
      DROP TABLE steps;
      ALTER TABLE steps_v2 RENAME TO steps;
    `,
  },
  {
    version: 3,
    description: 'operation state versioned and written with the step row on a step-only commit; steps appended by rowid',
    // A step commit that changes only the state stores that state in its new step row instead of rewriting the
    // operations row: one page (one WAL frame) less per step. Every state write gets the next state version of its
    // operation; a reader takes the state of the operation's newest step when that step's version is above the
    // operations row's, else the row's. Steps become a rowid table keyed by operation_seq * 2^24 + commit number:
    // the newest step of an operation is the last key of its range (one seek), and an append at the right edge
    // takes SQLite's quick balance instead of the three-leaf rebalance a WITHOUT ROWID insert costs (the rows are
    // larger now that they carry the state). Existing operations keep version 0 and their steps no state.
    sql: `
      ALTER TABLE operations ADD COLUMN state_version INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE steps_v3 (
        key INTEGER PRIMARY KEY,
        operation_seq INTEGER NOT NULL REFERENCES operations (seq) ON DELETE CASCADE,
        step_index INTEGER NOT NULL,
        kind TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        usage TEXT NOT NULL,
        summary TEXT NOT NULL,
        state TEXT,
        state_version INTEGER,
        state_updated_at TEXT
      );
      INSERT INTO steps_v3 (key, operation_seq, step_index, kind, started_at, finished_at, usage, summary)
        SELECT operation_seq * 16777216 + ROW_NUMBER() OVER (PARTITION BY operation_seq ORDER BY step_index, seq),
          operation_seq, step_index, kind, started_at, finished_at, usage, summary
        FROM steps ORDER BY operation_seq, step_index, seq;
      DROP TABLE steps;
      ALTER TABLE steps_v3 RENAME TO steps;
    `,
  },
  {
    version: 4,
    description: 'messages and steps of an operation in one append-only log; generated message ids need no index; shared agent definitions',
    // A step commit used to touch three b-trees (steps, messages, messages_by_id): each a page, so a WAL frame and
    // later a checkpoint copy, plus the growth pages of each. Now a step's row and its messages are neighbours in one
    // rowid table keyed operation_seq * 2^24 + n (n counts the operation's entries in commit order), so the usual
    // commit writes one leaf page. Generated message ids are derived from the key and a per-database namespace
    // (message-ids.ts) and stored as NULL; only ids a caller supplied are stored, under a partial unique index.
    // Migrated rows keep their ids (all supplied, as far as this schema knows). An operation's migrated messages
    // come first, in seq order, then its steps in their version 3 order: entries of different kinds need no common
    // order, only each kind its own.
    sql: `
      CREATE TABLE store_identity (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
        message_id_namespace TEXT NOT NULL
      );
      INSERT INTO store_identity (singleton, message_id_namespace) VALUES (1, substr(lower(hex(randomblob(8))), 1, 15));

      CREATE TABLE operation_log (
        key INTEGER PRIMARY KEY,
        operation_seq INTEGER NOT NULL REFERENCES operations (seq) ON DELETE CASCADE,
        entry TEXT NOT NULL CHECK (entry IN ('message', 'step')),
        created_at TEXT NOT NULL,
        message_seq INTEGER,
        message_id TEXT,
        role TEXT,
        content TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        tool_result TEXT,
        compacted_into TEXT,
        step_index INTEGER,
        step_kind TEXT,
        started_at TEXT,
        finished_at TEXT,
        usage TEXT,
        summary TEXT,
        state TEXT,
        state_version INTEGER
      );
      INSERT INTO operation_log (key, operation_seq, entry, created_at, message_seq, message_id, role, content, tool_calls, tool_call_id,
          tool_result, compacted_into)
        SELECT operation_seq * 16777216 + ROW_NUMBER() OVER (PARTITION BY operation_seq ORDER BY seq), operation_seq, 'message', created_at,
          seq, id, role, content, tool_calls, tool_call_id, tool_result, compacted_into
        FROM messages ORDER BY operation_seq, seq;
      INSERT INTO operation_log (key, operation_seq, entry, created_at, step_index, step_kind, started_at, finished_at, usage, summary,
          state, state_version)
        SELECT s.key + COALESCE(c.n, 0), s.operation_seq, 'step',
          COALESCE(s.state_updated_at, s.finished_at), s.step_index, s.kind, s.started_at, s.finished_at, s.usage, s.summary,
          s.state, s.state_version
        FROM steps s LEFT JOIN (SELECT operation_seq, COUNT(*) AS n FROM messages GROUP BY operation_seq) c ON c.operation_seq = s.operation_seq
        ORDER BY s.key;
      DROP TABLE messages;
      DROP TABLE steps;
      CREATE UNIQUE INDEX operation_log_by_message_id ON operation_log (message_id) WHERE message_id IS NOT NULL;

      -- Only sub-operations have a parent: a top-level operation no longer writes an index page for its NULL.
      DROP INDEX operations_by_parent;
      CREATE INDEX operations_by_parent ON operations (parent_operation_id, seq) WHERE parent_operation_id IS NOT NULL;

      -- Operations of one agent share its stored definition (kilobytes, written once per distinct definition, found by
      -- the sha256 of its JSON text); the small context moves into the operations row. Migrated definitions get no
      -- digest: each distinct text is stored once, and new operations store theirs again with a digest.
      CREATE TABLE agent_definitions (
        seq INTEGER PRIMARY KEY,
        digest TEXT UNIQUE,
        agent TEXT NOT NULL
      );
      INSERT INTO agent_definitions (agent) SELECT agent FROM operation_definitions GROUP BY agent ORDER BY MIN(operation_seq);
      CREATE INDEX agent_definitions_by_text ON agent_definitions (agent);
      ALTER TABLE operations ADD COLUMN agent_seq INTEGER REFERENCES agent_definitions (seq);
      ALTER TABLE operations ADD COLUMN context TEXT NOT NULL DEFAULT '{}';
      UPDATE operations SET
        agent_seq = (SELECT a.seq FROM operation_definitions d JOIN agent_definitions a ON a.agent = d.agent WHERE d.operation_seq = operations.seq),
        context = (SELECT d.context FROM operation_definitions d WHERE d.operation_seq = operations.seq);
      DROP INDEX agent_definitions_by_text;
      DROP TABLE operation_definitions;
    `,
  },
  {
    version: 5,
    description: 'threads: a conversation across operations; every operation runs on one, its messages at thread positions',
    // A thread row per conversation; an operation names its thread (thread_seq) and where its messages start in it
    // (position_base: a message's thread position is position_base + its message_seq, so positions need no column
    // and no write of their own). A thread runs one operation at a time (the store refuses a second one while the
    // first is unfinished), so the positions of its operations follow one another. Every existing operation, sub-agent
    // operations included, gets a thread of its own, "thread_<operation id>" (the id the afterCallAgent event has
    // always named), with position_base 0: its messages keep their seqs as positions.
    sql: `
      CREATE TABLE threads (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        instance_id TEXT,
        uid TEXT,
        initial_data TEXT,
        thread_values TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      INSERT INTO threads (id, agent_id, created_at, updated_at)
        SELECT 'thread_' || id, agent_id, created_at, created_at FROM operations ORDER BY seq;
      ALTER TABLE operations ADD COLUMN thread_seq INTEGER REFERENCES threads (seq);
      ALTER TABLE operations ADD COLUMN position_base INTEGER NOT NULL DEFAULT 0;
      UPDATE operations SET thread_seq = (SELECT t.seq FROM threads t WHERE t.id = 'thread_' || operations.id);
      CREATE INDEX operations_by_thread ON operations (thread_seq, seq);
    `,
  },
  {
    version: 6,
    description: 'leases: who runs an operation now (owner, expiry in epoch milliseconds), claimed with one conditional UPDATE',
    // Two nullable columns on the operations row: no lease on every existing operation, so any process can claim one.
    // A lease write touches neither the state nor its version, nor any index.
    sql: `
      ALTER TABLE operations ADD COLUMN lease_owner TEXT;
      ALTER TABLE operations ADD COLUMN lease_expires_at INTEGER;
    `,
  },
  {
    version: 7,
    description: 'retention: auto_vacuum = INCREMENTAL, so space a prune frees can be given back to the file system',
    // A prune deletes whole threads, which leaves free pages inside the file; with auto_vacuum = INCREMENTAL
    // (pointer-map pages that say which page points where) `PRAGMA incremental_vacuum` moves pages from the end of
    // the file into the free ones and truncates it, a slice at a time. The mode can only change while the file has
    // no tables or through a VACUUM, which cannot run in a transaction: a new database gets it before its first table
    // (open-database.ts), an existing one through this one-time VACUUM (it rewrites the whole file, so it takes a
    // while on a large one and needs as much free disk space again). No table changes: rowids and INTEGER PRIMARY
    // KEYs (every key this schema uses) keep their values through a VACUUM.
    sql: '',
    beforeTransaction(db) {
      if ((db.pragma('auto_vacuum', { simple: true }) as number) === AUTO_VACUUM_INCREMENTAL) return;
      db.pragma(`auto_vacuum = ${AUTO_VACUUM_INCREMENTAL}`);
      db.exec('VACUUM');
    },
  },
  SUBMISSIONS_MIGRATION,
  MESSAGE_IMAGES_MIGRATION,
  TOOL_STEPS_MIGRATION,
  USER_VALUES_MIGRATION,
  MESSAGE_STATUS_MIGRATION,
]);

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Applies every migration above `fromVersion`, each in its own transaction
 * together with its `PRAGMA user_version` bump, so a crash leaves the database
 * at the last complete version; one that another connection applied meanwhile
 * is skipped. Synchronous; throws the SQLite error of a
 * failed migration (that migration is rolled back).
 */
export function applyMigrations(
  db: Database.Database,
  fromVersion: number,
  logger?: Logger,
  migrations: readonly Migration[] = MIGRATIONS,
): number {
  let version = fromVersion;
  for (const migration of migrations) {
    if (migration.version <= version) continue;
    if (migration.beforeTransaction && (db.pragma('user_version', { simple: true }) as number) < migration.version) migration.beforeTransaction(db);
    // The version is read again under the write lock: another process opening the same file may have applied it.
    const applied = db.transaction(() => {
      if ((db.pragma('user_version', { simple: true }) as number) >= migration.version) return false;
      if (migration.sql.trim() !== '') db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
      return true;
    }).immediate();
    version = migration.version;
    if (applied) logger?.info('store migrated', { version, description: migration.description });
  }
  return version;
}
