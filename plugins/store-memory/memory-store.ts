import { nowIso } from '../../kernel/clock.js';
import { randomUUID } from 'node:crypto';
import { HookgateError } from '../../kernel/errors.js';
import { jsonCopy as copy } from '../../kernel/json-copy.js';
import { newMessageRecord } from '../../kernel/message-record.js';
import { checkMessageUpdate } from '../../kernel/message-update.js';
import { copyOperationState, copyStepSummary, copyUsage } from '../../kernel/step-copies.js';
import { deepFreeze, isDeepFrozen } from '../../kernel/agent-definition.js';
import { leaseWindow } from '../../kernel/lease-window.js';
import { defaultThreadId, TERMINAL_STATUSES, UNFINISHED_STATUSES } from '../../kernel/store.js';
import type { SubmissionAdmission, SubmissionAdmissionResult, SubmissionFilter, SubmissionRecord, SubmissionSettlement } from '../../kernel/submissions.js';
import { MemorySubmissions } from './memory-submissions.js';
import { MemoryToolSteps } from './memory-tool-steps.js';
import { MemoryUserValues } from './memory-user-values.js';
import type { NewToolStep, ToolStepRecord } from '../../kernel/tool-steps.js';
import {
  decisionCutoff,
  DEFAULT_PRUNE_BATCH,
  emptyPruneCounts,
  isExpired,
  limitsFor,
  yieldToEventLoop,
  type PruneCounts,
  type PruneOptions,
  type RetentionPolicy,
} from '../../kernel/retention.js';
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

/** A caller's copy of an operation record: everything copied but a frozen agent definition, which is shared. */
function copyOperation(record: OperationRecord): OperationRecord {
  if (!Object.isFrozen(record.agent)) return copy(record);
  const out: OperationRecord = copy({ ...record, agent: null });
  out.agent = record.agent;
  return out;
}

/** Drops keys whose value is undefined, so records compare equal to store-sqlite's. */
function compact<T extends object>(record: T): T {
  for (const key of Object.keys(record) as Array<keyof T>) if (record[key] === undefined) delete record[key];
  return record;
}

/** Code point order, as SQLite compares TEXT (UTF-8 bytes), so both stores list prefix matches alike. */
function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
  }
  return x.length - y.length;
}

function applyLimit<T>(items: T[], limit: number | undefined): T[] {
  if (limit === undefined || Number.isNaN(limit) || limit === Infinity) return items;
  return items.slice(0, Math.max(0, Math.floor(limit)));
}

/** A thread as kept here: its record, every message of its operations in position order, its operations. */
interface StoredThread {
  record: ThreadRecord;
  messages: MessageRecord[];
  lastPosition: number;
  operationIds: string[];
}

/**
 * The Store contract in process memory, for tests and benchmarks. Nothing
 * survives the process. Every value is copied on the way in and on the way
 * out, so callers cannot change stored state by mutating objects. Each method
 * validates everything before it mutates anything, so a rejected write
 * changes nothing. Errors match store-sqlite: STORE_NOT_FOUND, STORE_CONFLICT,
 * KERNEL_STOPPED after {@link close}.
 */
export class MemoryStore implements Store {
  readonly schemaVersion = 1;
  private closed = false;
  /** Insertion order is creation order. */
  private readonly operations = new Map<string, OperationRecord>();
  private readonly messages = new Map<string, MessageRecord[]>();
  private readonly messageIds = new Set<string>();
  private readonly threads = new Map<string, StoredThread>();
  private readonly steps = new Map<string, StepRecord[]>();
  private readonly hooks = new Map<string, unknown[]>();
  /** Held leases by operation id (released ones are deleted). */
  private readonly leases = new Map<string, OperationLease>();
  private readonly users = new Map<string, UserRecord>();
  private readonly decisions: DecisionRecord[] = [];
  private readonly decisionIds = new Set<string>();
  /**
   * One frozen copy per deep-frozen agent definition, shared by every operation
   * that runs it: nobody can change either side, so one copy stands for all
   * (the runtime starts many operations of the same agent).
   */
  private readonly agentCopies = new WeakMap<object, unknown>();
  /** Document 001's submissions (memory-submissions.ts), over this store's threads. */
  private readonly submissions = new MemorySubmissions(
    {
      get: (id) => this.threads.get(id)?.record,
      create: (thread, now) => {
        const stored = this.toStoredThread(thread, now);
        this.threads.set(stored.record.id, stored);
        return stored.record;
      },
    },
    () => this.assertOpen(),
  );
  /** Durable tool steps (memory-tool-steps.ts), removed with their operation. */
  private readonly toolSteps = new MemoryToolSteps((id) => this.operations.has(id), () => this.assertOpen());
  /** Per-user values (memory-user-values.ts): not thread data, so never pruned. */
  private readonly userValues = new MemoryUserValues(() => this.assertOpen());

  /** Nothing to migrate; resolves at once. */
  async migrate(): Promise<void> {
    this.assertOpen();
  }

  /** Idempotent; later calls throw KERNEL_STOPPED. Stored data is dropped. */
  async close(): Promise<void> {
    this.closed = true;
  }

  async createOperation(op: NewOperation, messages: NewMessage[], hooks: unknown[]): Promise<OperationRecord> {
    this.assertOpen();
    if (this.operations.has(op.id)) throw new HookgateError('STORE_CONFLICT', `Operation ${op.id} already exists`);
    this.assertNewMessageIds(messages);
    const lease = op.lease && leaseWindow(op.id, op.lease);
    const now = nowIso();
    let thread: StoredThread | undefined;
    if (op.threadId !== undefined) {
      thread = this.threads.get(op.threadId);
      if (!thread) throw new HookgateError('STORE_NOT_FOUND', `Thread ${op.threadId} does not exist`);
      this.assertThreadIdle(thread);
    }
    const newThread = thread ? undefined : this.toStoredThread(op.thread ?? { id: defaultThreadId(op.id), agentId: op.agentId }, now);
    const target = thread ?? newThread!;
    // Copy everything before the first change, so a value JSON cannot carry fails without leaving a trace.
    const record: OperationRecord = compact({
      id: op.id,
      agentId: op.agentId,
      threadId: target.record.id,
      parentOperationId: op.parentOperationId,
      userId: op.userId,
      status: 'running',
      agent: this.agentCopy(op.agent ?? null),
      context: copy(op.context ?? {}),
      state: copy(op.state),
      createdAt: now,
      updatedAt: now,
      version: 0,
    });
    const storedHooks = copy(hooks);
    const list: MessageRecord[] = [];
    const inserted = this.toMessageRecords(op.id, 0, target.lastPosition, messages, now);
    if (newThread) this.threads.set(newThread.record.id, newThread);
    target.operationIds.push(op.id);
    this.operations.set(op.id, record);
    this.messages.set(op.id, list);
    this.steps.set(op.id, []);
    this.hooks.set(op.id, storedHooks);
    if (lease) this.leases.set(op.id, { owner: op.lease!.owner, expiresAt: lease.expiresAt });
    this.store(list, target, inserted);
    return copyOperation(record);
  }

  admitSubmission(admission: SubmissionAdmission): Promise<SubmissionAdmissionResult> {
    return this.submissions.admitSubmission(admission);
  }

  getSubmission(id: string): Promise<SubmissionRecord | undefined> {
    return this.submissions.getSubmission(id);
  }

  listSubmissions(filter?: SubmissionFilter): Promise<SubmissionRecord[]> {
    return this.submissions.listSubmissions(filter);
  }

  beginSubmissionAttempt(id: string, now?: string): Promise<SubmissionRecord> {
    return this.submissions.beginSubmissionAttempt(id, now);
  }

  linkSubmissionOperation(id: string, operationId: string): Promise<SubmissionRecord> {
    return this.submissions.linkSubmissionOperation(id, operationId);
  }

  joinSubmission(id: string, intoId: string): Promise<SubmissionRecord> {
    return this.submissions.joinSubmission(id, intoId);
  }

  requestSubmissionAbort(id: string, now?: string): Promise<SubmissionRecord> {
    return this.submissions.requestSubmissionAbort(id, now);
  }

  settleSubmission(id: string, settlement: SubmissionSettlement): Promise<{ settled: boolean; submission: SubmissionRecord }> {
    return this.submissions.settleSubmission(id, settlement);
  }

  recordToolStep(step: NewToolStep): Promise<{ recorded: boolean; step: ToolStepRecord }> {
    return this.toolSteps.recordToolStep(step);
  }

  listToolSteps(operationId: string, toolCallId: string): Promise<ToolStepRecord[]> {
    return this.toolSteps.listToolSteps(operationId, toolCallId);
  }

  getUserValue(userId: string, key: string): Promise<unknown> {
    return this.userValues.getUserValue(userId, key);
  }

  setUserValue(userId: string, key: string, value: unknown): Promise<{ previous: unknown }> {
    return this.userValues.setUserValue(userId, key, value);
  }

  listUserValueKeys(userId: string): Promise<string[]> {
    return this.userValues.listUserValueKeys(userId);
  }

  /** STORE_CONFLICT when the id exists. */
  async createThread(thread: NewThread): Promise<ThreadRecord> {
    this.assertOpen();
    const stored = this.toStoredThread(thread, nowIso());
    this.threads.set(stored.record.id, stored);
    return copy(stored.record);
  }

  async getThread(id: string): Promise<ThreadRecord | undefined> {
    this.assertOpen();
    const thread = this.threads.get(id);
    return thread && copy(thread.record);
  }

  async saveThreadValues(threadId: string, values: Record<string, unknown>): Promise<void> {
    this.assertOpen();
    const thread = this.threads.get(threadId);
    if (!thread) throw new HookgateError('STORE_NOT_FOUND', `Thread ${threadId} does not exist`);
    thread.record.values = copy(values);
    thread.record.updatedAt = nowIso();
  }

  async listThreadMessages(threadId: string, options: { fromPosition?: number; includeCompacted?: boolean } = {}): Promise<MessageRecord[]> {
    this.assertOpen();
    const from = options.fromPosition ?? -Infinity;
    const all = this.threads.get(threadId)?.messages ?? [];
    return copy(all.filter((m) => m.position >= from && (options.includeCompacted || m.compactedInto === undefined)));
  }

  /** One synchronous check-and-write: nothing can interleave, so it is atomic. The record is shared with the operation's list. */
  async updateMessage(threadId: string, messageId: string, update: MessageUpdate): Promise<MessageRecord> {
    this.assertOpen();
    const checked = checkMessageUpdate(messageId, update);
    const message = this.threads.get(threadId)?.messages.find((m) => m.id === messageId);
    if (!message) throw new HookgateError('STORE_NOT_FOUND', `Thread ${threadId} has no message ${messageId}`, { details: { threadId, messageId } });
    if (message.compactedInto !== undefined) {
      throw new HookgateError('STORE_CONFLICT', `Message ${messageId} was compacted into ${message.compactedInto}; a compacted message cannot be updated`, { details: { threadId, messageId } });
    }
    if (checked.content !== undefined) message.content = checked.content;
    if (checked.status !== undefined) message.status = checked.status;
    if (checked.responseCompletedAt !== undefined) message.responseCompletedAt = checked.responseCompletedAt;
    return copy(message);
  }

  async listThreadOperations(threadId: string, options: { last?: number } = {}): Promise<OperationRecord[]> {
    this.assertOpen();
    const ids = this.threads.get(threadId)?.operationIds ?? [];
    return (options.last === undefined ? ids : ids.slice(Math.max(0, ids.length - options.last))).map((id) => copyOperation(this.operations.get(id)!));
  }

  async getOperation(id: string): Promise<OperationRecord | undefined> {
    this.assertOpen();
    const record = this.operations.get(id);
    return record && copyOperation(record);
  }

  /** Ids starting with `prefix`, ascending, at most `limit`: a scan, which is fine for a store in process memory. */
  async findOperationIds(prefix: string, limit: number): Promise<string[]> {
    this.assertOpen();
    const ids = [...this.operations.keys()].filter((id) => id.startsWith(prefix)).sort(compareCodePoints);
    return applyLimit(ids, limit);
  }

  /** Newest first. */
  async listOperations(filter: OperationFilter = {}): Promise<OperationRecord[]> {
    this.assertOpen();
    const matches = [...this.operations.values()]
      .reverse()
      .filter((op) => (filter.status === undefined || op.status === filter.status) &&
        (filter.parentOperationId === undefined || op.parentOperationId === filter.parentOperationId));
    return applyLimit(matches, filter.limit).map(copyOperation);
  }

  /** All or nothing: every check runs before the first change. Same errors as store-sqlite. */
  async commitStep(operationId: string, commit: StepCommit): Promise<MessageRecord[]> {
    this.assertOpen();
    const op = this.operations.get(operationId);
    if (!op) throw new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
    assertVersion(op, commit.expectedVersion);
    const newMessages = commit.messages ?? [];
    this.assertNewMessageIds(newMessages);
    const stored = this.messages.get(operationId)!;
    const thread = this.threads.get(op.threadId)!;
    if (commit.compact) {
      // Any message of the thread: a continued thread compacts earlier operations' messages too.
      const own = new Set([...thread.messages.map((m) => m.id), ...newMessages.map((m) => m.id)]);
      for (const messageId of commit.compact.messageIds) {
        if (!own.has(messageId)) throw new HookgateError('STORE_NOT_FOUND', `Message ${messageId} of operation ${operationId} does not exist`);
      }
    }
    // Copy before mutating: a value JSON cannot carry would throw here, not halfway through.
    const state = copyOperationState(commit.state);
    const error = copy(commit.error);
    const threadValues = commit.threadValues === undefined ? undefined : copy(commit.threadValues);
    const step = commit.step ? this.toStepRecord(operationId, commit.step) : undefined;

    const now = nowIso();
    const inserted = this.toMessageRecords(operationId, stored.length === 0 ? 0 : stored[stored.length - 1]!.seq, thread.lastPosition, newMessages, now);
    if (step) this.steps.get(operationId)!.push(step);
    this.store(stored, thread, inserted);
    // The caller's copies, rebuilt as the stored ones were built (same keys in the same order, nothing shared).
    const result = inserted.map((r) => newMessageRecord(r, r.id, r.operationId, r.seq, r.position, r.createdAt));
    if (commit.compact) {
      const ids = new Set(commit.compact.messageIds);
      for (const m of thread.messages) if (ids.has(m.id)) m.compactedInto = commit.compact.summaryId;
    }
    op.state = state;
    if (threadValues !== undefined) {
      thread.record.values = threadValues;
      thread.record.updatedAt = now;
    }
    if (commit.status !== undefined) op.status = commit.status;
    if (commit.reason !== undefined) op.reason = commit.reason;
    if (error !== undefined) op.error = error;
    op.updatedAt = now;
    op.version += 1;
    return result;
  }

  async listMessages(operationId: string, options: { includeCompacted?: boolean } = {}): Promise<MessageRecord[]> {
    this.assertOpen();
    const all = this.messages.get(operationId) ?? [];
    return copy(options.includeCompacted ? all : all.filter((m) => m.compactedInto === undefined));
  }

  /** In step order; steps sharing an index keep their commit order. */
  async listSteps(operationId: string): Promise<StepRecord[]> {
    this.assertOpen();
    const steps = [...(this.steps.get(operationId) ?? [])];
    // Array.prototype.sort is stable, so equal indexes keep commit order.
    return copy(steps.sort((a, b) => a.stepIndex - b.stepIndex));
  }

  async publishToolResult(operationId: string, toolCallId: string, result: ToolResult, commit: Pick<StepCommit, 'state' | 'status' | 'expectedVersion'>): Promise<boolean> {
    this.assertOpen();
    const op = this.operations.get(operationId);
    if (!op) throw new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
    const placeholder = (this.messages.get(operationId) ?? []).find((m) => m.role === 'tool' && m.toolCallId === toolCallId && m.toolResult === undefined);
    if (!placeholder) return false;
    assertVersion(op, commit.expectedVersion);
    const stored = copy(result);
    const state = copy(commit.state);
    placeholder.content = stored.content;
    placeholder.toolResult = stored;
    op.state = state;
    if (commit.status !== undefined) op.status = commit.status;
    op.updatedAt = nowIso();
    op.version += 1;
    return true;
  }

  /** Granted when free, expired or already `owner`'s; one synchronous check-and-set, so concurrent claims cannot both win. */
  async claimOperation(operationId: string, request: LeaseRequest): Promise<LeaseClaim> {
    this.assertOpen();
    const op = this.operations.get(operationId);
    if (!op) throw new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
    const { now, expiresAt } = leaseWindow(operationId, request);
    const held = this.leases.get(operationId);
    if (held && held.owner !== request.owner && held.expiresAt > now) return { claimed: false, operation: copyOperation(op), holder: { ...held } };
    const lease = { owner: request.owner, expiresAt };
    this.leases.set(operationId, lease);
    return { claimed: true, operation: copyOperation(op), lease: { ...lease } };
  }

  async renewLease(operationId: string, request: LeaseRequest): Promise<OperationLease | undefined> {
    this.assertOpen();
    if (!this.operations.has(operationId)) throw new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
    const { expiresAt } = leaseWindow(operationId, request);
    const held = this.leases.get(operationId);
    if (!held || held.owner !== request.owner) return undefined;
    held.expiresAt = expiresAt;
    return { ...held };
  }

  async releaseLease(operationId: string, owner: string): Promise<boolean> {
    this.assertOpen();
    if (!this.operations.has(operationId)) throw new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
    if (this.leases.get(operationId)?.owner !== owner) return false;
    this.leases.delete(operationId);
    return true;
  }

  async getLease(operationId: string): Promise<OperationLease | undefined> {
    this.assertOpen();
    const held = this.leases.get(operationId);
    return held && { ...held };
  }

  async loadHooks(operationId: string): Promise<unknown[]> {
    this.assertOpen();
    return copy(this.hooks.get(operationId) ?? []);
  }

  async saveHooks(operationId: string, hooks: unknown[]): Promise<void> {
    this.assertOpen();
    if (!this.operations.has(operationId)) throw new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
    this.hooks.set(operationId, copy(hooks));
  }

  /** Inserts or replaces; an absent email clears the stored one. */
  async upsertUser(user: UserRecord): Promise<void> {
    this.assertOpen();
    this.users.set(user.id, user.email === undefined ? { id: user.id } : { id: user.id, email: user.email });
  }

  async getUser(id: string): Promise<UserRecord | undefined> {
    this.assertOpen();
    return copy(this.users.get(id));
  }

  async recordDecision(decision: DecisionRecord): Promise<void> {
    this.assertOpen();
    if (this.decisionIds.has(decision.id)) throw new HookgateError('STORE_CONFLICT', `Decision ${decision.id} already exists`);
    // Only the contract's fields, as store-sqlite keeps only its columns.
    const record: DecisionRecord = compact(
      copy({
        id: decision.id,
        createdAt: decision.createdAt,
        operationId: decision.operationId,
        toolCallId: decision.toolCallId,
        agentId: decision.agentId,
        event: decision.event,
        identifier: decision.identifier,
        apiName: decision.apiName,
        policies: decision.policies,
        decision: decision.decision,
        reason: decision.reason,
        defaulted: decision.defaulted === true,
        latencyMicros: decision.latencyMicros,
        inputDigest: decision.inputDigest,
        rawInput: decision.rawInput,
      }),
    );
    this.decisionIds.add(decision.id);
    this.decisions.push(record);
  }

  /** Newest first (by `createdAt`, then by insertion); `since`/`until` inclusive. */
  async listDecisions(filter: DecisionFilter = {}): Promise<DecisionRecord[]> {
    this.assertOpen();
    const matches: DecisionRecord[] = [];
    for (let i = this.decisions.length - 1; i >= 0; i--) {
      const d = this.decisions[i]!;
      if (filter.operationId !== undefined && d.operationId !== filter.operationId) continue;
      if (filter.decision !== undefined && d.decision !== filter.decision) continue;
      if (filter.since !== undefined && d.createdAt < filter.since) continue;
      if (filter.until !== undefined && d.createdAt > filter.until) continue;
      if (filter.policyId !== undefined && !d.policies.some((p) => p.id === filter.policyId)) continue;
      matches.push(d);
    }
    // Walked newest-inserted first; a stable sort keeps that order among equal timestamps.
    matches.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    return copy(applyLimit(matches, filter.limit));
  }

  /**
   * Removes finished threads beyond the policy (kernel/retention.ts) with
   * their operations, messages, steps, hooks and leases, and the decisions
   * beyond the decision log's limits: the same judgement as store-sqlite, so
   * a long-lived process holds a bounded amount. Threads are judged
   * `batchSize` at a time, with the event loop turned between batches;
   * each thread's operations are looked at again when its batch runs.
   */
  async prune(policy: RetentionPolicy, options: PruneOptions = {}): Promise<PruneCounts> {
    this.assertOpen();
    const now = options.now ?? Date.now();
    const batch = Math.max(1, options.batchSize ?? DEFAULT_PRUNE_BATCH);
    const counts = emptyPruneCounts();
    // Operations past their agent's count, newest first per agent. New operations started during the pass only
    // push older ones further back, so this set stays on the safe side.
    const beyondCount = new Set<string>();
    const ranks = new Map<string, number>();
    for (const op of [...this.operations.values()].reverse()) {
      const rank = (ranks.get(op.agentId) ?? 0) + 1;
      ranks.set(op.agentId, rank);
      const max = limitsFor(policy, op.agentId).maxOperations;
      if (max !== undefined && rank > max) beyondCount.add(op.id);
    }
    const threads = [...this.threads.values()];
    for (let i = 0; i < threads.length; i += batch) {
      if (i > 0) await yieldToEventLoop();
      if (options.signal?.aborted || this.closed) break;
      // Looked at again each batch: operations may have started, parked or finished meanwhile.
      let newest: string | undefined;
      const waitedOn = new Set<string>(); // parents of unfinished operations
      for (const op of this.operations.values()) {
        newest = op.id;
        if (op.parentOperationId !== undefined && UNFINISHED_STATUSES.has(op.status)) waitedOn.add(op.parentOperationId);
      }
      for (const thread of threads.slice(i, i + batch)) {
        if (this.threads.get(thread.record.id) !== thread || !this.prunable(thread, policy, beyondCount, newest, waitedOn, now)) continue;
        this.countThread(thread, counts);
        if (!options.dryRun) this.removeThread(thread);
      }
    }
    if (!options.signal?.aborted && !this.closed) this.pruneDecisions(policy, now, options.dryRun === true, counts);
    return counts;
  }

  /** Whether the whole thread may go (kernel/retention.ts): finished, expired, nothing unfinished needs it. */
  private prunable(thread: StoredThread, policy: RetentionPolicy, beyondCount: ReadonlySet<string>, newest: string | undefined, waitedOn: ReadonlySet<string>, now: number): boolean {
    // An admitted delivery that has not settled still needs its instance.
    if (this.submissions.hasUnsettled(thread.record.id)) return false;
    if (thread.operationIds.length === 0) {
      const age = limitsFor(policy, thread.record.agentId).maxAgeMs;
      return age !== undefined && Date.parse(thread.record.updatedAt) < now - age;
    }
    for (const id of thread.operationIds) {
      const op = this.operations.get(id)!;
      if (id === newest || !TERMINAL_STATUSES.has(op.status)) return false;
      if (!isExpired(limitsFor(policy, op.agentId), op.updatedAt, beyondCount.has(id), now)) return false;
      const parent = op.parentOperationId === undefined ? undefined : this.operations.get(op.parentOperationId);
      if (parent && UNFINISHED_STATUSES.has(parent.status)) return false;
      // A child still running or parked publishes into (or is waited for by) this operation.
      if (waitedOn.has(id)) return false;
    }
    return true;
  }

  private countThread(thread: StoredThread, counts: PruneCounts): void {
    counts.threads += 1;
    counts.operations += thread.operationIds.length;
    counts.messages += thread.messages.length;
    for (const id of thread.operationIds) {
      counts.steps += this.steps.get(id)?.length ?? 0;
      counts.hooks += this.hooks.get(id)?.length ?? 0;
    }
  }

  private removeThread(thread: StoredThread): void {
    for (const m of thread.messages) this.messageIds.delete(m.id);
    for (const id of thread.operationIds) {
      this.operations.delete(id);
      this.messages.delete(id);
      this.steps.delete(id);
      this.hooks.delete(id);
      this.leases.delete(id);
      this.toolSteps.dropOperation(id);
    }
    this.submissions.dropThread(thread.record.id);
    this.threads.delete(thread.record.id);
  }

  /** Drops decisions older than the log's maxAge and beyond its newest maxEntries (listDecisions order). */
  private pruneDecisions(policy: RetentionPolicy, now: number, dryRun: boolean, counts: PruneCounts): void {
    const cutoff = decisionCutoff(policy, now);
    const maxEntries = policy.decisionLog?.maxEntries;
    if (cutoff === undefined && maxEntries === undefined) return;
    const drop = new Set<number>();
    if (cutoff !== undefined) this.decisions.forEach((d, i) => d.createdAt < cutoff && drop.add(i));
    if (maxEntries !== undefined && this.decisions.length > maxEntries) {
      // Newest first as listDecisions orders them: by createdAt, then by insertion.
      const order = this.decisions.map((_, i) => i).sort((a, b) => {
        const x = this.decisions[a]!.createdAt;
        const y = this.decisions[b]!.createdAt;
        return x < y ? 1 : x > y ? -1 : b - a;
      });
      for (const i of order.slice(maxEntries)) drop.add(i);
    }
    counts.decisions += drop.size;
    if (dryRun || drop.size === 0) return;
    const kept = this.decisions.filter((d, i) => {
      if (!drop.has(i)) return true;
      this.decisionIds.delete(d.id);
      return false;
    });
    this.decisions.splice(0, this.decisions.length, ...kept);
  }

  /** A copy of `agent`, or the shared frozen copy of a deep-frozen one. */
  private agentCopy(agent: unknown): unknown {
    if (agent === null || typeof agent !== 'object' || !isDeepFrozen(agent)) return copy(agent);
    let shared = this.agentCopies.get(agent);
    if (shared === undefined) {
      shared = deepFreeze(copy(agent));
      this.agentCopies.set(agent, shared);
    }
    return shared;
  }

  private assertOpen(): void {
    if (this.closed) throw new HookgateError('KERNEL_STOPPED', 'The memory store is closed');
  }

  /** STORE_CONFLICT when a given id is already stored or repeats within the batch. */
  private assertNewMessageIds(messages: NewMessage[]): void {
    const seen = new Set<string>();
    for (const m of messages) {
      if (m.id === undefined) continue;
      if (this.messageIds.has(m.id) || seen.has(m.id)) throw new HookgateError('STORE_CONFLICT', `Message ${m.id} already exists`);
      seen.add(m.id);
    }
  }

  /** Builds the records (copying caller data) without storing them. */
  private toMessageRecords(operationId: string, lastSeq: number, lastPosition: number, messages: NewMessage[], now: string): MessageRecord[] {
    let seq = lastSeq;
    let position = lastPosition;
    return messages.map((m) => newMessageRecord(m, m.id ?? randomUUID(), operationId, ++seq, ++position, now));
  }

  /** Appends to the operation's list and its thread's (one object in both, so a compaction mark shows in both). */
  private store(list: MessageRecord[], thread: StoredThread, records: MessageRecord[]): void {
    for (const record of records) {
      this.messageIds.add(record.id);
      list.push(record);
      thread.messages.push(record);
    }
    if (records.length > 0) thread.lastPosition = records[records.length - 1]!.position;
  }

  /** A new thread's stored form, copied; STORE_CONFLICT when the id exists. Changes nothing. */
  private toStoredThread(thread: NewThread, now: string): StoredThread {
    if (this.threads.has(thread.id)) throw new HookgateError('STORE_CONFLICT', `Thread ${thread.id} already exists`);
    const record: ThreadRecord = compact({
      id: thread.id,
      agentId: thread.agentId,
      instanceId: thread.instanceId,
      uid: thread.uid,
      initialData: copy(thread.initialData),
      values: copy(thread.values ?? {}),
      createdAt: now,
      updatedAt: now,
    });
    return { record, messages: [], lastPosition: 0, operationIds: [] };
  }

  /** THREAD_BUSY while an operation of the thread still runs or waits. */
  private assertThreadIdle(thread: StoredThread): void {
    const busy = thread.operationIds.find((id) => UNFINISHED_STATUSES.has(this.operations.get(id)!.status));
    if (busy !== undefined) {
      throw new HookgateError('THREAD_BUSY', `Thread ${thread.record.id} has an unfinished operation (${busy}); it takes a new one once that one is done, decided or aborted`, {
        details: { threadId: thread.record.id, operationId: busy },
      });
    }
  }

  private toStepRecord(operationId: string, step: NonNullable<StepCommit['step']>): StepRecord {
    return {
      operationId,
      stepIndex: step.stepIndex,
      kind: step.kind,
      startedAt: step.startedAt,
      finishedAt: step.finishedAt,
      usage: copyUsage(step.usage),
      summary: copyStepSummary(step.summary ?? {}),
    };
  }
}

/** Compare-and-swap on the state version (see StepCommit.expectedVersion); checked before any change. */
function assertVersion(op: OperationRecord, expected: number | undefined): void {
  if (expected !== undefined && op.version !== expected) {
    throw new HookgateError('STORE_VERSION_CONFLICT', `Operation ${op.id} is at version ${op.version}, not ${expected}: another writer committed first`, {
      details: { operationId: op.id, expectedVersion: expected, version: op.version },
    });
  }
}
