import type Database from 'better-sqlite3';
import { nowIso } from '../../kernel/clock.js';
import { HookgateError } from '../../kernel/errors.js';
import type { NewThread, ThreadRecord } from '../../kernel/store.js';
import {
  SETTLED_SUBMISSION_STATUSES,
  conflictingDispatch,
  notStartable,
  refuseByCondition,
  sameAdmission,
  type SubmissionAdmission,
  type SubmissionAdmissionResult,
  type SubmissionFilter,
  type SubmissionRecord,
  type SubmissionSettlement,
} from '../../kernel/submissions.js';
import { SUBMISSION_COLUMNS, SUBMISSION_FROM, toJson, toSubmissionRecord, type SubmissionRow } from '../../kernel/store-rows.js';


const STATUSES: ReadonlySet<string> = new Set(['queued', 'running', 'joined', 'completed', 'failed', 'aborted']);
/** Exactly the condition of the partial index `submissions_unsettled` (schema 8). */
const UNSETTLED_SQL = "('queued', 'running', 'joined')";


/** How the submissions reach the store's threads, inside the caller's transaction. */
export interface SqliteThreadAccess {
  get(id: string): ThreadRecord | undefined;
  /** Inserts the thread and returns its seq; STORE_CONFLICT when it exists. */
  insert(thread: NewThread, now: string): number;
}

type Statements = ReturnType<typeof prepare>;

function prepare(db: Database.Database) {
  return {
    byId: db.prepare<[string], SubmissionRow>(`SELECT ${SUBMISSION_COLUMNS} FROM ${SUBMISSION_FROM} WHERE s.id = ?`),
    byDispatchId: db.prepare<[string], SubmissionRow>(`SELECT ${SUBMISSION_COLUMNS} FROM ${SUBMISSION_FROM} WHERE s.dispatch_id = ?`),
    threadSeq: db.prepare<[string], number>('SELECT seq FROM threads WHERE id = ?').pluck(),
    insert: db.prepare(
      `INSERT INTO submissions (id, dispatch_id, thread_seq, agent_id, instance_id, status, message, attempts, accepted_at, updated_at)
       VALUES (@id, @dispatchId, @threadSeq, @agentId, @instanceId, 'queued', @message, 0, @acceptedAt, @now)`,
    ),
    begin: db.prepare<{ id: string; now: string }>(
      `UPDATE submissions SET status = 'running', attempts = attempts + 1, first_started_at = COALESCE(first_started_at, @now), updated_at = @now
       WHERE id = @id AND status IN ('queued', 'running')`,
    ),
    link: db.prepare<{ id: string; operationId: string; now: string }>(
      "UPDATE submissions SET operation_id = @operationId, updated_at = @now WHERE id = @id AND status = 'running'",
    ),
    join: db.prepare<{ id: string; intoId: string; now: string }>(
      "UPDATE submissions SET status = 'joined', joined_into = @intoId, updated_at = @now WHERE id = @id AND status = 'queued'",
    ),
    abort: db.prepare<{ id: string; now: string }>(
      `UPDATE submissions SET abort_requested_at = @now, updated_at = @now
       WHERE id = @id AND abort_requested_at IS NULL AND status NOT IN ('completed', 'failed', 'aborted')`,
    ),
    settle: db.prepare<{ id: string; status: string; result: string | null; error: string | null; now: string }>(
      `UPDATE submissions SET status = @status, result = @result, error = @error, settled_at = @now, updated_at = @now
       WHERE id = @id AND status NOT IN ('completed', 'failed', 'aborted')`,
    ),
  };
}

/**
 * Document 001's submissions in store-sqlite (the `submissions` table of
 * schema 8). Methods run inside the store's guard; writes are IMMEDIATE
 * transactions, so admissions from several processes on one file serialize.
 */
export class SqliteSubmissions {
  private readonly s: Statements;
  /** `list` statements by filter shape (a handful: the SQL varies only with which filters are set). */
  private readonly listStatements = new Map<string, Database.Statement>();
  private readonly admitTx: Database.Transaction<(admission: SubmissionAdmission) => SubmissionAdmissionResult>;

  constructor(private readonly db: Database.Database, threads: SqliteThreadAccess) {
    const s = (this.s = prepare(db));
    this.admitTx = db.transaction((admission: SubmissionAdmission): SubmissionAdmissionResult => {
      const earlier = s.byDispatchId.get(admission.submission.dispatchId);
      if (earlier) {
        const stored = toSubmissionRecord(earlier);
        if (!sameAdmission(stored, admission)) throw conflictingDispatch(admission.submission.dispatchId);
        return { outcome: 'duplicate', submission: stored, thread: threads.get(stored.threadId)! };
      }
      const found = threads.get(admission.thread.id);
      const refused = refuseByCondition(found, admission.uid);
      if (refused) return refused;
      const now = nowIso();
      const threadSeq = found ? s.threadSeq.get(found.id)! : threads.insert(admission.thread, now);
      try {
        s.insert.run({
          id: admission.submission.id,
          dispatchId: admission.submission.dispatchId,
          threadSeq,
          agentId: admission.submission.agentId,
          instanceId: admission.thread.instanceId,
          message: toJson(admission.submission.message) ?? 'null',
          acceptedAt: admission.submission.acceptedAt,
          now,
        });
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new HookgateError('STORE_CONFLICT', `Submission ${admission.submission.id} already exists`, { cause: err });
        throw err;
      }
      return { outcome: 'admitted', submission: toSubmissionRecord(s.byId.get(admission.submission.id)!), thread: threads.get(admission.thread.id)!, created: found === undefined };
    });
  }

  admit(admission: SubmissionAdmission): SubmissionAdmissionResult {
    return this.admitTx.immediate(admission);
  }

  get(id: string): SubmissionRecord | undefined {
    const row = this.s.byId.get(id);
    return row ? toSubmissionRecord(row) : undefined;
  }

  list(filter: SubmissionFilter = {}): SubmissionRecord[] {
    const where: string[] = [];
    const params: Record<string, unknown> = {};
    if (filter.threadId !== undefined) {
      // By the thread's seq (one look-up), so the submissions are read through their (thread_seq, seq) indexes.
      where.push('s.thread_seq = (SELECT seq FROM threads WHERE id = @threadId)');
      params.threadId = filter.threadId;
    }
    if (filter.statuses !== undefined) {
      // Literals from the closed list of statuses (never the caller's text), so SQLite can see that a filter on
      // unsettled statuses implies the partial index's condition and reads only the unsettled rows.
      const statuses = [...new Set(filter.statuses)].filter((status) => STATUSES.has(status));
      where.push(statuses.length === 0 ? '0' : `s.status IN (${statuses.map((status) => `'${status}'`).join(', ')})`);
      if (statuses.length > 0 && statuses.every((status) => !SETTLED_SUBMISSION_STATUSES.has(status))) where.push(`s.status IN ${UNSETTLED_SQL}`);
    }
    const limit = filter.limit === undefined || !Number.isFinite(filter.limit) ? -1 : Math.max(0, Math.floor(filter.limit));
    const sql = `SELECT ${SUBMISSION_COLUMNS} FROM ${SUBMISSION_FROM}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY s.seq LIMIT ${limit}`;
    let statement = this.listStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.listStatements.set(sql, statement);
    }
    return (statement.all(params) as SubmissionRow[]).map(toSubmissionRecord);
  }

  begin(id: string, now: string): SubmissionRecord {
    return this.db.transaction(() => {
      if (this.s.begin.run({ id, now }).changes === 0) throw notStartable(this.require(id));
      return this.require(id);
    }).immediate();
  }

  link(id: string, operationId: string): SubmissionRecord {
    return this.db.transaction(() => {
      if (this.s.link.run({ id, operationId, now: nowIso() }).changes === 0) {
        const record = this.require(id);
        throw new HookgateError('STORE_CONFLICT', `Submission ${id} is ${record.status}, not running: no operation can be linked to it`);
      }
      return this.require(id);
    }).immediate();
  }

  join(id: string, intoId: string): SubmissionRecord {
    return this.db.transaction(() => {
      if (this.s.join.run({ id, intoId, now: nowIso() }).changes === 0) {
        const record = this.require(id);
        throw new HookgateError('STORE_CONFLICT', `Submission ${id} is ${record.status}; only a queued submission joins another`, { details: { submissionId: id, status: record.status } });
      }
      return this.require(id);
    }).immediate();
  }

  requestAbort(id: string, now: string): SubmissionRecord {
    return this.db.transaction(() => {
      this.s.abort.run({ id, now });
      return this.require(id);
    }).immediate();
  }

  settle(id: string, settlement: SubmissionSettlement): { settled: boolean; submission: SubmissionRecord } {
    return this.db.transaction(() => {
      const changes = this.s.settle.run({
        id,
        status: settlement.status,
        result: toJson(settlement.result),
        error: toJson(settlement.error),
        now: nowIso(),
      }).changes;
      return { settled: changes > 0, submission: this.require(id) };
    }).immediate();
  }

  private require(id: string): SubmissionRecord {
    const record = this.get(id);
    if (!record) throw new HookgateError('STORE_NOT_FOUND', `Submission ${id} does not exist`);
    return record;
  }
}
