import type { Message, ToolResult, Usage, ToolCall } from './messages.js';
import type { PendingTool, StepKind, TerminalReason } from './hooks/hook-types.js';
import type { PruneCounts, PruneOptions, RetentionPolicy } from './retention.js';
import type { SubmissionStore } from './submissions.js';
import type { ToolStepStore } from './tool-steps.js';
import type { UserValueStore } from './user-values.js';

/**
 * The one store every hook vocabulary and every worker shares. All methods are
 * async so a networked store (PostgreSQL) fits the same contract. Writes that
 * belong together take one call and are one transaction.
 */
/** `waiting_tool`: parked until deferred tool results (a sub-agent, an async tool) are published. */
export type OperationStatus = 'running' | 'waiting_approval' | 'waiting_tool' | 'done' | 'error' | 'interrupted';

/** The statuses an operation never leaves. */
export const TERMINAL_STATUSES: ReadonlySet<OperationStatus> = new Set<OperationStatus>(['done', 'error', 'interrupted']);

/** An operation's persisted run state: the step loop decides the next step from it. */
export interface OperationState {
  stepIndex: number;
  usage: Usage;
  /** Tool calls of the last model turn that have no result yet. */
  pendingToolCalls: ToolCall[];
  /** Tool call ids a human approved (or a policy allowed after `ask`). */
  approvedToolCallIds: string[];
  /** Tool calls whose result arrives later; each has an empty placeholder message until published. */
  deferredToolCallIds?: string[];
  /** Set while the operation waits for a human. */
  approval?: { pendingTools: PendingTool[]; requestedAt: string };
  /** After a failed compaction, do not retry below this token count. */
  compactRetryAboveTokens?: number;
  lastText?: string;
  /** Model turns taken (scripted models replay by it). */
  modelTurns: number;
  /** Compactions done (scripted summaries replay by it). */
  compactions: number;
  /** Whether the agent source's `start` lifecycle committed (it does not run again on a resumed operation). */
  sourceStarted?: boolean;
  /** How often the agent source's `finishing` lifecycle continued the operation instead of letting it finish. */
  finishContinuations?: number;
  /** The response metadata the agent source's lifecycle attached (document 001 `AgentReply.metadata`). */
  metadata?: Record<string, unknown>;
  /**
   * What the agent source keeps about the conversation (a JSON value it
   * alone reads; agent functions: what was last narrated to the model),
   * set by its `turnMessages` and carried on to the thread's next operation.
   */
  sourceState?: unknown;
  /**
   * The thread hook selection this operation made at start (document 003):
   * the prompt's list, when it gave one, and the ids of hooks passed to
   * execAgent in code. Only ids: hooks are code, resolved again by the
   * process that runs the operation.
   */
  threadHooks?: { prompt?: string[]; code?: string[] };
  /** A `prefilter_llm_history` thread hook blocked the model request (`block: true`): the operation finishes `hook_blocked`. */
  hookBlocked?: boolean;
  /** A published tool result asked to end the operation (`ToolResult.endsOperation`): it finishes once no call is pending. */
  endRequested?: boolean;
}

/** An operation as stored: status, terminal reason, agent, context, state and version. */
export interface OperationRecord {
  id: string;
  agentId: string;
  /** The thread the operation runs on (its conversation); every operation has one. */
  threadId: string;
  parentOperationId?: string;
  userId?: string;
  status: OperationStatus;
  reason?: TerminalReason;
  /** The agent definition the operation runs with, frozen at start. */
  agent: unknown;
  /** Run context (topic, session, thread... ids) given to execAgent. */
  context: Record<string, string>;
  state: OperationState;
  error?: { message: string; code?: string };
  createdAt: string;
  updatedAt: string;
  /**
   * The state version: grows by one with every commit (commitStep,
   * publishToolResult). A commit that names `expectedVersion` succeeds only
   * while the stored version is still that one (compare-and-swap).
   */
  version: number;
}

/** A stored message of an operation, in `seq` order. */
export interface MessageRecord extends Message {
  id: string;
  operationId: string;
  /** The message's place in its operation: 1, 2, 3... without gaps. */
  seq: number;
  /**
   * The message's place in its thread: strictly increasing along the thread,
   * never reused, across every operation of the thread (the stream offset of
   * document 001, the row the thread hooks of document 003 see). Gap-free in
   * both stores as long as only the thread's newest operation appends (the
   * runtime's rule: a thread runs one operation at a time).
   */
  position: number;
  /** Set when a compaction replaced this message with a summary. */
  compactedInto?: string;
  createdAt: string;
  /** Document 003's message `status`, set only by a message update (a new message has none). */
  status?: MessageStatus;
  /** Document 003's `response_completed_at`: microseconds since the epoch, set only by a message update. */
  responseCompletedAt?: number;
}

/** The statuses a message update may set (document 003's message `status`). */
export type MessageStatus = 'pending' | 'completed' | 'failed';

/**
 * What `updateMessage` may change on a stored message (document 003's
 * `ThreadState.updateMessage`): its content, its status and the time its
 * response completed. Everything else is fixed once written: id, role,
 * thread, operation and position place the message, and a tool call's or
 * result's ids bind approvals and results.
 */
export interface MessageUpdate {
  content?: string;
  status?: MessageStatus;
  /** Microseconds since the epoch: a whole number from 0 to Number.MAX_SAFE_INTEGER. */
  responseCompletedAt?: number;
}

/** A committed step: its kind, timing, usage and summary. */
export interface StepRecord {
  operationId: string;
  stepIndex: number;
  kind: StepKind;
  startedAt: string;
  finishedAt: string;
  usage: Usage;
  summary: Record<string, unknown>;
}

/** A message to append in a commit. */
export interface NewMessage extends Message {
  id?: string;
}

/** One step's writes, committed together. */
export interface StepCommit {
  step?: StepRecord;
  messages?: NewMessage[];
  /**
   * Messages replaced by a compaction summary (their ids), marked with
   * `compactedInto`: messages of the operation's thread, earlier operations' included.
   */
  compact?: { messageIds: string[]; summaryId: string };
  status?: OperationStatus;
  reason?: TerminalReason;
  state: OperationState;
  error?: { message: string; code?: string };
  /**
   * The operation's thread's persisted values after this commit (replacing
   * them), written in the same transaction as the rest: a write an agent
   * function's tool or event hook made commits with the step that made it,
   * or not at all. Absent: the values stay as they are.
   */
  threadValues?: Record<string, unknown>;
  /**
   * Compare-and-swap: commit only if the operation's version is still this
   * one; otherwise nothing is written and STORE_VERSION_CONFLICT is thrown
   * (another process or connection committed first).
   */
  expectedVersion?: number;
}

/**
 * A conversation that lives across operations: its messages are the messages
 * of every operation that ran on it, in position order. An operation is one
 * run on a thread (an execAgent call, a 001 submission, a 003 run).
 */
export interface ThreadRecord {
  id: string;
  /** The agent the thread talks to; an operation continuing the thread runs this agent. */
  agentId: string;
  /** The agent instance (document 001) the thread belongs to, when it does. */
  instanceId?: string;
  /** The instance's user-chosen unique id (document 001), when given. */
  uid?: string;
  /** What the thread was started with (document 001 `initialData`), as given. */
  initialData?: unknown;
  /** Values an agent persists on the thread between operations (JSON object). */
  values: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** What `createThread` (or `createOperation({ thread })`) stores. */
export interface NewThread {
  id: string;
  agentId: string;
  instanceId?: string;
  uid?: string;
  initialData?: unknown;
  values?: Record<string, unknown>;
}

/** The id of the thread `createOperation` makes for an operation that names none. */
export function defaultThreadId(operationId: string): string {
  return `thread_${operationId}`;
}

/** The statuses of an operation that still runs or waits: a thread with one takes no new operation. */
export const UNFINISHED_STATUSES: ReadonlySet<OperationStatus> = new Set<OperationStatus>(['running', 'waiting_approval', 'waiting_tool']);

/** What `createOperation` stores. */
export interface NewOperation {
  id: string;
  agentId: string;
  /**
   * Continue this existing thread: the operation's messages follow the
   * thread's (positions continue). STORE_NOT_FOUND when it does not exist,
   * THREAD_BUSY while another operation of it is unfinished (checked in the
   * same transaction). Without `threadId` the store creates the thread:
   * `thread` when given, else `{ id: defaultThreadId(id), agentId }`.
   */
  threadId?: string;
  thread?: NewThread;
  parentOperationId?: string;
  userId?: string;
  agent: unknown;
  context: Record<string, string>;
  state: OperationState;
  /** Created already claimed by this owner (as claimOperation would), in the same transaction: one write fewer per operation. */
  lease?: LeaseRequest;
}

/**
 * Who runs an operation now: a lease in the store. A driver claims the
 * operation before it runs a step, renews the lease while it runs and releases
 * it when the operation parks or finishes; a process that dies leaves its
 * lease to expire, and another one can then claim the operation.
 */
export interface OperationLease {
  /** The holder: a per-process id (the in-process driver's `owner`). */
  owner: string;
  /** When the lease ends unless renewed, in epoch milliseconds. */
  expiresAt: number;
}

/** What `claimOperation` and `renewLease` take. */
export interface LeaseRequest {
  owner: string;
  /** How long the lease lasts from `now` (positive milliseconds). */
  ttlMs: number;
  /** The clock to judge expiry by, epoch milliseconds (default Date.now()). */
  now?: number;
}

/**
 * The outcome of `claimOperation`: the operation (as stored at the claim) with
 * this caller's lease, or, when another owner holds an unexpired lease, that
 * holder's lease and nothing changed.
 */
export type LeaseClaim =
  | { claimed: true; operation: OperationRecord; lease: OperationLease }
  | { claimed: false; operation: OperationRecord; holder: OperationLease };

/** Filters `listOperations`. */
export interface OperationFilter {
  status?: OperationStatus;
  parentOperationId?: string;
  limit?: number;
}

/** A user the store knows (for webhook `userEmail`). */
export interface UserRecord {
  id: string;
  email?: string;
}

/** One policy decision, allow included (the decision log). */
export interface DecisionRecord {
  id: string;
  createdAt: string;
  operationId?: string;
  toolCallId?: string;
  agentId?: string;
  /** beforeToolCall, afterToolCall... */
  event: string;
  identifier?: string;
  apiName?: string;
  /** Every candidate policy that was evaluated, shadow ones included. */
  policies: Array<{ id: string; effect: string; mode: 'enforce' | 'shadow'; reason?: string; error?: string }>;
  /** The enforced outcome. */
  decision: 'allow' | 'deny' | 'ask' | 'redact';
  reason?: string;
  /** True when no enforcing policy matched and the configured default decided. */
  defaulted: boolean;
  latencyMicros: number;
  /** sha256 of the canonical JSON of the input. */
  inputDigest: string;
  /** Only when `policies.logRawArgs` is on. */
  rawInput?: unknown;
}

/** Filters `listDecisions`. */
export interface DecisionFilter {
  operationId?: string;
  policyId?: string;
  decision?: DecisionRecord['decision'];
  /** ISO timestamps, inclusive. */
  since?: string;
  until?: string;
  limit?: number;
}

/**
 * The store contract; the submissions of document 001 are {@link SubmissionStore} (kernel/submissions.ts), durable tool
 * steps {@link ToolStepStore} (kernel/tool-steps.ts), per-user values {@link UserValueStore} (kernel/user-values.ts).
 */
export interface Store extends SubmissionStore, ToolStepStore, UserValueStore {
  /** Creates or upgrades the schema; refuses a newer or damaged database. */
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** Creates the operation, its first messages and its persisted hooks in one transaction. */
  createOperation(op: NewOperation, messages: NewMessage[], hooks: unknown[]): Promise<OperationRecord>;
  getOperation(id: string): Promise<OperationRecord | undefined>;
  /**
   * Ids of the operations whose id starts with `prefix` (compared exactly:
   * case-sensitive, `%` and `_` are ordinary characters), in ascending id
   * order, at most `limit` of them. An empty prefix matches every id. What
   * `hookgate show 01a2…` resolves a typed id prefix with, like git; a store
   * answers it from an index on the id, never by reading every operation.
   */
  findOperationIds(prefix: string, limit: number): Promise<string[]>;
  listOperations(filter?: OperationFilter): Promise<OperationRecord[]>;
  /** Applies one step's writes atomically. Throws STORE_NOT_FOUND for an unknown operation. */
  commitStep(operationId: string, commit: StepCommit): Promise<MessageRecord[]>;
  /** Creates an empty thread. STORE_CONFLICT when the id exists. */
  createThread(thread: NewThread): Promise<ThreadRecord>;
  getThread(id: string): Promise<ThreadRecord | undefined>;
  /** Replaces the thread's persisted values. STORE_NOT_FOUND for an unknown thread. */
  saveThreadValues(threadId: string, values: Record<string, unknown>): Promise<void>;
  /**
   * The thread's messages across its operations in position order (from
   * `fromPosition` on, inclusive, when given); compacted ones only when asked.
   * An unknown thread has none.
   */
  listThreadMessages(threadId: string, options?: { fromPosition?: number; includeCompacted?: boolean }): Promise<MessageRecord[]>;
  /**
   * The thread's operations, oldest first; with `last`, only its newest `last` ones (still oldest first), read
   * without the rest: what a new operation on a long thread needs (its predecessor), at a cost that does not grow
   * with the thread.
   */
  listThreadOperations(threadId: string, options?: { last?: number }): Promise<OperationRecord[]>;
  /**
   * Applies `update` to the message `messageId` of thread `threadId` in one
   * transaction and resolves to the message as stored afterwards; an empty
   * update writes nothing and resolves to the message. MESSAGE_UPDATE_INVALID
   * (nothing written) for a field other than those of {@link MessageUpdate}
   * or a value of the wrong type; STORE_NOT_FOUND when the thread has no such
   * message (an unknown id, or another thread's message); STORE_CONFLICT when
   * the message was compacted (a summary replaced it). The operation's state
   * version does not change (a message update is not a step).
   */
  updateMessage(threadId: string, messageId: string, update: MessageUpdate): Promise<MessageRecord>;
  /** The operation's own messages in order; compacted ones only when asked. */
  listMessages(operationId: string, options?: { includeCompacted?: boolean }): Promise<MessageRecord[]>;
  listSteps(operationId: string): Promise<StepRecord[]>;
  /** Persisted (serialized webhook) hooks as stored; validation happens where they are restored. */
  loadHooks(operationId: string): Promise<unknown[]>;
  saveHooks(operationId: string, hooks: unknown[]): Promise<void>;
  upsertUser(user: UserRecord): Promise<void>;
  getUser(id: string): Promise<UserRecord | undefined>;
  /**
   * Publishes a deferred tool result into its empty placeholder message, once:
   * resolves false (and changes nothing) when the placeholder is already
   * filled or missing, true after writing the result and `commit` (state,
   * status) in one transaction. Concurrent callers: exactly one wins.
   */
  publishToolResult(operationId: string, toolCallId: string, result: ToolResult, commit: Pick<StepCommit, 'state' | 'status' | 'expectedVersion'>): Promise<boolean>;
  /**
   * Claims the operation for `request.owner` until now + ttlMs, atomically:
   * granted when no lease is held, the held one has expired (expiresAt <= now)
   * or `owner` already holds it (then it is extended); otherwise refused with
   * the holder's lease and nothing written. Leases do not change the state
   * version. STORE_NOT_FOUND for an unknown operation.
   */
  claimOperation(operationId: string, request: LeaseRequest): Promise<LeaseClaim>;
  /**
   * Extends `request.owner`'s lease to now + ttlMs. Resolves to the new lease,
   * or undefined (and writes nothing) when `owner` no longer holds it (another
   * owner claimed it after it expired, or it was released). STORE_NOT_FOUND
   * for an unknown operation.
   */
  renewLease(operationId: string, request: LeaseRequest): Promise<OperationLease | undefined>;
  /** Drops `owner`'s lease; true when it held one. Another owner's lease is left alone. STORE_NOT_FOUND for an unknown operation. */
  releaseLease(operationId: string, owner: string): Promise<boolean>;
  /** The lease held on the operation (expired or not), if any; undefined for an unknown operation. */
  getLease(operationId: string): Promise<OperationLease | undefined>;
  recordDecision(decision: DecisionRecord): Promise<void>;
  /** Newest first. */
  listDecisions(filter?: DecisionFilter): Promise<DecisionRecord[]>;
  /**
   * Removes what `policy` no longer keeps (kernel/retention.ts says what is
   * safe to remove: finished threads only, never anything a running or parked
   * operation needs) and the decisions beyond the decision log's limits, in
   * batches of `options.batchSize` with other calls served between them; then
   * gives freed space back to the file system where the store has a file.
   * Resolves to what went, by kind (with `dryRun`, what would go).
   */
  prune(policy: RetentionPolicy, options?: PruneOptions): Promise<PruneCounts>;
  /** The schema version this store writes. */
  readonly schemaVersion: number;
}

export type { ToolResult };
