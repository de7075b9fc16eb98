import { nowIso } from '../../kernel/clock.js';
import { HookgateError } from '../../kernel/errors.js';
import { leaseWindow } from '../../kernel/lease-window.js';
import type { PruneCounts, PruneOptions, RetentionPolicy } from '../../kernel/retention.js';
import type {
  DecisionFilter,
  DecisionRecord,
  LeaseClaim,
  LeaseRequest,
  MessageRecord,
  MessageUpdate,
  NewMessage,
  NewOperation,
  NewThread,
  OperationFilter,
  OperationLease,
  OperationRecord,
  StepCommit,
  StepRecord,
  Store,
  ThreadRecord,
  ToolResult,
  UserRecord,
} from '../../kernel/store.js';
import type { SubmissionAdmission, SubmissionAdmissionResult, SubmissionFilter, SubmissionRecord, SubmissionSettlement } from '../../kernel/submissions.js';
import type { NewToolStep, ToolStepRecord } from '../../kernel/tool-steps.js';
import { createOperationTx, insertThread, publishToolResultTx, saveHooksTx, updateMessageTx } from './postgres-commits.js';
import { isUniqueViolation, PostgresConnection, type PostgresConnectionOptions } from './postgres-connection.js';
import { migrateSchema, POSTGRES_SCHEMA_VERSION } from './postgres-migrations.js';
import { commitStep } from './postgres-step-commit.js';
import { PostgresPruner } from './postgres-pruner.js';
import * as leases from './postgres-leases.js';
import * as reads from './postgres-reads.js';
import { PostgresSubmissions } from './postgres-submissions.js';
import { PostgresToolSteps } from './postgres-tool-steps.js';
import { PostgresUserValues } from './postgres-user-values.js';

export type PostgresStoreOptions = PostgresConnectionOptions;

/**
 * The Store contract on PostgreSQL through a node-postgres Pool, in one
 * schema. Writes that belong together are one transaction on one
 * connection (postgres-commits.ts says which rows each locks); reads are
 * single statements. Every method is async and does its work on the server;
 * errors: STORE_NOT_FOUND, STORE_CONFLICT, STORE_VERSION_CONFLICT as the
 * other stores, STORE_UNAVAILABLE when the server cannot be used (naming
 * where, never the password), KERNEL_NOT_STARTED before {@link migrate},
 * KERNEL_STOPPED after {@link close}. Several processes may share one
 * schema: leases, compare-and-swap and admissions hold across them.
 */
export class PostgresStore implements Store {
  readonly schemaVersion = POSTGRES_SCHEMA_VERSION;
  private readonly db: PostgresConnection;
  private migrated = false;
  private closed = false;
  /** A prune batch in flight: this store's other calls wait for it, so each batch is seen whole (see exclusive). */
  private busy?: Promise<unknown>;
  private readonly submissions: PostgresSubmissions;
  private readonly toolSteps: PostgresToolSteps;
  private readonly userValues: PostgresUserValues;
  private readonly pruner: PostgresPruner;

  constructor(options: PostgresStoreOptions) {
    this.db = new PostgresConnection(options);
    this.submissions = new PostgresSubmissions(this.db);
    this.toolSteps = new PostgresToolSteps(this.db);
    this.userValues = new PostgresUserValues(this.db);
    this.pruner = new PostgresPruner({ db: this.db, exclusive: (work) => this.exclusive(work), closed: () => this.closed });
  }

  /** Where the store connects (no password): for logs and errors. */
  get where(): string {
    return this.db.where;
  }

  /**
   * Connects, creates the schema when missing and applies pending migrations
   * (postgres-migrations.ts). Idempotent. STORE_UNAVAILABLE when the server
   * cannot be used, STORE_SCHEMA_NEWER (nothing changed) for a newer schema.
   */
  async migrate(): Promise<void> {
    if (this.closed) throw new HookgateError('KERNEL_STOPPED', `The store at ${this.db.where} is closed`);
    if (this.migrated) return;
    await this.db.open();
    await this.db.withClient((client) => migrateSchema(client, this.db.options.schema));
    this.migrated = true;
  }

  /** Ends the pool (waiting for checked-out connections). Idempotent; later calls throw KERNEL_STOPPED. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.busy?.catch(() => undefined);
    await this.db.end();
  }

  async createOperation(op: NewOperation, messages: NewMessage[], hooks: unknown[]): Promise<OperationRecord> {
    const db = await this.open();
    return db.transaction((c) => createOperationTx(c, op, messages, hooks, nowIso()));
  }

  async getOperation(id: string): Promise<OperationRecord | undefined> {
    return reads.getOperation(await this.open(), id);
  }

  async findOperationIds(prefix: string, limit: number): Promise<string[]> {
    return reads.findOperationIds(await this.open(), prefix, limit);
  }

  async listOperations(filter: OperationFilter = {}): Promise<OperationRecord[]> {
    return reads.listOperations(await this.open(), filter);
  }

  async commitStep(operationId: string, commit: StepCommit): Promise<MessageRecord[]> {
    return commitStep(await this.open(), operationId, commit, nowIso());
  }

  /** STORE_CONFLICT when the id exists. */
  async createThread(thread: NewThread): Promise<ThreadRecord> {
    const db = await this.open();
    return db.transaction(async (c) => {
      await insertThread(c, thread, nowIso());
      return (await reads.getThread(c, thread.id))!;
    });
  }

  async getThread(id: string): Promise<ThreadRecord | undefined> {
    return reads.getThread(await this.open(), id);
  }

  async saveThreadValues(threadId: string, values: Record<string, unknown>): Promise<void> {
    const text = JSON.stringify(values);
    const { rowCount } = await (await this.open()).query('UPDATE threads SET thread_values = $1, updated_at = $2 WHERE id = $3', [text, nowIso(), threadId]);
    if (rowCount === 0) throw new HookgateError('STORE_NOT_FOUND', `Thread ${threadId} does not exist`);
  }

  async listThreadMessages(threadId: string, options: { fromPosition?: number; includeCompacted?: boolean } = {}): Promise<MessageRecord[]> {
    return reads.listThreadMessages(await this.open(), threadId, options);
  }

  async updateMessage(threadId: string, messageId: string, update: MessageUpdate): Promise<MessageRecord> {
    return (await this.open()).transaction((c) => updateMessageTx(c, threadId, messageId, update));
  }

  async listThreadOperations(threadId: string, options: { last?: number } = {}): Promise<OperationRecord[]> {
    return reads.listThreadOperations(await this.open(), threadId, options);
  }

  async listMessages(operationId: string, options: { includeCompacted?: boolean } = {}): Promise<MessageRecord[]> {
    return reads.listMessages(await this.open(), operationId, options);
  }

  async listSteps(operationId: string): Promise<StepRecord[]> {
    return reads.listSteps(await this.open(), operationId);
  }

  async loadHooks(operationId: string): Promise<unknown[]> {
    return reads.loadHooks(await this.open(), operationId);
  }

  /** Replaces the operation's hooks in one transaction. STORE_NOT_FOUND for an unknown operation. */
  async saveHooks(operationId: string, hooks: unknown[]): Promise<void> {
    const db = await this.open();
    await db.transaction((c) => saveHooksTx(c, operationId, hooks));
  }

  /** Inserts or replaces; an absent email clears the stored one. */
  async upsertUser(user: UserRecord): Promise<void> {
    await (await this.open()).query('INSERT INTO users (id, email) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET email = excluded.email', [user.id, user.email ?? null]);
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    const { rows } = await (await this.open()).query<{ id: string; email: string | null }>('SELECT id, email FROM users WHERE id = $1', [id]);
    const row = rows[0];
    if (!row) return undefined;
    return row.email === null ? { id: row.id } : { id: row.id, email: row.email };
  }

  async publishToolResult(operationId: string, toolCallId: string, result: ToolResult, commit: Pick<StepCommit, 'state' | 'status' | 'expectedVersion'>): Promise<boolean> {
    const db = await this.open();
    return db.transaction((c) => publishToolResultTx(c, operationId, toolCallId, result, commit, nowIso()));
  }

  async claimOperation(operationId: string, request: LeaseRequest): Promise<LeaseClaim> {
    const window = leaseWindow(operationId, request);
    return leases.claim(await this.open(), operationId, request.owner, window);
  }

  async renewLease(operationId: string, request: LeaseRequest): Promise<OperationLease | undefined> {
    const { expiresAt } = leaseWindow(operationId, request);
    return leases.renew(await this.open(), operationId, request.owner, expiresAt);
  }

  async releaseLease(operationId: string, owner: string): Promise<boolean> {
    return leases.release(await this.open(), operationId, owner);
  }

  async getLease(operationId: string): Promise<OperationLease | undefined> {
    return leases.get(await this.open(), operationId);
  }

  /** One statement: the decision and its policy ids (for the policyId filter). STORE_CONFLICT when the id exists. */
  async recordDecision(d: DecisionRecord): Promise<void> {
    const db = await this.open();
    try {
      await db.query(
        `WITH d AS (INSERT INTO decisions (id, created_at, operation_id, tool_call_id, agent_id, event, identifier, api_name, policies, decision, reason,
             defaulted, latency_micros, input_digest, raw_input)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING seq)
         INSERT INTO decision_policies (policy_id, decision_seq) SELECT DISTINCT p, d.seq FROM d, unnest($16::text[]) AS p`,
        [d.id, d.createdAt, d.operationId ?? null, d.toolCallId ?? null, d.agentId ?? null, d.event, d.identifier ?? null, d.apiName ?? null,
          JSON.stringify(d.policies), d.decision, d.reason ?? null, d.defaulted === true, d.latencyMicros, d.inputDigest,
          d.rawInput === undefined ? null : JSON.stringify(d.rawInput), d.policies.map((p) => p.id)],
      );
    } catch (err) {
      if (isUniqueViolation(err, 'decisions_id_key')) throw new HookgateError('STORE_CONFLICT', `Decision ${d.id} already exists`, { cause: err });
      throw err;
    }
  }

  async listDecisions(filter: DecisionFilter = {}): Promise<DecisionRecord[]> {
    return reads.listDecisions(await this.open(), filter);
  }

  /** postgres-pruner.ts; nothing goes back to a file system (reclaimedBytes 0: PostgreSQL reuses freed space itself). */
  async prune(policy: RetentionPolicy, options: PruneOptions = {}): Promise<PruneCounts> {
    this.assertOpen();
    return this.pruner.run(policy, options);
  }

  async admitSubmission(admission: SubmissionAdmission): Promise<SubmissionAdmissionResult> {
    await this.open();
    return this.submissions.admit(admission);
  }

  async getSubmission(id: string): Promise<SubmissionRecord | undefined> {
    await this.open();
    return this.submissions.get(id);
  }

  async listSubmissions(filter?: SubmissionFilter): Promise<SubmissionRecord[]> {
    await this.open();
    return this.submissions.list(filter);
  }

  async beginSubmissionAttempt(id: string, now?: string): Promise<SubmissionRecord> {
    await this.open();
    return this.submissions.begin(id, now ?? nowIso());
  }

  async linkSubmissionOperation(id: string, operationId: string): Promise<SubmissionRecord> {
    await this.open();
    return this.submissions.link(id, operationId);
  }

  async joinSubmission(id: string, intoId: string): Promise<SubmissionRecord> {
    await this.open();
    return this.submissions.join(id, intoId);
  }

  async requestSubmissionAbort(id: string, now?: string): Promise<SubmissionRecord> {
    await this.open();
    return this.submissions.requestAbort(id, now ?? nowIso());
  }

  async settleSubmission(id: string, settlement: SubmissionSettlement): Promise<{ settled: boolean; submission: SubmissionRecord }> {
    await this.open();
    return this.submissions.settle(id, settlement);
  }

  async recordToolStep(step: NewToolStep): Promise<{ recorded: boolean; step: ToolStepRecord }> {
    await this.open();
    return this.toolSteps.record(step);
  }

  async listToolSteps(operationId: string, toolCallId: string): Promise<ToolStepRecord[]> {
    await this.open();
    return this.toolSteps.list(operationId, toolCallId);
  }

  async getUserValue(userId: string, key: string): Promise<unknown> {
    await this.open();
    return this.userValues.get(userId, key);
  }

  /** One transaction that locks the row before reading the previous value (postgres-user-values.ts). */
  async setUserValue(userId: string, key: string, value: unknown): Promise<{ previous: unknown }> {
    await this.open();
    return this.userValues.set(userId, key, value);
  }

  async listUserValueKeys(userId: string): Promise<string[]> {
    await this.open();
    return this.userValues.keys(userId);
  }

  /**
   * Runs `work` (one prune batch) with this store's other calls held until
   * it ends: as SQLite's synchronous batch, a caller of this store never sees
   * a batch half done from its own side of the pool. Other processes are not
   * held (their reads see the batch committed or not, never in part).
   */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = work();
    this.busy = run;
    void run.finally(() => {
      if (this.busy === run) this.busy = undefined;
    }).catch(() => undefined);
    return run;
  }

  /** The connection, once migrated and open, after any prune batch in flight. */
  private async open(): Promise<PostgresConnection> {
    this.assertOpen();
    if (this.busy !== undefined) await this.busy.catch(() => undefined);
    this.assertOpen();
    return this.db;
  }

  private assertOpen(): void {
    if (this.closed) throw new HookgateError('KERNEL_STOPPED', `The store at ${this.db.where} is closed`);
    if (!this.migrated) throw new HookgateError('KERNEL_NOT_STARTED', `The store at ${this.db.where} is not migrated yet; call migrate() first`);
  }
}

