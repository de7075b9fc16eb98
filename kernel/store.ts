import type { Message, ToolResult, Usage, ToolCall } from './messages.js';
import type { PendingTool, StepKind, TerminalReason } from './hooks/hook-types.js';

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
}

/** An operation as stored: status, terminal reason, agent, context, state and version. */
export interface OperationRecord {
  id: string;
  agentId: string;
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
  seq: number;
  /** Set when a compaction replaced this message with a summary. */
  compactedInto?: string;
  createdAt: string;
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
  /** Messages replaced by a compaction summary (their ids), marked with `compactedInto`. */
  compact?: { messageIds: string[]; summaryId: string };
  status?: OperationStatus;
  reason?: TerminalReason;
  state: OperationState;
  error?: { message: string; code?: string };
  /**
   * Compare-and-swap: commit only if the operation's version is still this
   * one; otherwise nothing is written and STORE_VERSION_CONFLICT is thrown
   * (another process or connection committed first).
   */
  expectedVersion?: number;
}

/** What `createOperation` stores. */
export interface NewOperation {
  id: string;
  agentId: string;
  parentOperationId?: string;
  userId?: string;
  agent: unknown;
  context: Record<string, string>;
  state: OperationState;
}

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

export interface Store {
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
  /** Messages in order; compacted ones only when asked. */
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
  recordDecision(decision: DecisionRecord): Promise<void>;
  /** Newest first. */
  listDecisions(filter?: DecisionFilter): Promise<DecisionRecord[]>;
  /** The schema version this store writes. */
  readonly schemaVersion: number;
}

export type { ToolResult };
