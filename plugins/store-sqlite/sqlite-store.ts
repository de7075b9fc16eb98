import type Database from 'better-sqlite3';
import { nowIso } from '../../kernel/clock.js';
import { HookgateError } from '../../kernel/errors.js';
import { leaseWindow } from '../../kernel/lease-window.js';
import { newMessageRecord } from '../../kernel/message-record.js';
import type { Logger } from '../../kernel/logger.js';
import type {
  DecisionFilter,
  DecisionRecord,
  LeaseClaim,
  LeaseRequest,
  MessageRecord,
  MessageUpdate,
  NewMessage,
  NewOperation,
  OperationFilter,
  OperationLease,
  OperationRecord,
  StepCommit,
  StepRecord,
  Store,
  ThreadRecord,
  NewThread,
  ToolResult,
  UserRecord,
} from '../../kernel/store.js';
import { defaultThreadId } from '../../kernel/store.js';
import type { SubmissionAdmission, SubmissionAdmissionResult, SubmissionFilter, SubmissionRecord, SubmissionSettlement } from '../../kernel/submissions.js';
import { SqliteSubmissions } from './sqlite-submissions.js';
import { SqliteToolSteps } from './sqlite-tool-steps.js';
import { SqliteUserValues } from './sqlite-user-values.js';
import { SqliteMessageUpdate } from './sqlite-message-update.js';
import type { NewToolStep, ToolStepRecord } from '../../kernel/tool-steps.js';
import type { PruneCounts, PruneOptions, RetentionPolicy } from '../../kernel/retention.js';
import { BackgroundCheckpointer } from './background-checkpointer.js';
import { MessageIds } from './message-ids.js';
import { LATEST_SCHEMA_VERSION } from './migrations.js';
import { openDatabase } from './open-database.js';
import {
  toDecisionRecord,
  toJson,
  toMessageRecord,
  toOperationRecord,
  toStepRecord,
  type DecisionRow,
  type MessageRow,
  type OperationRow,
  type StepRow,
  type ThreadRow,
  toThreadRecord,
} from './rows.js';
import { OperationSeqs, type LogTail } from './operation-seqs.js';
import { stateJson, summaryJson, toolCallsJson, toolResultJson, usageJson } from './step-json.js';
import { AgentTexts } from './agent-texts.js';
import { SqlitePruner } from './sqlite-pruner.js';
import { prefixUpperBound } from './prefix-range.js';
import { isDuplicateKeyError, translateSqliteError } from './sqlite-errors.js';
import { commitUsualStep, USUAL_STEP_SQL, type UsualStepStatement } from './usual-step-commit.js';

export interface SqliteStoreOptions {
  /** A file path (parent folders are created) or `:memory:`. */
  path: string;
  logger?: Logger;
  /** Copy WAL frames into the file on a worker thread (default true; a `:memory:` store has no WAL). */
  backgroundCheckpoints?: boolean;
}

/** Log keys of operation `seq` are seq * 2^24 + 1, + 2... in commit order (see migration 4). */
const LOG_KEYS_PER_OPERATION = 16_777_216;
/** The key range of operation `o`'s log entries, exclusive bounds. */
const LOG_RANGE = (alias: string) =>
  `${alias}.key > o.seq * ${LOG_KEYS_PER_OPERATION} AND ${alias}.key < (o.seq + 1) * ${LOG_KEYS_PER_OPERATION}`;
/** The key of operation `o`'s newest log entry that carries a state (one backward seek over its range), or NULL. */
const NEWEST_STATE_KEY = `(SELECT key FROM operation_log l WHERE ${LOG_RANGE('l')} AND l.state_version IS NOT NULL ORDER BY key DESC LIMIT 1)`;
/**
 * An operation row joined with its agent definition and its current state: the state of
 * its newest step entry when that entry carries a newer state version than the row (a step-only commit wrote it),
 * else the row's. updatedAt is the later of the row's and that entry's commit time.
 */
const OPERATION_COLUMNS =
  `o.id, o.agent_id, t.id AS thread_id, o.parent_operation_id, o.user_id, o.status, o.reason, a.agent, o.context, COALESCE(ls.state, o.state) AS state,
   o.error, o.created_at, CASE WHEN ls.state IS NULL THEN o.updated_at ELSE MAX(o.updated_at, ls.created_at) END AS updated_at,
   COALESCE(ls.state_version, o.state_version) AS version`;
const OPERATION_FROM = `operations o JOIN agent_definitions a ON a.seq = o.agent_seq JOIN threads t ON t.seq = o.thread_seq
  LEFT JOIN operation_log ls ON ls.key = ${NEWEST_STATE_KEY} AND ls.state_version > o.state_version`;
/**
 * A message entry with its operation's id and its thread position (the operation's position_base plus its seq,
 * see migration 5); `id` is NULL for a generated id (derived from the key).
 */
const MESSAGE_COLUMNS = `l.key, l.message_id AS id, o.id AS operation_id, l.message_seq AS seq, o.position_base + l.message_seq AS position, l.role, l.content, l.tool_calls, l.tool_call_id,
  l.tool_result, l.compacted_into, l.created_at, l.images, l.status, l.response_completed_at`;
const MESSAGE_FROM = `operations o JOIN operation_log l ON ${LOG_RANGE('l')}`;
const DECISION_COLUMNS =
  'id, created_at, operation_id, tool_call_id, agent_id, event, identifier, api_name, policies, decision, reason, defaulted, latency_micros, input_digest, raw_input';

/**
 * Id-prefix look-ups (`findOperationIds`): a range on the unique index of
 * operations.id, [prefix, prefixUpperBound(prefix)); code point order is
 * UTF-8 byte order, which is how TEXT compares. When no upper bound exists,
 * the scan starts at the prefix and `substr` keeps it exact. Exported so a
 * spec can check that SQLite plans both as index searches.
 */
export const FIND_OPERATION_IDS_SQL = {
  bounded: 'SELECT id FROM operations WHERE id >= ? AND id < ? ORDER BY id LIMIT ?',
  unbounded: 'SELECT id FROM operations WHERE id >= @prefix AND substr(id, 1, length(@prefix)) = @prefix ORDER BY id LIMIT @limit',
} as const;

type Statements = ReturnType<typeof prepareStatements>;

/** Every fixed statement, prepared once per connection. */
function prepareStatements(db: Database.Database) {
  return {
    insertOperation: db.prepare(
      `INSERT INTO operations (id, agent_id, parent_operation_id, user_id, status, reason, state, error, created_at, updated_at, agent_seq, context,
         thread_seq, position_base, lease_owner, lease_expires_at)
       VALUES (@id, @agentId, @parentOperationId, @userId, 'running', NULL, @state, NULL, @now, @now, @agentSeq, @context, @threadSeq, @positionBase,
         @leaseOwner, @leaseExpiresAt)`,
    ),
    insertThread: db.prepare(
      `INSERT INTO threads (id, agent_id, instance_id, uid, initial_data, thread_values, created_at, updated_at)
       VALUES (@id, @agentId, @instanceId, @uid, @initialData, @values, @now, @now)`,
    ),
    threadSeq: db.prepare<[string], number>('SELECT seq FROM threads WHERE id = ?').pluck(),
    getThread: db.prepare<[string], ThreadRow>(
      'SELECT id, agent_id, instance_id, uid, initial_data, thread_values, created_at, updated_at FROM threads WHERE id = ?',
    ),
    updateThreadValues: db.prepare<[string, string, string]>('UPDATE threads SET thread_values = ?, updated_at = ? WHERE id = ?'),
    updateThreadValuesBySeq: db.prepare<[string, string, number]>('UPDATE threads SET thread_values = ?, updated_at = ? WHERE seq = ?'),
    // An unfinished operation of the thread, if any (the guard of createOperation({ threadId })).
    threadBusyOperation: db.prepare<[number], string>(
      "SELECT id FROM operations WHERE thread_seq = ? AND status IN ('running', 'waiting_approval', 'waiting_tool') LIMIT 1",
    ).pluck(),
    // The thread's last position: its newest operation's base plus that operation's newest message seq.
    threadLastPosition: db.prepare<[number], number>(
      `SELECT o.position_base + COALESCE((SELECT message_seq FROM operation_log l WHERE ${LOG_RANGE('l')} AND l.message_seq IS NOT NULL
         ORDER BY key DESC LIMIT 1), 0)
       FROM operations o WHERE o.thread_seq = ? ORDER BY o.seq DESC LIMIT 1`,
    ).pluck(),
    threadOfOperation: db.prepare<[number], number>('SELECT thread_seq FROM operations WHERE seq = ?').pluck(),
    listThreadMessages: db.prepare<[string, number], MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE o.thread_seq = (SELECT seq FROM threads WHERE id = ?) AND l.entry = 'message'
       AND l.compacted_into IS NULL AND o.position_base + l.message_seq >= ? ORDER BY o.seq, l.key`,
    ),
    listAllThreadMessages: db.prepare<[string, number], MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE o.thread_seq = (SELECT seq FROM threads WHERE id = ?) AND l.entry = 'message'
       AND o.position_base + l.message_seq >= ? ORDER BY o.seq, l.key`,
    ),
    listThreadOperations: db.prepare<[string], OperationRow>(
      `SELECT ${OPERATION_COLUMNS} FROM ${OPERATION_FROM} WHERE o.thread_seq = (SELECT seq FROM threads WHERE id = ?) ORDER BY o.seq`,
    ),
    // Newest first on the (thread_seq, seq) index, the caller reverses: no scan of the thread's older operations.
    listLastThreadOperations: db.prepare<[string, number], OperationRow>(
      `SELECT ${OPERATION_COLUMNS} FROM ${OPERATION_FROM} WHERE o.thread_seq = (SELECT seq FROM threads WHERE id = ?) ORDER BY o.seq DESC LIMIT ?`,
    ),
    agentDefinitionSeq: db.prepare<[string], number>('SELECT seq FROM agent_definitions WHERE digest = ?').pluck(),
    insertAgentDefinition: db.prepare<[string, string]>('INSERT INTO agent_definitions (digest, agent) VALUES (?, ?)'),
    getOperation: db.prepare<[string], OperationRow>(`SELECT ${OPERATION_COLUMNS} FROM ${OPERATION_FROM} WHERE o.id = ?`),
    operationIdsInRange: db.prepare<[string, string, number], string>(FIND_OPERATION_IDS_SQL.bounded).pluck(),
    operationIdsFrom: db.prepare<{ prefix: string; limit: number }, string>(FIND_OPERATION_IDS_SQL.unbounded).pluck(),
    operationExists: db.prepare<[string], number>('SELECT 1 FROM operations WHERE id = ?').pluck(),
    operationSeq: db.prepare<[string], number>('SELECT seq FROM operations WHERE id = ?').pluck(),
    messageIdNamespace: db.prepare<[], string>('SELECT message_id_namespace FROM store_identity WHERE singleton = 1').pluck(),
    updateOperation: db.prepare(
      `UPDATE operations SET state = @state, state_version = @version, status = COALESCE(@status, status),
       reason = COALESCE(@reason, reason), error = COALESCE(@error, error), updated_at = @now WHERE seq = @seq`,
    ),
    // A state-only change without a step (or with one that cannot carry it). It leaves status alone, so SQLite does
    // not rewrite the operations_by_status entry.
    updateOperationState: db.prepare<[string, number, string, number]>('UPDATE operations SET state = ?, state_version = ?, updated_at = ? WHERE seq = ?'),
    // What a commit needs to know, by rowid (the id check guards against a reused seq), read inside its write
    // transaction: the row's state version, the operation's newest log key, the newest state version in its log,
    // and its newest message seq (message seqs grow with the key), each one backward seek over the range; and the
    // operation's thread position base (a column of the row already read).
    logProbe: db.prepare<[number, string], [number, number | null, number | null, number | null, number]>(
      `SELECT o.state_version,
         (SELECT key FROM operation_log l WHERE ${LOG_RANGE('l')} ORDER BY key DESC LIMIT 1),
         (SELECT state_version FROM operation_log l WHERE ${LOG_RANGE('l')} AND l.state_version IS NOT NULL ORDER BY key DESC LIMIT 1),
         (SELECT message_seq FROM operation_log l WHERE ${LOG_RANGE('l')} AND l.message_seq IS NOT NULL ORDER BY key DESC LIMIT 1),
         o.position_base
       FROM operations o WHERE o.seq = ? AND o.id = ?`,
    ).raw(),
    insertMessage: db.prepare<[number, number, string, number, string | null, string, string, string | null, string | null, string | null, string | null]>(
      `INSERT INTO operation_log (key, operation_seq, entry, created_at, message_seq, message_id, role, content, tool_calls, tool_call_id, tool_result, images)
       VALUES (?, ?, 'message', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // A generated id names the message at its key only when that message has no supplied id.
    messageKeyExists: db.prepare<[number], number>("SELECT 1 FROM operation_log WHERE key = ? AND entry = 'message' AND message_id IS NULL").pluck(),
    // Any message of the thread (parameter 3): a continued thread compacts earlier operations' messages too.
    compactGeneratedMessage: db.prepare<[string, number, number]>(
      `UPDATE operation_log SET compacted_into = ? WHERE key = ? AND entry = 'message' AND message_id IS NULL
       AND operation_seq IN (SELECT seq FROM operations WHERE thread_seq = ?)`,
    ),
    compactGivenMessage: db.prepare<[string, string, number]>(
      'UPDATE operation_log SET compacted_into = ? WHERE message_id = ? AND operation_seq IN (SELECT seq FROM operations WHERE thread_seq = ?)',
    ),
    listMessages: db.prepare<[string], MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE o.id = ? AND l.entry = 'message' AND l.compacted_into IS NULL ORDER BY l.key`,
    ),
    listAllMessages: db.prepare<[string], MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM ${MESSAGE_FROM} WHERE o.id = ? AND l.entry = 'message' ORDER BY l.key`,
    ),
    // Parameters: content, result, then the operation's key range (exclusive) and the tool call id.
    fillPlaceholder: db.prepare<[string, string, number, number, string]>(
      `UPDATE operation_log SET content = ?, tool_result = ? WHERE key > ? AND key < ?
       AND entry = 'message' AND tool_call_id = ? AND role = 'tool' AND tool_result IS NULL`,
    ),
    // A step (parameters 1-11, as insertStep) and the message after it with a generated id (12-20, as insertMessage
    // without message_id): the step loop's usual commit in one statement.
    insertStepAndMessage: db.prepare<[number, number, string, number, string, string, string, string, string, string | null, number | null,
      number, number, string, number, string, string, string | null, string | null, string | null]>(
      `INSERT INTO operation_log (key, operation_seq, entry, created_at, step_index, step_kind, started_at, finished_at, usage, summary, state,
         state_version, message_seq, message_id, role, content, tool_calls, tool_call_id, tool_result)
       VALUES (?, ?, 'step', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         (?, ?, 'message', ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, NULL, ?, ?, ?, ?, ?)`,
    ),
    // The usual step commit in autocommit mode, guarded by the kept tail (usual-step-commit.ts).
    insertUsualStep: db.prepare(USUAL_STEP_SQL) as UsualStepStatement,
    // This connection's data version: it changes when another connection commits (see operation-seqs.ts, LogTail).
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    // state, state_version: both or neither (NULL); created_at is the commit time either way.
    insertStep: db.prepare<[number, number, string, number, string, string, string, string, string, string | null, number | null]>(
      `INSERT INTO operation_log (key, operation_seq, entry, created_at, step_index, step_kind, started_at, finished_at, usage, summary, state, state_version)
       VALUES (?, ?, 'step', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    listSteps: db.prepare<[string], StepRow>(
      `SELECT o.id AS operation_id, l.step_index, l.step_kind AS kind, l.started_at, l.finished_at, l.usage, l.summary
       FROM ${MESSAGE_FROM} WHERE o.id = ? AND l.entry = 'step' ORDER BY l.step_index, l.key`,
    ),
    // The lease (migration 6): one conditional UPDATE each, so two connections claiming at once cannot both win.
    claimLease: db.prepare<{ id: string; owner: string; now: number; expiresAt: number }>(
      `UPDATE operations SET lease_owner = @owner, lease_expires_at = @expiresAt
       WHERE id = @id AND (lease_owner IS NULL OR lease_expires_at <= @now OR lease_owner = @owner)`,
    ),
    renewLease: db.prepare<[number, string, string]>('UPDATE operations SET lease_expires_at = ? WHERE id = ? AND lease_owner = ?'),
    releaseLease: db.prepare<[string, string]>('UPDATE operations SET lease_owner = NULL, lease_expires_at = NULL WHERE id = ? AND lease_owner = ?'),
    getLease: db.prepare<[string], { lease_owner: string | null; lease_expires_at: number | null }>('SELECT lease_owner, lease_expires_at FROM operations WHERE id = ?'),
    deleteHooks: db.prepare('DELETE FROM hook_registrations WHERE operation_id = ?'),
    insertHook: db.prepare('INSERT INTO hook_registrations (operation_id, position, hook) VALUES (?, ?, ?)'),
    listHooks: db.prepare<[string], string>('SELECT hook FROM hook_registrations WHERE operation_id = ? ORDER BY position').pluck(),
    upsertUser: db.prepare('INSERT INTO users (id, email) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET email = excluded.email'),
    getUser: db.prepare<[string], { id: string; email: string | null }>('SELECT id, email FROM users WHERE id = ?'),
    insertDecision: db.prepare(
      `INSERT INTO decisions (${DECISION_COLUMNS}) VALUES
       (@id, @createdAt, @operationId, @toolCallId, @agentId, @event, @identifier, @apiName, @policies, @decision, @reason,
        @defaulted, @latencyMicros, @inputDigest, @rawInput)`,
    ),
    insertDecisionPolicy: db.prepare('INSERT OR IGNORE INTO decision_policies (policy_id, decision_seq) VALUES (?, ?)'),
  };
}

function notFound(operationId: string): HookgateError {
  return new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
}

/** SQL LIMIT value: -1 means no limit. */
function sqlLimit(limit: number | undefined): number {
  if (limit === undefined || Number.isNaN(limit) || limit === Infinity) return -1;
  return Math.max(0, Math.floor(limit));
}

/**
 * The embedded store: one better-sqlite3 connection in WAL mode with foreign
 * keys on. better-sqlite3 is synchronous, so every method does its work before
 * the returned promise settles and blocks the event loop for the duration of
 * one (short) transaction. SQLite damage found at any time surfaces as
 * STORE_CORRUPT; duplicate ids as STORE_CONFLICT; unknown operations on writes
 * as STORE_NOT_FOUND. Calls before {@link migrate} throw KERNEL_NOT_STARTED,
 * calls after {@link close} throw KERNEL_STOPPED.
 */
export class SqliteStore implements Store {
  readonly schemaVersion = LATEST_SCHEMA_VERSION;
  readonly path: string;
  private readonly logger?: Logger;
  private db?: Database.Database;
  private statements?: Statements;
  private closed = false;
  /** Filtered list queries, prepared on first use per filter shape. */
  private readonly dynamicStatements = new Map<string, Database.Statement>();
  /** Seqs of recently written operations: a step commit then needs no look-up by id. */
  private readonly seqs = new OperationSeqs();
  /** Stored forms of the deep-frozen agent definitions operations were created with. */
  private readonly agentTexts = new AgentTexts();
  /** Generated message ids of this database (set by migrate). */
  private ids?: MessageIds;
  // Write transactions run with BEGIN IMMEDIATE: they take the write lock up front, so a second process
  // waits on busy_timeout instead of failing with SQLITE_BUSY_SNAPSHOT when a read turns into a write. (The usual
  // step commit is a single statement, which takes the write lock when it starts and waits the same way.)
  private createOperationTx?: Database.Transaction<(op: NewOperation, messages: NewMessage[], hooks: unknown[], now: string) => OperationRecord>;
  private commitStepTx?: Database.Transaction<(operationId: string, commit: StepCommit, now: string) => MessageRecord[]>;
  private saveHooksTx?: Database.Transaction<(operationId: string, hooks: unknown[]) => void>;
  private recordDecisionTx?: Database.Transaction<(decision: DecisionRecord) => void>;

  /** Document 001's submissions (sqlite-submissions.ts), on this connection. */
  private submissions?: SqliteSubmissions;
  /** Durable tool steps (sqlite-tool-steps.ts), on this connection. */
  private toolSteps?: SqliteToolSteps;
  /** Per-user values (sqlite-user-values.ts), on this connection. */
  private userValues?: SqliteUserValues;
  /** Message updates (sqlite-message-update.ts), on this connection. */
  private messageUpdate?: SqliteMessageUpdate;

  private checkpointer?: BackgroundCheckpointer;
  private readonly backgroundCheckpoints: boolean;

  constructor(options: SqliteStoreOptions) {
    this.path = options.path;
    this.logger = options.logger;
    this.backgroundCheckpoints = options.backgroundCheckpoints ?? true;
  }

  /**
   * Opens the file (creating it and its folder when missing) and applies
   * pending migrations. Idempotent while open. Rejects with STORE_CORRUPT or
   * STORE_SCHEMA_NEWER without modifying the file.
   */
  async migrate(): Promise<void> {
    if (this.db) return;
    if (this.closed) throw new HookgateError('KERNEL_STOPPED', `The store at ${this.path} is closed`);
    const db = openDatabase(this.path, this.logger);
    try {
      this.prepare(db);
    } catch (err) {
      // Nothing half set up: no statements, no open connection.
      this.statements = undefined;
      this.submissions = undefined;
      this.toolSteps = undefined;
      this.userValues = undefined;
      this.messageUpdate = undefined;
      this.ids = undefined;
      db.close();
      throw translateSqliteError(err, this.path);
    }
    this.db = db;
    if (this.backgroundCheckpoints && this.path !== ':memory:') this.checkpointer = new BackgroundCheckpointer(this.path, this.logger);
  }

  /** Prepares the statements, the message ids and the transactions of a freshly opened connection. */
  private prepare(db: Database.Database): void {
    const s = prepareStatements(db);
    const ids = new MessageIds(s.messageIdNamespace.get() ?? '(none)');
    this.statements = s;
    this.ids = ids;
    this.submissions = new SqliteSubmissions(db, {
      get: (id) => {
        const row = s.getThread.get(id);
        return row ? toThreadRecord(row) : undefined;
      },
      insert: (thread, now) => this.insertThread(s, thread, now),
    });
    this.toolSteps = new SqliteToolSteps(db);
    this.userValues = new SqliteUserValues(db);
    this.messageUpdate = new SqliteMessageUpdate(db, ids, { columns: MESSAGE_COLUMNS, from: MESSAGE_FROM });
    this.createOperationTx = db.transaction((op: NewOperation, messages: NewMessage[], hooks: unknown[], now: string) => {
      // One stored definition per distinct agent JSON: the runtime starts many operations of the same agent.
      const agent = this.agentTexts.of(op.agent);
      const agentSeq = s.agentDefinitionSeq.get(agent.digest) ?? Number(s.insertAgentDefinition.run(agent.digest, agent.text).lastInsertRowid);
      let threadSeq: number;
      let threadId: string;
      let positionBase = 0;
      if (op.threadId !== undefined) {
        const found = s.threadSeq.get(op.threadId);
        if (found === undefined) throw new HookgateError('STORE_NOT_FOUND', `Thread ${op.threadId} does not exist`);
        threadSeq = found;
        // Read under this transaction's write lock: no other connection can start an operation on the thread meanwhile.
        const busy = s.threadBusyOperation.get(threadSeq);
        if (busy !== undefined) {
          throw new HookgateError('THREAD_BUSY', `Thread ${op.threadId} has an unfinished operation (${busy}); it takes a new one once that one is done, decided or aborted`, {
            details: { threadId: op.threadId, operationId: busy },
          });
        }
        positionBase = s.threadLastPosition.get(threadSeq) ?? 0;
        threadId = op.threadId;
      } else {
        const thread = op.thread ?? { id: defaultThreadId(op.id), agentId: op.agentId };
        threadSeq = this.insertThread(s, thread, now);
        threadId = thread.id;
      }
      const state = JSON.stringify(op.state);
      const context = JSON.stringify(op.context ?? {});
      let seq: number | bigint;
      try {
        seq = s.insertOperation.run({
          id: op.id,
          agentId: op.agentId,
          parentOperationId: op.parentOperationId ?? null,
          userId: op.userId ?? null,
          state,
          now,
          agentSeq,
          context,
          threadSeq,
          positionBase,
          leaseOwner: op.lease?.owner ?? null,
          leaseExpiresAt: op.lease ? leaseWindow(op.id, op.lease).expiresAt : null,
        }).lastInsertRowid;
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new HookgateError('STORE_CONFLICT', `Operation ${op.id} already exists`, { cause: err });
        throw err;
      }
      const opSeq = this.seqs.remember(op.id, Number(seq));
      const firstKey = opSeq * LOG_KEYS_PER_OPERATION + 1;
      this.insertMessages(s, op.id, opSeq, firstKey, 1, positionBase, messages, now);
      hooks.forEach((hook, position) => s.insertHook.run(op.id, position, JSON.stringify(hook)));
      // The first step commit then reads nothing but data_version (see LogTail).
      this.seqs.setTail(op.id, { dataVersion: s.dataVersion.get()!, version: 0, rowVersion: 0, nextKey: firstKey + messages.length, nextMessageSeq: messages.length + 1, positionBase });
      // What getOperation would read back, built from what was just written instead of read (and parsed) again.
      const record: OperationRecord = {
        id: op.id,
        agentId: op.agentId,
        threadId,
        status: 'running',
        agent: agent.readBack(),
        context: JSON.parse(context) as OperationRecord['context'],
        state: JSON.parse(state) as OperationRecord['state'],
        createdAt: now,
        updatedAt: now,
        version: 0,
      };
      if (op.parentOperationId != null) record.parentOperationId = op.parentOperationId;
      if (op.userId != null) record.userId = op.userId;
      return record;
    });
    this.commitStepTx = db.transaction((operationId: string, commit: StepCommit, now: string) => {
      const state = stateJson(commit.state);
      // Read under the write lock: equal to the tail's, nobody else committed since this connection last read or wrote it.
      const dataVersion = s.dataVersion.get()!;
      const tail = this.seqs.tail(operationId, dataVersion) ?? this.probeTail(s, operationId, dataVersion);
      const seq = this.seqs.get(operationId)!;
      const version = tail.version + 1;
      assertVersion(operationId, tail.version, commit.expectedVersion);
      let nextKey = tail.nextKey;
      const messages = commit.messages ?? [];
      const entries = (commit.step ? 1 : 0) + messages.length;
      if (nextKey + entries > (seq + 1) * LOG_KEYS_PER_OPERATION) {
        throw new HookgateError('STORE_CONFLICT', `Operation ${operationId} is full: it holds the most steps and messages one operation can (${LOG_KEYS_PER_OPERATION - 1})`);
      }
      const stateOnly = commit.status === undefined && commit.reason === undefined && commit.error === undefined;
      const step = commit.step;
      const stateInStep = step !== undefined && stateOnly;
      if (!stateInStep) {
        if (stateOnly) s.updateOperationState.run(state, version, now, seq);
        else s.updateOperation.run({ seq, state, version, status: commit.status ?? null, reason: commit.reason ?? null, error: toJson(commit.error), now });
      }
      let records: MessageRecord[];
      const only = messages.length === 1 ? messages[0]! : undefined;
      if (step && only && only.id === undefined && only.images === undefined) {
        // The step loop's usual commit: its step and one message with a generated id, one statement for both rows.
        const key = nextKey;
        try {
          s.insertStepAndMessage.run(key, seq, now, step.stepIndex, step.kind, step.startedAt, step.finishedAt, usageJson(step.usage),
            summaryJson(step.summary ?? {}), stateInStep ? state : null, stateInStep ? version : null,
            key + 1, seq, now, tail.nextMessageSeq, only.role, only.content, toolCallsJson(only.toolCalls) ?? null, only.toolCallId ?? null, toolResultJson(only.toolResult) ?? null);
        } catch (err) {
          if (isDuplicateKeyError(err)) throw new HookgateError('STORE_CONFLICT', `Message ${ids.forKey(key + 1)} already exists`, { cause: err });
          throw err;
        }
        records = [newMessageRecord(only, ids.forKey(key + 1), operationId, tail.nextMessageSeq, tail.positionBase + tail.nextMessageSeq, now)];
        nextKey += 2;
      } else {
        if (step) {
          s.insertStep.run(nextKey++, seq, now, step.stepIndex, step.kind, step.startedAt, step.finishedAt, usageJson(step.usage),
            summaryJson(step.summary ?? {}), stateInStep ? state : null, stateInStep ? version : null);
        }
        records = messages.length
          ? this.insertMessages(s, operationId, seq, nextKey, tail.nextMessageSeq, tail.positionBase, messages, now)
          : [];
        nextKey += messages.length;
      }
      if (commit.threadValues !== undefined) s.updateThreadValuesBySeq.run(JSON.stringify(commit.threadValues), now, s.threadOfOperation.get(seq)!);
      if (commit.compact) {
        const summaryId = commit.compact.summaryId;
        const threadSeq = s.threadOfOperation.get(seq)!;
        for (const messageId of commit.compact.messageIds) {
          const key = ids.keyOf(messageId);
          const changes = key !== undefined
            ? s.compactGeneratedMessage.run(summaryId, key, threadSeq).changes
            : s.compactGivenMessage.run(summaryId, messageId, threadSeq).changes;
          if (changes === 0) throw new HookgateError('STORE_NOT_FOUND', `Message ${messageId} of operation ${operationId} does not exist`);
        }
      }
      // Everything written: the tail now says what this commit left (commitStep forgets it if COMMIT fails).
      const rowVersion = stateInStep ? tail.rowVersion : version;
      this.seqs.setTail(operationId, { dataVersion, version, rowVersion, nextKey, nextMessageSeq: tail.nextMessageSeq + messages.length, positionBase: tail.positionBase });
      return records;
    });
    this.saveHooksTx = db.transaction((operationId: string, hooks: unknown[]) => {
      if (s.operationExists.get(operationId) === undefined) {
        throw new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
      }
      s.deleteHooks.run(operationId);
      hooks.forEach((hook, position) => s.insertHook.run(operationId, position, JSON.stringify(hook)));
    });
    this.recordDecisionTx = db.transaction((d: DecisionRecord) => {
      let seq: number | bigint;
      try {
        seq = s.insertDecision.run({
          id: d.id,
          createdAt: d.createdAt,
          operationId: d.operationId ?? null,
          toolCallId: d.toolCallId ?? null,
          agentId: d.agentId ?? null,
          event: d.event,
          identifier: d.identifier ?? null,
          apiName: d.apiName ?? null,
          policies: JSON.stringify(d.policies),
          decision: d.decision,
          reason: d.reason ?? null,
          defaulted: d.defaulted ? 1 : 0,
          latencyMicros: d.latencyMicros,
          inputDigest: d.inputDigest,
          rawInput: toJson(d.rawInput),
        }).lastInsertRowid;
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new HookgateError('STORE_CONFLICT', `Decision ${d.id} already exists`, { cause: err });
        throw err;
      }
      for (const policy of d.policies) s.insertDecisionPolicy.run(policy.id, seq);
    });
  }

  /** Closes the connection (WAL is checkpointed). Idempotent; later calls throw KERNEL_STOPPED. */
  async close(): Promise<void> {
    // A second call while the first waits for the checkpoint thread gets the same promise.
    this.closing ??= this.closeNow();
    return this.closing;
  }

  private closing?: Promise<void>;

  private async closeNow(): Promise<void> {
    this.closed = true;
    const db = this.db;
    this.db = undefined;
    this.statements = undefined;
    this.submissions = undefined;
    this.toolSteps = undefined;
    this.userValues = undefined;
    this.dynamicStatements.clear();
    this.seqs.clear();
    // The thread's connection closes first, so this last one checkpoints everything and removes the WAL.
    await this.checkpointer?.stop();
    this.checkpointer = undefined;
    db?.close();
  }

  /** One transaction: the operation (status `running`), its first messages (seq from 1) and its hooks. */
  async createOperation(op: NewOperation, messages: NewMessage[], hooks: unknown[]): Promise<OperationRecord> {
    return this.guard(() => {
      try {
        return this.committed(this.createOperationTx!.immediate(op, messages, hooks, nowIso()));
      } catch (err) {
        this.seqs.forget(op.id);
        throw err;
      }
    });
  }

  async getOperation(id: string): Promise<OperationRecord | undefined> {
    return this.guard((s) => {
      const row = s.getOperation.get(id);
      return row ? toOperationRecord(row) : undefined;
    });
  }

  /** Ids starting with `prefix`, ascending, at most `limit`: one range scan of the index on operations.id. */
  async findOperationIds(prefix: string, limit: number): Promise<string[]> {
    return this.guard((s) => {
      const max = sqlLimit(limit);
      const upper = prefixUpperBound(prefix);
      return upper === undefined ? s.operationIdsFrom.all({ prefix, limit: max }) : s.operationIdsInRange.all(prefix, upper, max);
    });
  }

  /** Newest first. */
  async listOperations(filter: OperationFilter = {}): Promise<OperationRecord[]> {
    return this.guard(() => {
      const where: string[] = [];
      const params: Record<string, unknown> = { limit: sqlLimit(filter.limit) };
      if (filter.status !== undefined) {
        where.push('o.status = @status');
        params.status = filter.status;
      }
      if (filter.parentOperationId !== undefined) {
        where.push('o.parent_operation_id = @parentOperationId');
        params.parentOperationId = filter.parentOperationId;
      }
      const sql = `SELECT ${OPERATION_COLUMNS} FROM ${OPERATION_FROM} ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
        ORDER BY o.seq DESC LIMIT @limit`;
      return (this.dynamic(sql).all(params) as OperationRow[]).map(toOperationRecord);
    });
  }

  /**
   * One transaction: the operation's state (and status, reason, error when
   * given; absent ones keep their stored value), the step, the new messages
   * (ids generated when missing, seq continuing the operation's), and the
   * compaction marks. Any failure rolls everything back: STORE_NOT_FOUND for
   * an unknown operation or compacted message, STORE_CONFLICT for a message id
   * that exists. Resolves to the inserted messages. The operation's seq,
   * state version, next log key and next message seq are kept between this
   * connection's commits (a LogTail) and used while `PRAGMA data_version`,
   * read under the write lock, shows no other connection committed since;
   * otherwise they are read again in the same transaction. A commit with a
   * step and no status, reason or error stores the state (with the next state
   * version) in the step row and leaves the operations row alone. The step
   * loop's usual commit (that, plus one message with a generated id and
   * nothing else) is one two-row INSERT in autocommit mode when the
   * connection keeps the operation's tail, guarded by the operations row's
   * state version and the log's primary key instead of BEGIN, `data_version`
   * and COMMIT (usual-step-commit.ts); when the guard finds the tail stale it
   * writes nothing and the transaction above runs instead.
   */
  async commitStep(operationId: string, commit: StepCommit): Promise<MessageRecord[]> {
    return this.guard((s) => {
      try {
        const now = nowIso();
        return this.committed(
          commitUsualStep(s.insertUsualStep, this.seqs, this.ids!, operationId, commit, now, LOG_KEYS_PER_OPERATION) ??
            this.commitStepTx!.immediate(operationId, commit, now),
        );
      } catch (err) {
        this.seqs.forget(operationId); // it may have been remembered by a transaction that was rolled back
        throw err;
      }
    });
  }

  /** Its own IMMEDIATE transaction; the first record of a key wins. STORE_NOT_FOUND for an unknown operation. */
  async recordToolStep(step: NewToolStep): Promise<{ recorded: boolean; step: ToolStepRecord }> {
    return this.guard(() => this.committed(this.toolSteps!.record(step)));
  }

  async listToolSteps(operationId: string, toolCallId: string): Promise<ToolStepRecord[]> {
    return this.guard(() => this.toolSteps!.list(operationId, toolCallId));
  }

  async getUserValue(userId: string, key: string): Promise<unknown> {
    return this.guard(() => this.userValues!.get(userId, key));
  }

  /** Its own IMMEDIATE transaction: the previous value is read under the write lock. */
  async setUserValue(userId: string, key: string, value: unknown): Promise<{ previous: unknown }> {
    return this.guard(() => this.committed(this.userValues!.set(userId, key, value)));
  }

  async listUserValueKeys(userId: string): Promise<string[]> {
    return this.guard(() => this.userValues!.keys(userId));
  }

  /** STORE_CONFLICT when the id exists. */
  async admitSubmission(admission: SubmissionAdmission): Promise<SubmissionAdmissionResult> {
    return this.guard(() => this.committed(this.submissions!.admit(admission)));
  }

  async getSubmission(id: string): Promise<SubmissionRecord | undefined> {
    return this.guard(() => this.submissions!.get(id));
  }

  async listSubmissions(filter?: SubmissionFilter): Promise<SubmissionRecord[]> {
    return this.guard(() => this.submissions!.list(filter));
  }

  async beginSubmissionAttempt(id: string, now = nowIso()): Promise<SubmissionRecord> {
    return this.guard(() => this.committed(this.submissions!.begin(id, now)));
  }

  async linkSubmissionOperation(id: string, operationId: string): Promise<SubmissionRecord> {
    return this.guard(() => this.committed(this.submissions!.link(id, operationId)));
  }

  async joinSubmission(id: string, intoId: string): Promise<SubmissionRecord> {
    return this.guard(() => this.committed(this.submissions!.join(id, intoId)));
  }

  async requestSubmissionAbort(id: string, now = nowIso()): Promise<SubmissionRecord> {
    return this.guard(() => this.committed(this.submissions!.requestAbort(id, now)));
  }

  async settleSubmission(id: string, settlement: SubmissionSettlement): Promise<{ settled: boolean; submission: SubmissionRecord }> {
    return this.guard(() => this.committed(this.submissions!.settle(id, settlement)));
  }

  async createThread(thread: NewThread): Promise<ThreadRecord> {
    return this.guard((s) => {
      this.createThreadTx ??= this.db!.transaction((t: NewThread, now: string) => {
        this.insertThread(s, t, now);
        return toThreadRecord(s.getThread.get(t.id)!);
      });
      return this.committed(this.createThreadTx.immediate(thread, nowIso()));
    });
  }

  private createThreadTx?: Database.Transaction<(thread: NewThread, now: string) => ThreadRecord>;

  async getThread(id: string): Promise<ThreadRecord | undefined> {
    return this.guard((s) => {
      const row = s.getThread.get(id);
      return row ? toThreadRecord(row) : undefined;
    });
  }

  /** STORE_NOT_FOUND for an unknown thread. */
  async saveThreadValues(threadId: string, values: Record<string, unknown>): Promise<void> {
    this.guard((s) => {
      if (s.updateThreadValues.run(JSON.stringify(values), nowIso(), threadId).changes === 0) {
        throw new HookgateError('STORE_NOT_FOUND', `Thread ${threadId} does not exist`);
      }
      this.committed(undefined);
    });
  }

  /** One query: the thread's operations in seq order (their positions follow one another), each one's log range. */
  async listThreadMessages(threadId: string, options: { fromPosition?: number; includeCompacted?: boolean } = {}): Promise<MessageRecord[]> {
    return this.guard((s) => {
      const from = options.fromPosition ?? Number.MIN_SAFE_INTEGER;
      return (options.includeCompacted ? s.listAllThreadMessages : s.listThreadMessages).all(threadId, from).map((row) => toMessageRecord(row, this.ids!));
    });
  }

  async updateMessage(threadId: string, messageId: string, update: MessageUpdate): Promise<MessageRecord> {
    return this.guard(() => this.committed(this.messageUpdate!.update(threadId, messageId, update)));
  }

  async listThreadOperations(threadId: string, options: { last?: number } = {}): Promise<OperationRecord[]> {
    if (options.last !== undefined) return this.guard((s) => s.listLastThreadOperations.all(threadId, Math.max(0, options.last!)).map(toOperationRecord).reverse());
    return this.guard((s) => s.listThreadOperations.all(threadId).map(toOperationRecord));
  }

  /** Inserts a thread row (inside the caller's transaction) and returns its seq; STORE_CONFLICT when the id exists. */
  private insertThread(s: Statements, thread: NewThread, now: string): number {
    try {
      return Number(s.insertThread.run({
        id: thread.id,
        agentId: thread.agentId,
        instanceId: thread.instanceId ?? null,
        uid: thread.uid ?? null,
        initialData: toJson(thread.initialData),
        values: JSON.stringify(thread.values ?? {}),
        now,
      }).lastInsertRowid);
    } catch (err) {
      if (isDuplicateKeyError(err)) throw new HookgateError('STORE_CONFLICT', `Thread ${thread.id} already exists`, { cause: err });
      throw err;
    }
  }

  async listMessages(operationId: string, options: { includeCompacted?: boolean } = {}): Promise<MessageRecord[]> {
    return this.guard((s) => (options.includeCompacted ? s.listAllMessages : s.listMessages).all(operationId).map((row) => toMessageRecord(row, this.ids!)));
  }

  /** In step order; steps sharing an index keep their commit order. */
  async listSteps(operationId: string): Promise<StepRecord[]> {
    return this.guard((s) => s.listSteps.all(operationId).map(toStepRecord));
  }

  async loadHooks(operationId: string): Promise<unknown[]> {
    return this.guard((s) => s.listHooks.all(operationId).map((text) => JSON.parse(text) as unknown));
  }

  /** Replaces the operation's hooks in one transaction. STORE_NOT_FOUND for an unknown operation. */
  async saveHooks(operationId: string, hooks: unknown[]): Promise<void> {
    this.guard(() => this.committed(this.saveHooksTx!.immediate(operationId, hooks)));
  }

  /** One conditional UPDATE (free, expired or ours), then the operation read in the same transaction. */
  async claimOperation(operationId: string, request: LeaseRequest): Promise<LeaseClaim> {
    return this.guard((s) => {
      const { now, expiresAt } = leaseWindow(operationId, request);
      this.claimTx ??= this.db!.transaction((id: string, owner: string, at: number, until: number): LeaseClaim => {
        const granted = s.claimLease.run({ id, owner, now: at, expiresAt: until }).changes > 0;
        const row = s.getOperation.get(id);
        if (!row) throw notFound(id);
        const operation = toOperationRecord(row);
        if (granted) return { claimed: true, operation, lease: { owner, expiresAt: until } };
        const held = s.getLease.get(id)!;
        return { claimed: false, operation, holder: { owner: held.lease_owner!, expiresAt: held.lease_expires_at! } };
      });
      return this.committed(this.claimTx.immediate(operationId, request.owner, now, expiresAt));
    });
  }

  private claimTx?: Database.Transaction<(operationId: string, owner: string, now: number, expiresAt: number) => LeaseClaim>;

  async renewLease(operationId: string, request: LeaseRequest): Promise<OperationLease | undefined> {
    return this.guard((s) => {
      const { expiresAt } = leaseWindow(operationId, request);
      if (s.renewLease.run(expiresAt, operationId, request.owner).changes > 0) return this.committed({ owner: request.owner, expiresAt });
      if (s.operationExists.get(operationId) === undefined) throw notFound(operationId);
      return undefined;
    });
  }

  async releaseLease(operationId: string, owner: string): Promise<boolean> {
    return this.guard((s) => {
      if (s.releaseLease.run(operationId, owner).changes > 0) return this.committed(true);
      if (s.operationExists.get(operationId) === undefined) throw notFound(operationId);
      return false;
    });
  }

  async getLease(operationId: string): Promise<OperationLease | undefined> {
    return this.guard((s) => {
      const row = s.getLease.get(operationId);
      return row && row.lease_owner !== null ? { owner: row.lease_owner, expiresAt: row.lease_expires_at! } : undefined;
    });
  }

  /** Fills the empty placeholder of a deferred tool call once, with the operation state, in one transaction. */
  async publishToolResult(operationId: string, toolCallId: string, result: ToolResult, commit: Pick<StepCommit, 'state' | 'status' | 'expectedVersion'>): Promise<boolean> {
    return this.guard((s) => {
      this.publishTx ??= this.db!.transaction((opId: string, callId: string, res: ToolResult, c: Pick<StepCommit, 'state' | 'status' | 'expectedVersion'>) => {
        const seq = s.operationSeq.get(opId);
        if (seq === undefined) throw new HookgateError('STORE_NOT_FOUND', `Operation ${opId} does not exist`);
        const range = seq * LOG_KEYS_PER_OPERATION;
        if (s.fillPlaceholder.run(res.content, JSON.stringify(res), range, range + LOG_KEYS_PER_OPERATION, callId).changes === 0) return false;
        const [rowVersion, , newestStateVersion] = s.logProbe.get(seq, opId)!;
        const version = Math.max(rowVersion, newestStateVersion ?? 0) + 1;
        // Checked after the placeholder update on purpose: a conflict throws, which rolls that update back.
        assertVersion(opId, version - 1, c.expectedVersion);
        s.updateOperation.run({ seq, state: JSON.stringify(c.state), version, status: c.status ?? null, reason: null, error: null, now: nowIso() });
        // A write of this connection, which data_version does not show: the next commit reads the log again.
        this.seqs.dropTail(opId);
        return true;
      });
      return this.committed(this.publishTx.immediate(operationId, toolCallId, result, commit));
    });
  }

  private publishTx?: Database.Transaction<(operationId: string, toolCallId: string, result: ToolResult, commit: Pick<StepCommit, 'state' | 'status' | 'expectedVersion'>) => boolean>;

  /** Inserts or replaces; an absent email clears the stored one. */
  async upsertUser(user: UserRecord): Promise<void> {
    this.guard((s) => s.upsertUser.run(user.id, user.email ?? null));
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    return this.guard((s) => {
      const row = s.getUser.get(id);
      if (!row) return undefined;
      return row.email === null ? { id: row.id } : { id: row.id, email: row.email };
    });
  }

  /** STORE_CONFLICT when the id exists. */
  async recordDecision(decision: DecisionRecord): Promise<void> {
    this.guard(() => this.committed(this.recordDecisionTx!.immediate(decision)));
  }

  /** Newest first (by `createdAt`, then by insertion); `since`/`until` inclusive. */
  async listDecisions(filter: DecisionFilter = {}): Promise<DecisionRecord[]> {
    return this.guard(() => {
      const where: string[] = [];
      const params: Record<string, unknown> = { limit: sqlLimit(filter.limit) };
      if (filter.operationId !== undefined) {
        where.push('operation_id = @operationId');
        params.operationId = filter.operationId;
      }
      if (filter.decision !== undefined) {
        where.push('decision = @decision');
        params.decision = filter.decision;
      }
      if (filter.since !== undefined) {
        where.push('created_at >= @since');
        params.since = filter.since;
      }
      if (filter.until !== undefined) {
        where.push('created_at <= @until');
        params.until = filter.until;
      }
      if (filter.policyId !== undefined) {
        where.push('seq IN (SELECT decision_seq FROM decision_policies WHERE policy_id = @policyId)');
        params.policyId = filter.policyId;
      }
      const sql = `SELECT ${DECISION_COLUMNS} FROM decisions ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
        ORDER BY created_at DESC, seq DESC LIMIT @limit`;
      return (this.dynamic(sql).all(params) as DecisionRow[]).map(toDecisionRecord);
    });
  }

  /**
   * Removes what the policy no longer keeps, in short transactions with the
   * event loop turned between them, then gives the freed pages back to the
   * file system (sqlite-pruner.ts). A store closed during the pass ends it
   * there; KERNEL_NOT_STARTED / KERNEL_STOPPED when it is not open at the start.
   */
  async prune(policy: RetentionPolicy, options: PruneOptions = {}): Promise<PruneCounts> {
    this.guard(() => undefined);
    this.pruner ??= new SqlitePruner({
      batch: (fn) => (this.db ? this.guard(() => fn(this.db!)) : undefined),
      committed: () => this.committed(undefined),
      forget: (ids) => ids.forEach((id) => this.seqs.forget(id)),
    });
    return this.pruner.run(policy, options);
  }

  private pruner?: SqlitePruner;

  /**
   * Reads what a commit needs to know about the operation's log (inside the
   * commit's write transaction), remembering its seq: by the remembered seq
   * when that still names the operation, else by a look-up of the id.
   * STORE_NOT_FOUND for an unknown operation.
   */
  private probeTail(s: Statements, operationId: string, dataVersion: number): LogTail {
    const remembered = this.seqs.get(operationId);
    let seq = remembered ?? this.lookUpSeq(s, operationId);
    let probe = s.logProbe.get(seq, operationId);
    if (!probe && remembered !== undefined) {
      // A remembered seq that no longer names this operation: look it up.
      seq = this.lookUpSeq(s, operationId);
      probe = s.logProbe.get(seq, operationId);
    }
    if (!probe) throw notFound(operationId);
    const [rowVersion, newestKey, newestStateVersion, newestMessageSeq, positionBase] = probe;
    return {
      dataVersion,
      version: Math.max(rowVersion, newestStateVersion ?? 0),
      rowVersion,
      nextKey: (newestKey ?? seq * LOG_KEYS_PER_OPERATION) + 1,
      nextMessageSeq: (newestMessageSeq ?? 0) + 1,
      positionBase,
    };
  }

  /** The operation's seq, remembered; STORE_NOT_FOUND for an unknown operation. */
  private lookUpSeq(s: Statements, operationId: string): number {
    const seq = s.operationSeq.get(operationId);
    if (seq === undefined) throw notFound(operationId);
    return this.seqs.remember(operationId, seq);
  }

  /**
   * Appends `messages` to the operation's log from `key`, numbering them from
   * `seq`. A message without an id gets the one derived from its key (stored
   * as NULL); a supplied id is stored and must be new: STORE_CONFLICT when
   * another message has it or when it lies in this database's generated-id
   * namespace. Returns the records a later read returns.
   */
  private insertMessages(s: Statements, operationId: string, opSeq: number, key: number, seq: number, positionBase: number, messages: NewMessage[], now: string): MessageRecord[] {
    const ids = this.ids!;
    return messages.map((m) => {
      const reservedKey = m.id === undefined ? undefined : ids.keyOf(m.id);
      if (reservedKey !== undefined) {
        throw new HookgateError('STORE_CONFLICT', s.messageKeyExists.get(reservedKey) === undefined
          ? `Message id ${m.id} is reserved for ids this store generates`
          : `Message ${m.id} already exists`);
      }
      const id = m.id ?? ids.forKey(key);
      try {
        s.insertMessage.run(key, opSeq, now, seq, m.id ?? null, m.role, m.content, toJson(m.toolCalls), m.toolCallId ?? null, toJson(m.toolResult),
          m.images !== undefined && m.images.length > 0 ? JSON.stringify(m.images) : null);
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new HookgateError('STORE_CONFLICT', `Message ${id} already exists`, { cause: err });
        throw err;
      }
      const record = newMessageRecord(m, id, operationId, seq, positionBase + seq, now);
      key += 1;
      seq += 1;
      return record;
    });
  }

  /** Passes a write transaction's result through, telling the background checkpointer there is more to copy. */
  private committed<T>(result: T): T {
    this.checkpointer?.noteCommit();
    return result;
  }

  private dynamic(sql: string): Database.Statement {
    let statement = this.dynamicStatements.get(sql);
    if (!statement) {
      statement = this.db!.prepare(sql);
      this.dynamicStatements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `fn` on an open connection, mapping SQLite damage to STORE_CORRUPT. */
  private guard<T>(fn: (s: Statements) => T): T {
    if (!this.statements) {
      throw this.closed
        ? new HookgateError('KERNEL_STOPPED', `The store at ${this.path} is closed`)
        : new HookgateError('KERNEL_NOT_STARTED', `The store at ${this.path} is not migrated yet; call migrate() first`);
    }
    try {
      return fn(this.statements);
    } catch (err) {
      throw translateSqliteError(err, this.path);
    }
  }
}

/** Compare-and-swap on the state version (see StepCommit.expectedVersion), inside the write transaction. */
function assertVersion(operationId: string, current: number, expected: number | undefined): void {
  if (expected !== undefined && current !== expected) {
    throw new HookgateError('STORE_VERSION_CONFLICT', `Operation ${operationId} is at version ${current}, not ${expected}: another writer committed first`, {
      details: { operationId, expectedVersion: expected, version: current },
    });
  }
}
