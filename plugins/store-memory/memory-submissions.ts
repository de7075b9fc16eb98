import { nowIso } from '../../kernel/clock.js';
import { HookgateError } from '../../kernel/errors.js';
import { jsonCopy as copy } from '../../kernel/json-copy.js';
import type { NewThread, ThreadRecord } from '../../kernel/store.js';
import {
  conflictingDispatch,
  notStartable,
  refuseByCondition,
  sameAdmission,
  SETTLED_SUBMISSION_STATUSES,
  type SubmissionAdmission,
  type SubmissionAdmissionResult,
  type SubmissionFilter,
  type SubmissionRecord,
  type SubmissionSettlement,
  type SubmissionStore,
} from '../../kernel/submissions.js';

/** How the submissions reach the memory store's threads (synchronously: each method is one turn, its transaction). */
export interface MemoryThreadAccess {
  get(id: string): ThreadRecord | undefined;
  /** Creates the thread; STORE_CONFLICT when it exists. */
  create(thread: NewThread, now: string): ThreadRecord;
}

/** Document 001's submissions in process memory (the submissions part of MemoryStore). */
export class MemorySubmissions implements SubmissionStore {
  private readonly byId = new Map<string, SubmissionRecord>();
  private readonly byDispatchId = new Map<string, string>();
  /** Each thread's submissions in admission order (a thread's next one is found without reading the others'). */
  private readonly byThread = new Map<string, SubmissionRecord[]>();
  private seq = 0;

  constructor(private readonly threads: MemoryThreadAccess, private readonly assertOpen: () => void) {}

  async admitSubmission(admission: SubmissionAdmission): Promise<SubmissionAdmissionResult> {
    this.assertOpen();
    const earlier = this.byDispatchId.get(admission.submission.dispatchId);
    if (earlier !== undefined) {
      const stored = this.byId.get(earlier)!;
      if (!sameAdmission(stored, admission)) throw conflictingDispatch(admission.submission.dispatchId);
      return { outcome: 'duplicate', submission: copy(stored), thread: copy(this.threads.get(stored.threadId)!) };
    }
    if (this.byId.has(admission.submission.id)) throw new HookgateError('STORE_CONFLICT', `Submission ${admission.submission.id} already exists`);
    const found = this.threads.get(admission.thread.id);
    const refused = refuseByCondition(found, admission.uid);
    if (refused) return copy(refused);
    // Copied before the first change, so a value JSON cannot carry fails without leaving a trace.
    const message = copy(admission.submission.message);
    const now = nowIso();
    const thread = found ?? this.threads.create(admission.thread, now);
    const record: SubmissionRecord = {
      id: admission.submission.id,
      dispatchId: admission.submission.dispatchId,
      threadId: thread.id,
      agentId: admission.submission.agentId,
      instanceId: admission.thread.instanceId,
      seq: ++this.seq,
      status: 'queued',
      message,
      attempts: 0,
      acceptedAt: admission.submission.acceptedAt,
      updatedAt: now,
    };
    this.byId.set(record.id, record);
    this.byDispatchId.set(record.dispatchId, record.id);
    const list = this.byThread.get(record.threadId);
    if (list) list.push(record);
    else this.byThread.set(record.threadId, [record]);
    return { outcome: 'admitted', submission: copy(record), thread: copy(thread), created: found === undefined };
  }

  async getSubmission(id: string): Promise<SubmissionRecord | undefined> {
    this.assertOpen();
    const record = this.byId.get(id);
    return record && copy(record);
  }

  async listSubmissions(filter: SubmissionFilter = {}): Promise<SubmissionRecord[]> {
    this.assertOpen();
    const statuses = filter.statuses && new Set(filter.statuses);
    const out: SubmissionRecord[] = [];
    const candidates = filter.threadId === undefined ? this.byId.values() : (this.byThread.get(filter.threadId) ?? []);
    for (const record of candidates) {
      if (statuses && !statuses.has(record.status)) continue;
      out.push(copy(record));
      if (filter.limit !== undefined && out.length >= filter.limit) break;
    }
    return out;
  }

  async beginSubmissionAttempt(id: string, now = nowIso()): Promise<SubmissionRecord> {
    const record = this.require(id);
    if (record.status !== 'queued' && record.status !== 'running') throw notStartable(record);
    record.status = 'running';
    record.attempts += 1;
    record.firstStartedAt ??= now;
    record.updatedAt = now;
    return copy(record);
  }

  async linkSubmissionOperation(id: string, operationId: string): Promise<SubmissionRecord> {
    const record = this.require(id);
    if (record.status !== 'running') throw new HookgateError('STORE_CONFLICT', `Submission ${id} is ${record.status}, not running: no operation can be linked to it`);
    record.operationId = operationId;
    record.updatedAt = nowIso();
    return copy(record);
  }

  async joinSubmission(id: string, intoId: string): Promise<SubmissionRecord> {
    const record = this.require(id);
    if (record.status !== 'queued') throw new HookgateError('STORE_CONFLICT', `Submission ${id} is ${record.status}; only a queued submission joins another`, { details: { submissionId: id, status: record.status } });
    record.status = 'joined';
    record.joinedInto = intoId;
    record.updatedAt = nowIso();
    return copy(record);
  }

  async requestSubmissionAbort(id: string, now = nowIso()): Promise<SubmissionRecord> {
    const record = this.require(id);
    if (!SETTLED_SUBMISSION_STATUSES.has(record.status) && record.abortRequestedAt === undefined) {
      record.abortRequestedAt = now;
      record.updatedAt = now;
    }
    return copy(record);
  }

  async settleSubmission(id: string, settlement: SubmissionSettlement): Promise<{ settled: boolean; submission: SubmissionRecord }> {
    const record = this.require(id);
    if (SETTLED_SUBMISSION_STATUSES.has(record.status)) return { settled: false, submission: copy(record) };
    const result = settlement.result === undefined ? undefined : copy(settlement.result);
    const error = settlement.error === undefined ? undefined : copy(settlement.error);
    const now = nowIso();
    record.status = settlement.status;
    if (result !== undefined) record.result = result;
    if (error !== undefined) record.error = error;
    record.settledAt = now;
    record.updatedAt = now;
    return { settled: true, submission: copy(record) };
  }

  /** Forgets the submissions of a thread that was pruned. */
  dropThread(threadId: string): number {
    const list = this.byThread.get(threadId) ?? [];
    for (const record of list) {
      this.byId.delete(record.id);
      this.byDispatchId.delete(record.dispatchId);
    }
    this.byThread.delete(threadId);
    return list.length;
  }

  /** Whether a thread has a submission that is not settled (a thread with one is never pruned). */
  hasUnsettled(threadId: string): boolean {
    return (this.byThread.get(threadId) ?? []).some((record) => !SETTLED_SUBMISSION_STATUSES.has(record.status));
  }

  private require(id: string): SubmissionRecord {
    this.assertOpen();
    const record = this.byId.get(id);
    if (!record) throw new HookgateError('STORE_NOT_FOUND', `Submission ${id} does not exist`);
    return record;
  }
}
