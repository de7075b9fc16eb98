import type { PoolClient } from 'pg';
import { HookgateError } from '../../kernel/errors.js';

/*
 * The versioned schema of store-postgres. Each migration is applied once, in
 * order, inside one transaction together with its row in
 * `hookgate_migrations`; a migration that fails leaves nothing behind.
 *
 * Column choices (docs/as-built.md, "store-postgres"):
 * - JSON values are `text`, not `jsonb`: jsonb reorders keys, drops duplicate
 *   keys and rewrites numbers, and the contract hands back what was stored
 *   (a duplicate admission compares the stored message's JSON text).
 * - Times are the ISO strings the kernel passes (text): read back exactly.
 * - Ids and times use COLLATE "C" so ordering and prefix ranges follow code
 *   points, as in store-sqlite (a locale collation would not).
 * - Row sequences and positions are bigint (read back as JS numbers).
 */
const C = 'COLLATE "C"';

/** The migrations, by version (index + 1). */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE threads (
    seq bigserial PRIMARY KEY,
    id text ${C} NOT NULL UNIQUE,
    agent_id text NOT NULL,
    instance_id text,
    uid text,
    initial_data text,
    thread_values text NOT NULL,
    -- The thread's newest message position: positions are handed out under this row's lock.
    last_position bigint NOT NULL DEFAULT 0,
    created_at text ${C} NOT NULL,
    updated_at text ${C} NOT NULL
  );
  CREATE TABLE operations (
    seq bigserial PRIMARY KEY,
    id text ${C} NOT NULL UNIQUE,
    thread_seq bigint NOT NULL REFERENCES threads (seq),
    agent_id text NOT NULL,
    parent_operation_id text ${C},
    user_id text,
    status text NOT NULL,
    reason text,
    agent text NOT NULL,
    context text NOT NULL,
    state text NOT NULL,
    error text,
    version bigint NOT NULL DEFAULT 0,
    last_message_seq integer NOT NULL DEFAULT 0,
    lease_owner text,
    lease_expires_at bigint,
    created_at text ${C} NOT NULL,
    updated_at text ${C} NOT NULL
  );
  CREATE INDEX operations_by_thread ON operations (thread_seq, seq);
  CREATE INDEX operations_by_status ON operations (status, seq);
  CREATE INDEX operations_by_parent ON operations (parent_operation_id) WHERE parent_operation_id IS NOT NULL;
  CREATE TABLE messages (
    seq bigserial PRIMARY KEY,
    id text ${C} NOT NULL UNIQUE,
    operation_seq bigint NOT NULL REFERENCES operations (seq) ON DELETE CASCADE,
    thread_seq bigint NOT NULL,
    message_seq integer NOT NULL,
    position bigint NOT NULL,
    role text NOT NULL,
    -- JSON text of the content string: PostgreSQL text cannot hold NUL, JSON escapes it.
    content text NOT NULL,
    tool_calls text,
    tool_call_id text,
    tool_result text,
    images text,
    compacted_into text,
    created_at text ${C} NOT NULL,
    UNIQUE (operation_seq, message_seq),
    UNIQUE (thread_seq, position)
  );
  CREATE TABLE steps (
    seq bigserial PRIMARY KEY,
    operation_seq bigint NOT NULL REFERENCES operations (seq) ON DELETE CASCADE,
    step_index integer NOT NULL,
    kind text NOT NULL,
    started_at text NOT NULL,
    finished_at text NOT NULL,
    usage text NOT NULL,
    summary text NOT NULL
  );
  CREATE INDEX steps_by_operation ON steps (operation_seq, step_index, seq);
  CREATE TABLE hook_registrations (
    operation_seq bigint NOT NULL REFERENCES operations (seq) ON DELETE CASCADE,
    position integer NOT NULL,
    hook text NOT NULL,
    PRIMARY KEY (operation_seq, position)
  );
  CREATE TABLE users (id text PRIMARY KEY, email text);
  CREATE TABLE decisions (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    created_at text ${C} NOT NULL,
    operation_id text,
    tool_call_id text,
    agent_id text,
    event text NOT NULL,
    identifier text,
    api_name text,
    policies text NOT NULL,
    decision text NOT NULL,
    reason text,
    defaulted boolean NOT NULL,
    latency_micros double precision NOT NULL,
    input_digest text NOT NULL,
    raw_input text
  );
  CREATE INDEX decisions_by_time ON decisions (created_at, seq);
  CREATE INDEX decisions_by_operation ON decisions (operation_id);
  CREATE TABLE decision_policies (
    policy_id text NOT NULL,
    decision_seq bigint NOT NULL REFERENCES decisions (seq) ON DELETE CASCADE,
    PRIMARY KEY (policy_id, decision_seq)
  );
  CREATE INDEX decision_policies_by_decision ON decision_policies (decision_seq);
  CREATE TABLE submissions (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    dispatch_id text NOT NULL UNIQUE,
    thread_seq bigint NOT NULL REFERENCES threads (seq),
    agent_id text NOT NULL,
    instance_id text NOT NULL,
    status text NOT NULL,
    message text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    first_started_at text,
    operation_id text,
    joined_into text,
    abort_requested_at text,
    result text,
    error text,
    accepted_at text NOT NULL,
    updated_at text NOT NULL,
    settled_at text
  );
  CREATE INDEX submissions_by_thread ON submissions (thread_seq, seq);
  CREATE INDEX submissions_unsettled ON submissions (thread_seq) WHERE status IN ('queued', 'running', 'joined');
  CREATE TABLE tool_steps (
    seq bigserial PRIMARY KEY,
    operation_seq bigint NOT NULL REFERENCES operations (seq) ON DELETE CASCADE,
    tool_call_id text NOT NULL,
    name text NOT NULL,
    value text NOT NULL,
    recorded_at text NOT NULL,
    UNIQUE (operation_seq, tool_call_id, name)
  );
  `,
  // 2: per-user values (UserState.getValue / setValue), one row per user and key; never pruned.
  `
  CREATE TABLE user_values (
    user_id text ${C} NOT NULL,
    key text ${C} NOT NULL,
    value text NOT NULL,
    updated_at text NOT NULL,
    PRIMARY KEY (user_id, key)
  );
  `,
  // 3: what a message update of document 003 may set besides the content (NULL until an update sets them).
  `
  ALTER TABLE messages ADD COLUMN status text;
  ALTER TABLE messages ADD COLUMN response_completed_at bigint;
  `,
];

/** The schema version this code writes. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** An arbitrary constant: the advisory lock that serializes migrations of one database across processes. */
const MIGRATION_LOCK = 0x686b6761; // "hkga"

/**
 * Creates `schema` when missing and applies the pending migrations, each in
 * a transaction with its version row, under a transaction-level advisory
 * lock so two processes starting at once migrate one after the other (the
 * second finds nothing to do). Rejects with STORE_SCHEMA_NEWER, changing
 * nothing, when the schema holds a version this code does not know.
 */
export async function migrateSchema(client: PoolClient, schema: string): Promise<void> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch(async (err: unknown) => {
    // Two first starts racing on CREATE SCHEMA: the loser sees a unique violation; the schema exists either way.
    if ((err as { code?: string }).code !== '23505') throw err;
  });
  await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.hookgate_migrations (version integer PRIMARY KEY, applied_at text NOT NULL)`).catch((err: unknown) => {
    if ((err as { code?: string }).code !== '23505' && (err as { code?: string }).code !== '42P07') throw err;
  });
  for (;;) {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const { rows } = await client.query<{ version: number | null }>(`SELECT MAX(version) AS version FROM ${schema}.hookgate_migrations`);
      const current = rows[0]?.version ?? 0;
      if (current > POSTGRES_SCHEMA_VERSION) {
        throw new HookgateError('STORE_SCHEMA_NEWER', `The PostgreSQL schema ${schema} is at version ${current}, newer than this hookgate writes (${POSTGRES_SCHEMA_VERSION}); it was left untouched`, {
          details: { schema, version: current, supported: POSTGRES_SCHEMA_VERSION },
        });
      }
      if (current === POSTGRES_SCHEMA_VERSION) {
        await client.query('COMMIT');
        return;
      }
      await client.query(`SET LOCAL search_path TO ${schema}`);
      await client.query(MIGRATIONS[current]!);
      await client.query(`INSERT INTO ${schema}.hookgate_migrations (version, applied_at) VALUES ($1, $2)`, [current + 1, new Date().toISOString()]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }
}
