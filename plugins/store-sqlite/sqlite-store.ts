import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { HookgateError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import type {
  DecisionFilter,
  DecisionRecord,
  MessageRecord,
  NewMessage,
  NewOperation,
  OperationFilter,
  OperationRecord,
  StepCommit,
  StepRecord,
  Store,
  UserRecord,
} from '../../kernel/store.js';
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
} from './rows.js';
import { isDuplicateKeyError, translateSqliteError } from './sqlite-errors.js';

export interface SqliteStoreOptions {
  /** A file path (parent folders are created) or `:memory:`. */
  path: string;
  logger?: Logger;
}

const OPERATION_COLUMNS =
  'id, agent_id, parent_operation_id, user_id, status, reason, agent, context, state, error, created_at, updated_at';
const MESSAGE_COLUMNS = 'id, operation_id, seq, role, content, tool_calls, tool_call_id, tool_result, compacted_into, created_at';
const DECISION_COLUMNS =
  'id, created_at, operation_id, tool_call_id, agent_id, event, identifier, api_name, policies, decision, reason, defaulted, latency_micros, input_digest, raw_input';

type Statements = ReturnType<typeof prepareStatements>;

/** Every fixed statement, prepared once per connection. */
function prepareStatements(db: Database.Database) {
  return {
    insertOperation: db.prepare(
      `INSERT INTO operations (${OPERATION_COLUMNS}) VALUES
       (@id, @agentId, @parentOperationId, @userId, 'running', NULL, @agent, @context, @state, NULL, @now, @now)`,
    ),
    getOperation: db.prepare<[string], OperationRow>(`SELECT ${OPERATION_COLUMNS} FROM operations WHERE id = ?`),
    operationExists: db.prepare<[string], number>('SELECT 1 FROM operations WHERE id = ?').pluck(),
    updateOperation: db.prepare(
      `UPDATE operations SET state = @state, status = COALESCE(@status, status), reason = COALESCE(@reason, reason),
       error = COALESCE(@error, error), updated_at = @now WHERE id = @id`,
    ),
    lastMessageSeq: db.prepare<[string], number>('SELECT COALESCE(MAX(seq), 0) FROM messages WHERE operation_id = ?').pluck(),
    insertMessage: db.prepare(
      `INSERT INTO messages (${MESSAGE_COLUMNS}) VALUES
       (@id, @operationId, @seq, @role, @content, @toolCalls, @toolCallId, @toolResult, NULL, @now)`,
    ),
    compactMessage: db.prepare('UPDATE messages SET compacted_into = ? WHERE id = ? AND operation_id = ?'),
    listMessages: db.prepare<[string], MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE operation_id = ? AND compacted_into IS NULL ORDER BY seq`,
    ),
    listAllMessages: db.prepare<[string], MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE operation_id = ? ORDER BY seq`),
    insertStep: db.prepare(
      `INSERT INTO steps (operation_id, step_index, kind, started_at, finished_at, usage, summary) VALUES
       (@operationId, @stepIndex, @kind, @startedAt, @finishedAt, @usage, @summary)`,
    ),
    listSteps: db.prepare<[string], StepRow>(
      `SELECT operation_id, step_index, kind, started_at, finished_at, usage, summary FROM steps
       WHERE operation_id = ? ORDER BY step_index, seq`,
    ),
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
  // Write transactions run with BEGIN IMMEDIATE: they take the write lock up front, so a second process
  // waits on busy_timeout instead of failing with SQLITE_BUSY_SNAPSHOT when a read turns into a write.
  private createOperationTx?: Database.Transaction<(op: NewOperation, messages: NewMessage[], hooks: unknown[], now: string) => OperationRecord>;
  private commitStepTx?: Database.Transaction<(operationId: string, commit: StepCommit, now: string) => MessageRecord[]>;
  private saveHooksTx?: Database.Transaction<(operationId: string, hooks: unknown[]) => void>;
  private recordDecisionTx?: Database.Transaction<(decision: DecisionRecord) => void>;

  constructor(options: SqliteStoreOptions) {
    this.path = options.path;
    this.logger = options.logger;
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
    this.db = db;
    const s = prepareStatements(db);
    this.statements = s;
    this.createOperationTx = db.transaction((op: NewOperation, messages: NewMessage[], hooks: unknown[], now: string) => {
      try {
        s.insertOperation.run({
          id: op.id,
          agentId: op.agentId,
          parentOperationId: op.parentOperationId ?? null,
          userId: op.userId ?? null,
          agent: JSON.stringify(op.agent ?? null),
          context: JSON.stringify(op.context ?? {}),
          state: JSON.stringify(op.state),
          now,
        });
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new HookgateError('STORE_CONFLICT', `Operation ${op.id} already exists`, { cause: err });
        throw err;
      }
      this.insertMessages(s, op.id, messages, now);
      hooks.forEach((hook, position) => s.insertHook.run(op.id, position, JSON.stringify(hook)));
      return toOperationRecord(s.getOperation.get(op.id)!);
    });
    this.commitStepTx = db.transaction((operationId: string, commit: StepCommit, now: string) => {
      const updated = s.updateOperation.run({
        id: operationId,
        state: JSON.stringify(commit.state),
        status: commit.status ?? null,
        reason: commit.reason ?? null,
        error: toJson(commit.error),
        now,
      });
      if (updated.changes === 0) throw new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
      if (commit.step) {
        s.insertStep.run({
          operationId,
          stepIndex: commit.step.stepIndex,
          kind: commit.step.kind,
          startedAt: commit.step.startedAt,
          finishedAt: commit.step.finishedAt,
          usage: JSON.stringify(commit.step.usage),
          summary: JSON.stringify(commit.step.summary ?? {}),
        });
      }
      const records = this.insertMessages(s, operationId, commit.messages ?? [], now);
      if (commit.compact) {
        for (const messageId of commit.compact.messageIds) {
          if (s.compactMessage.run(commit.compact.summaryId, messageId, operationId).changes === 0) {
            throw new HookgateError('STORE_NOT_FOUND', `Message ${messageId} of operation ${operationId} does not exist`);
          }
        }
      }
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
    this.closed = true;
    const db = this.db;
    this.db = undefined;
    this.statements = undefined;
    this.dynamicStatements.clear();
    db?.close();
  }

  /** One transaction: the operation (status `running`), its first messages (seq from 1) and its hooks. */
  async createOperation(op: NewOperation, messages: NewMessage[], hooks: unknown[]): Promise<OperationRecord> {
    return this.guard(() => this.createOperationTx!.immediate(op, messages, hooks, new Date().toISOString()));
  }

  async getOperation(id: string): Promise<OperationRecord | undefined> {
    return this.guard((s) => {
      const row = s.getOperation.get(id);
      return row ? toOperationRecord(row) : undefined;
    });
  }

  /** Newest first. */
  async listOperations(filter: OperationFilter = {}): Promise<OperationRecord[]> {
    return this.guard(() => {
      const where: string[] = [];
      const params: Record<string, unknown> = { limit: sqlLimit(filter.limit) };
      if (filter.status !== undefined) {
        where.push('status = @status');
        params.status = filter.status;
      }
      if (filter.parentOperationId !== undefined) {
        where.push('parent_operation_id = @parentOperationId');
        params.parentOperationId = filter.parentOperationId;
      }
      const sql = `SELECT ${OPERATION_COLUMNS} FROM operations ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
        ORDER BY seq DESC LIMIT @limit`;
      return (this.dynamic(sql).all(params) as OperationRow[]).map(toOperationRecord);
    });
  }

  /**
   * One transaction: the operation's state (and status, reason, error when
   * given; absent ones keep their stored value), the step, the new messages
   * (ids generated when missing, seq continuing the operation's), and the
   * compaction marks. Any failure rolls everything back: STORE_NOT_FOUND for
   * an unknown operation or compacted message, STORE_CONFLICT for a message id
   * that exists. Resolves to the inserted messages.
   */
  async commitStep(operationId: string, commit: StepCommit): Promise<MessageRecord[]> {
    return this.guard(() => this.commitStepTx!.immediate(operationId, commit, new Date().toISOString()));
  }

  async listMessages(operationId: string, options: { includeCompacted?: boolean } = {}): Promise<MessageRecord[]> {
    return this.guard((s) => (options.includeCompacted ? s.listAllMessages : s.listMessages).all(operationId).map(toMessageRecord));
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
    this.guard(() => this.saveHooksTx!.immediate(operationId, hooks));
  }

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
    this.guard(() => this.recordDecisionTx!.immediate(decision));
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

  private insertMessages(s: Statements, operationId: string, messages: NewMessage[], now: string): MessageRecord[] {
    let seq = s.lastMessageSeq.get(operationId)!;
    return messages.map((m) => {
      const id = m.id ?? randomUUID();
      seq += 1;
      const row: MessageRow = {
        id,
        operation_id: operationId,
        seq,
        role: m.role,
        content: m.content,
        tool_calls: toJson(m.toolCalls),
        tool_call_id: m.toolCallId ?? null,
        tool_result: toJson(m.toolResult),
        compacted_into: null,
        created_at: now,
      };
      try {
        s.insertMessage.run({
          id,
          operationId,
          seq,
          role: row.role,
          content: row.content,
          toolCalls: row.tool_calls,
          toolCallId: row.tool_call_id,
          toolResult: row.tool_result,
          now,
        });
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new HookgateError('STORE_CONFLICT', `Message ${id} already exists`, { cause: err });
        throw err;
      }
      // Built from the stored JSON text, so the caller gets the same shape a later read returns.
      return toMessageRecord(row);
    });
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
