import { nowIso } from '../../kernel/clock.js';
import { HookgateError } from '../../kernel/errors.js';
import {
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
import { insertThread } from './postgres-commits.js';
import { isUniqueViolation, type PostgresConnection, type Queryable } from './postgres-connection.js';
import { SUBMISSION_COLUMNS, SUBMISSION_FROM, toJson, toSubmissionRecord, toThreadRecord, type SubmissionRow, type ThreadRow } from '../../kernel/store-rows.js';
import { THREAD_COLUMNS } from './postgres-rows.js';


/** An UPDATE ... RETURNING of one submission, joined back to its thread's id. */
const RETURNING = `RETURNING s.seq, s.id, s.dispatch_id, (SELECT id FROM threads WHERE seq = s.thread_seq) AS thread_id, s.agent_id, s.instance_id, s.status,
  s.message, s.attempts, s.first_started_at, s.operation_id, s.joined_into, s.abort_requested_at, s.result, s.error, s.accepted_at, s.updated_at, s.settled_at`;
/** Admissions retried when a racing admission created the thread or took the dispatch id first (then seen as committed). */
const ADMIT_ATTEMPTS = 3;


async function threadById(q: Queryable, id: string, lock = false) {
  const { rows } = await q.query<ThreadRow & { seq: string }>(`SELECT seq, ${THREAD_COLUMNS} FROM threads WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0] && { seq: Number(rows[0].seq), record: toThreadRecord(rows[0]) };
}

/**
 * Document 001's submissions in store-postgres. Admission is one
 * transaction: the thread row is locked (FOR UPDATE) while the condition is
 * judged and the submission stored. Two admissions that both find no thread
 * both try to create it; the loser's unique violation rolls its transaction
 * back and it runs again, now finding the winner's thread (so it continues
 * it, or fails its `uid: null` condition), as the contract asks. A dispatch
 * id taken by a racing admission is found the same way (`duplicate`). Every
 * other method is one conditional UPDATE (atomic on its own).
 */
export class PostgresSubmissions {
  constructor(private readonly db: PostgresConnection) {}

  async admit(admission: SubmissionAdmission): Promise<SubmissionAdmissionResult> {
    const message = toJson(admission.submission.message) ?? 'null';
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction(async (c) => {
          const earlier = await c.query<SubmissionRow>(`SELECT ${SUBMISSION_COLUMNS} FROM ${SUBMISSION_FROM} WHERE s.dispatch_id = $1`, [admission.submission.dispatchId]);
          if (earlier.rows[0]) {
            const stored = toSubmissionRecord(earlier.rows[0]);
            if (!sameAdmission(stored, admission)) throw conflictingDispatch(admission.submission.dispatchId);
            return { outcome: 'duplicate', submission: stored, thread: (await threadById(c, stored.threadId))!.record };
          }
          const found = await threadById(c, admission.thread.id, true);
          const refused = refuseByCondition(found?.record, admission.uid);
          if (refused) return refused;
          const now = nowIso();
          const threadSeq = found ? found.seq : await insertThread(c, admission.thread, now);
          await c.query(
            `INSERT INTO submissions (id, dispatch_id, thread_seq, agent_id, instance_id, status, message, attempts, accepted_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, 'queued', $6, 0, $7, $8) RETURNING seq`,
            [admission.submission.id, admission.submission.dispatchId, threadSeq, admission.submission.agentId, admission.thread.instanceId, message,
              admission.submission.acceptedAt, now],
          ).catch((err: unknown) => {
            if (isUniqueViolation(err, 'submissions_id_key')) throw new HookgateError('STORE_CONFLICT', `Submission ${admission.submission.id} already exists`, { cause: err });
            throw err;
          });
          const submission = (await this.byId(c, admission.submission.id))!;
          return { outcome: 'admitted', submission, thread: (await threadById(c, admission.thread.id))!.record, created: found === undefined };
        });
      } catch (err) {
        const raced = isUniqueViolation(err, 'submissions_dispatch_id_key') || (err instanceof HookgateError && err.code === 'STORE_CONFLICT' && isUniqueViolation(err.cause, 'threads_id_key'));
        if (raced && attempt < ADMIT_ATTEMPTS) continue;
        throw err;
      }
    }
  }

  get(id: string): Promise<SubmissionRecord | undefined> {
    return this.byId(this.db, id);
  }

  async list(filter: SubmissionFilter = {}): Promise<SubmissionRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.threadId !== undefined) {
      params.push(filter.threadId);
      where.push(`s.thread_seq = (SELECT seq FROM threads WHERE id = $${params.length})`);
    }
    if (filter.statuses !== undefined) {
      params.push([...new Set(filter.statuses)]);
      where.push(`s.status = ANY($${params.length}::text[])`);
    }
    const limit = filter.limit === undefined || !Number.isFinite(filter.limit) ? 'ALL' : String(Math.max(0, Math.floor(filter.limit)));
    const { rows } = await this.db.query<SubmissionRow>(`SELECT ${SUBMISSION_COLUMNS} FROM ${SUBMISSION_FROM}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY s.seq LIMIT ${limit}`, params);
    return rows.map(toSubmissionRecord);
  }

  async begin(id: string, now: string): Promise<SubmissionRecord> {
    const row = await this.update(
      `UPDATE submissions s SET status = 'running', attempts = attempts + 1, first_started_at = COALESCE(first_started_at, $2), updated_at = $2
       WHERE id = $1 AND status IN ('queued', 'running')`, [id, now]);
    if (!row) throw notStartable(await this.require(id));
    return row;
  }

  async link(id: string, operationId: string): Promise<SubmissionRecord> {
    const row = await this.update("UPDATE submissions s SET operation_id = $2, updated_at = $3 WHERE id = $1 AND status = 'running'", [id, operationId, nowIso()]);
    if (row) return row;
    const record = await this.require(id);
    throw new HookgateError('STORE_CONFLICT', `Submission ${id} is ${record.status}, not running: no operation can be linked to it`);
  }

  async join(id: string, intoId: string): Promise<SubmissionRecord> {
    const row = await this.update("UPDATE submissions s SET status = 'joined', joined_into = $2, updated_at = $3 WHERE id = $1 AND status = 'queued'", [id, intoId, nowIso()]);
    if (row) return row;
    const record = await this.require(id);
    throw new HookgateError('STORE_CONFLICT', `Submission ${id} is ${record.status}; only a queued submission joins another`, { details: { submissionId: id, status: record.status } });
  }

  async requestAbort(id: string, now: string): Promise<SubmissionRecord> {
    const row = await this.update(
      `UPDATE submissions s SET abort_requested_at = $2, updated_at = $2
       WHERE id = $1 AND abort_requested_at IS NULL AND status NOT IN ('completed', 'failed', 'aborted')`, [id, now]);
    return row ?? this.require(id);
  }

  async settle(id: string, settlement: SubmissionSettlement): Promise<{ settled: boolean; submission: SubmissionRecord }> {
    const row = await this.update(
      `UPDATE submissions s SET status = $2, result = $3, error = $4, settled_at = $5, updated_at = $5
       WHERE id = $1 AND status NOT IN ('completed', 'failed', 'aborted')`,
      [id, settlement.status, toJson(settlement.result), toJson(settlement.error), nowIso()],
    );
    return row ? { settled: true, submission: row } : { settled: false, submission: await this.require(id) };
  }

  private async update(sql: string, params: unknown[]): Promise<SubmissionRecord | undefined> {
    const { rows } = await this.db.query<SubmissionRow>(`${sql} ${RETURNING}`, params);
    return rows[0] && toSubmissionRecord(rows[0]);
  }

  private async byId(q: Queryable, id: string): Promise<SubmissionRecord | undefined> {
    const { rows } = await q.query<SubmissionRow>(`SELECT ${SUBMISSION_COLUMNS} FROM ${SUBMISSION_FROM} WHERE s.id = $1`, [id]);
    return rows[0] && toSubmissionRecord(rows[0]);
  }

  private async require(id: string): Promise<SubmissionRecord> {
    const record = await this.byId(this.db, id);
    if (!record) throw new HookgateError('STORE_NOT_FOUND', `Submission ${id} does not exist`);
    return record;
  }
}
