import { HookgateError } from './errors.js';
import type { NewThread, ThreadRecord } from './store.js';

/**
 * Where a submission (document 001: one admitted delivery to an agent
 * instance) stands: `queued` (admitted, not started), `running` (its
 * operation runs or is being recovered), `joined` (absorbed into another
 * submission's live response, whose outcome it takes), then settled:
 * `completed`, `failed` or `aborted`. The first settlement wins.
 */
export type SubmissionStatus = 'queued' | 'running' | 'joined' | 'completed' | 'failed' | 'aborted';

/** The statuses a submission never leaves. */
export const SETTLED_SUBMISSION_STATUSES: ReadonlySet<SubmissionStatus> = new Set<SubmissionStatus>(['completed', 'failed', 'aborted']);

/** What a completed submission answered with (document 001 `AgentReply` without its ids). */
export interface SubmissionResult {
  text: string;
  data?: Record<string, unknown[]>;
  metadata?: Record<string, unknown>;
  /** The thread position the settlement follows in the instance's conversation stream (recorded at settlement). */
  streamPosition?: number;
  /** The data parts the response wrote, each at its place in the conversation stream (recorded at settlement; JSON). */
  streamData?: StreamDataPart[];
}

/** One data part write of a settled response as the conversation stream shows it: `batch` / `index` are its position. */
export interface StreamDataPart {
  operationId: string;
  name: string;
  data: unknown;
  batch: number;
  index: number;
}

/** The recorded error of a failed or aborted submission: its code and, for typed agent errors, the wire `type`. */
export interface SubmissionError {
  message: string;
  code?: string;
  type?: string;
  /** The thread position the settlement follows in the instance's conversation stream (recorded at settlement). */
  streamPosition?: number;
  /** The data parts the response wrote, each at its place in the conversation stream (recorded at settlement; JSON). */
  streamData?: StreamDataPart[];
}

/** A submission as stored. */
export interface SubmissionRecord {
  id: string;
  /** The receipt id of the delivery that admitted it: unique, so admitting it again finds this record. */
  dispatchId: string;
  /** The instance's thread. */
  threadId: string;
  agentId: string;
  instanceId: string;
  /** Admission order across the store (oldest first within a thread is the order they run in). */
  seq: number;
  status: SubmissionStatus;
  /** The delivered message, as validated at admission (JSON). */
  message: unknown;
  /** Attempts begun (the first run counts as one; each recovery that re-runs it adds one). */
  attempts: number;
  /** When its first attempt began (the start of `durability.timeoutMs`). */
  firstStartedAt?: string;
  /** The operation of its current (latest) attempt. */
  operationId?: string;
  /** For a `joined` submission: the submission whose live response absorbed it (it takes that one's outcome). */
  joinedInto?: string;
  /** Set when someone asked for an abort; the runner honours it. */
  abortRequestedAt?: string;
  result?: SubmissionResult;
  error?: SubmissionError;
  acceptedAt: string;
  updatedAt: string;
  settledAt?: string;
}

/** What admission stores for a new submission (status `queued`, no attempts). */
export interface NewSubmission {
  id: string;
  dispatchId: string;
  agentId: string;
  message: unknown;
  /** When admission began (the receipt's `acceptedAt`). */
  acceptedAt: string;
}

/**
 * One admission: the submission, the instance thread it goes to (found by
 * `thread.id`, or created from this record when it does not exist and the
 * condition allows it) and the send condition.
 */
export interface SubmissionAdmission {
  submission: NewSubmission;
  thread: NewThread & { instanceId: string; uid: string };
  /**
   * The send condition (document 001 "Conditional sends"): absent, continue
   * or create; a string, continue only the thread whose uid it is; `null`,
   * create only.
   */
  uid?: string | null;
}

/**
 * What admission did. `admitted`: stored (with the thread, `created` when
 * this admission made it); `duplicate`: a submission with this dispatch id
 * was admitted before (the same request again: nothing new stored);
 * `instance_not_found` / `instance_exists`: the condition failed and nothing
 * was stored (`thread`: the instance found, if any).
 */
export type SubmissionAdmissionResult =
  | { outcome: 'admitted'; submission: SubmissionRecord; thread: ThreadRecord; created: boolean }
  | { outcome: 'duplicate'; submission: SubmissionRecord; thread: ThreadRecord }
  | { outcome: 'instance_not_found'; thread?: ThreadRecord }
  | { outcome: 'instance_exists'; thread: ThreadRecord };

/** A settlement: the terminal status and what it carries. */
export interface SubmissionSettlement {
  status: 'completed' | 'failed' | 'aborted';
  result?: SubmissionResult;
  error?: SubmissionError;
}

/** Filters `listSubmissions`; results are oldest first (admission order). */
export interface SubmissionFilter {
  threadId?: string;
  /** Any of these statuses. */
  statuses?: readonly SubmissionStatus[];
  limit?: number;
}

/**
 * The submissions part of the Store contract (document 001's durable
 * submissions). Each method is one transaction.
 */
export interface SubmissionStore {
  /**
   * Admits a submission in one transaction with the send condition and the
   * creation of the instance's thread: reads the thread, checks the
   * condition (nothing is written when it fails), creates the thread when it
   * is absent, stores the submission `queued`. A dispatch id admitted before
   * resolves `duplicate` with the stored submission (STORE_CONFLICT when that
   * submission went to another thread or carries another message). Two
   * racing admissions that both create the thread: one creates, the other
   * continues it (or fails its `uid: null` condition).
   */
  admitSubmission(admission: SubmissionAdmission): Promise<SubmissionAdmissionResult>;
  getSubmission(id: string): Promise<SubmissionRecord | undefined>;
  listSubmissions(filter?: SubmissionFilter): Promise<SubmissionRecord[]>;
  /**
   * Begins an attempt: a `queued` or `running` submission becomes `running`,
   * `attempts` grows by one and `firstStartedAt` is set if it was not.
   * STORE_CONFLICT when it is settled or joined; STORE_NOT_FOUND when unknown.
   */
  beginSubmissionAttempt(id: string, now?: string): Promise<SubmissionRecord>;
  /** Records the operation of the running attempt. STORE_CONFLICT unless `running`. */
  linkSubmissionOperation(id: string, operationId: string): Promise<SubmissionRecord>;
  /**
   * Marks a queued submission `joined` into `intoId` (its message was
   * appended to that submission's running operation). STORE_CONFLICT unless
   * it is queued; STORE_NOT_FOUND when unknown.
   */
  joinSubmission(id: string, intoId: string): Promise<SubmissionRecord>;
  /** Stamps an abort request on an unsettled submission (the first stamp stays); a settled one is returned unchanged. */
  requestSubmissionAbort(id: string, now?: string): Promise<SubmissionRecord>;
  /**
   * Settles the submission: the first settlement wins (`settled: false` and
   * the stored record when it was settled already). STORE_NOT_FOUND when unknown.
   */
  settleSubmission(id: string, settlement: SubmissionSettlement): Promise<{ settled: boolean; submission: SubmissionRecord }>;
}

/**
 * The send condition judged against the instance thread found (for stores):
 * `undefined` when admission may go on, else the refusal to return. A
 * string uid needs a thread with that uid; `null` needs no thread.
 */
export function refuseByCondition(thread: ThreadRecord | undefined, uid: string | null | undefined): SubmissionAdmissionResult | undefined {
  if (typeof uid === 'string' && (thread === undefined || thread.uid !== uid)) return thread ? { outcome: 'instance_not_found', thread } : { outcome: 'instance_not_found' };
  if (uid === null && thread !== undefined) return { outcome: 'instance_exists', thread };
  return undefined;
}

/** Whether a stored submission is the one `admission` would admit again (same thread, agent and message). */
export function sameAdmission(stored: SubmissionRecord, admission: SubmissionAdmission): boolean {
  return stored.threadId === admission.thread.id && stored.agentId === admission.submission.agentId && JSON.stringify(stored.message) === JSON.stringify(admission.submission.message);
}

/** STORE_CONFLICT: a dispatch id admitted before with another thread or message. */
export function conflictingDispatch(dispatchId: string): HookgateError {
  return new HookgateError('STORE_CONFLICT', `Dispatch ${dispatchId} was admitted before with another instance or message; a dispatch id names one delivery`, { details: { dispatchId } });
}

/** STORE_CONFLICT: an attempt cannot begin on a settled or joined submission. */
export function notStartable(record: Pick<SubmissionRecord, 'id' | 'status'>): HookgateError {
  return new HookgateError('STORE_CONFLICT', `Submission ${record.id} is ${record.status}; only a queued or running submission begins an attempt`, { details: { submissionId: record.id, status: record.status } });
}
