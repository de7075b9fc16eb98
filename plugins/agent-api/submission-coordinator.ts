import { errorMessage, HookgateError, isHookgateError } from '../../kernel/errors.js';
import type { HookDispatcher } from '../../kernel/hooks/hook-dispatcher.js';
import type { Logger } from '../../kernel/logger.js';
import type { OperationHandle } from '../../kernel/operation-handle.js';
import type { Operations } from '../../kernel/operations.js';
import { TERMINAL_STATUSES, type OperationRecord, type Store } from '../../kernel/store.js';
import { SETTLED_SUBMISSION_STATUSES, type StreamDataPart, type SubmissionRecord, type SubmissionSettlement } from '../../kernel/submissions.js';
import type { AgentDirectory } from './agent-directory.js';
import { AgentRuntimeNotStartedError } from './agent-errors.js';
import { admitDelivery, type Admitted, type DeliveryRequest } from './admission.js';
import { deliveredImages, parseDeliveredMessage, renderDeliveredMessage } from './delivered-message.js';
import { validateAgentStatics } from './agent-identity.js';
import { endedHandle, parkedHandle, sleep } from './submission-handles.js';
import { deadlineHook, operationOfSubmission, untilEnd, waitForThreadIdle } from './submission-operation.js';
import { settlementOfHost, SubmissionJoins, type LiveHost } from './submission-joining.js';
import { dataPartsOf } from './thread-state-buffer.js';
import { placedDataParts } from './conversation-data-parts.js';
import { threadHeadPosition } from './conversation-head.js';
import { errorOf, exhausted, pastDeadline, settlementOf, SUBMISSION_CONTEXT_KEY, timedOut, type EndIntent } from './submission-settlement.js';

/** What the coordinator works with: the kernel's store, operations and hooks, the runtime's agents, and the source they render from. */
export interface CoordinatorDeps {
  store: Store;
  operations: Operations;
  hooks: HookDispatcher;
  directory: AgentDirectory;
  /** The agent source every submission's operation runs from (`execAgent({ agentSource })`). */
  agentSource: string;
  logger: Logger;
}

/** Told of every settlement this coordinator records (the conversation stream's live tail listens). */
export type SettlementListener = (submission: SubmissionRecord) => void;

/**
 * Document 001's durable submission coordinator. Per instance thread, in
 * this process, one pump runs the oldest unsettled submission at a time:
 * a queued one becomes an operation (`execAgent` with the thread, the agent
 * source and the identity; prompt: the delivered message as rendered text),
 * settled from the operation's end, then the next one runs. A send to a busy
 * instance joins the live response at its next model turn
 * (submission-joining.ts) and takes its outcome; one that misses it runs as
 * its own submission after it. Before each attempt and before each step of
 * the operation the deadline (`durability.timeoutMs` from the first start)
 * is checked; attempts count against `durability.maxAttempts`. `recover()`
 * (at start) picks up what a stopped or killed process left: running
 * submissions through the core's resume (their operation goes on from its
 * last committed step; completed tools do not run again), queued ones in
 * order.
 */
export class SubmissionCoordinator {
  private readonly pumps = new Map<string, Promise<void>>();
  /** Threads that got a new submission while their pump was busy: the pump looks again before it ends. */
  private readonly pending = new Set<string>();
  private readonly waiters = new Map<string, Array<{ resolve: (record: SubmissionRecord) => void; reject: (err: unknown) => void }>>();
  /** Submissions whose operation this process ended on purpose, and why. */
  private readonly intents = new Map<string, EndIntent>();
  private readonly runningOps = new Map<string, string>();
  /** The submission each pump runs now: a pump that dies rejects its waiters instead of leaving them hanging. */
  private readonly current = new Map<string, string>();
  private stopping = false;
  private drainStarted!: () => void;
  /** Resolves when `drain()` begins: a send waiting on a parked operation stops waiting then. */
  private readonly draining = new Promise<undefined>((resolve) => (this.drainStarted = () => resolve(undefined)));

  private readonly joins: SubmissionJoins;
  /** Per thread, the submission whose operation runs here now: later sends join it at its next model turn. */
  private readonly liveHosts = new Map<string, LiveHost>();
  private readonly settlementListeners = new Set<SettlementListener>();

  constructor(private readonly deps: CoordinatorDeps) {
    this.joins = new SubmissionJoins(deps.store, deps.operations, (id, hostId) => this.settleJoinedIfHostSettled(id, hostId));
  }

  /**
   * Admits a delivery (admission.ts: validated, stored `queued` with its
   * condition and the instance, or rejected with nothing stored) and wakes
   * the instance's pump. Rejects with AgentRuntimeNotStartedError once
   * `drain()` began.
   */
  async admit(request: DeliveryRequest): Promise<Admitted> {
    if (this.stopping) throw new AgentRuntimeNotStartedError('a send');
    const admitted = await admitDelivery(this.deps, request);
    const host = this.liveHosts.get(admitted.thread.id);
    if (host && admitted.submission.status === 'queued' && host.submissionId !== admitted.submission.id) this.joins.offer(admitted.submission, host);
    this.kick(admitted.thread.id);
    return admitted;
  }

  /** Resolves with the submission once it is settled (completed, failed or aborted). */
  async settled(submissionId: string): Promise<SubmissionRecord> {
    const record = await this.deps.store.getSubmission(submissionId);
    if (!record) throw new HookgateError('STORE_NOT_FOUND', `Submission ${submissionId} does not exist`, { details: { submissionId } });
    if (SETTLED_SUBMISSION_STATUSES.has(record.status)) return record;
    return new Promise((resolve, reject) => {
      const list = this.waiters.get(submissionId) ?? [];
      list.push({ resolve, reject });
      this.waiters.set(submissionId, list);
    });
  }

  /**
   * Requests a durable abort: stamps the request on the submission, then
   * aborts its operation when one runs; a queued submission settles
   * `aborted` when its turn comes. A settled one is left as it is.
   */
  async requestAbort(submissionId: string): Promise<void> {
    const record = await this.deps.store.requestSubmissionAbort(submissionId);
    if (SETTLED_SUBMISSION_STATUSES.has(record.status)) return;
    // A joined delivery is part of its host's live response: aborting it aborts that response.
    if (record.status === 'joined' && record.joinedInto !== undefined) return this.requestAbort(record.joinedInto);
    this.intents.set(submissionId, this.intents.get(submissionId) ?? 'abort');
    const operationId = this.runningOps.get(submissionId) ?? record.operationId;
    if (operationId !== undefined) await this.abortOperation(operationId);
  }

  /** A joined submission whose host settled before the join was known (a join decided in the store, queue mode) takes the host's outcome now. */
  private async settleJoinedIfHostSettled(submissionId: string, hostId: string): Promise<void> {
    const host = await this.deps.store.getSubmission(hostId);
    const joined = await this.deps.store.getSubmission(submissionId);
    if (!host || !joined || !SETTLED_SUBMISSION_STATUSES.has(host.status) || SETTLED_SUBMISSION_STATUSES.has(joined.status)) return;
    await this.settle({ ...host, id: submissionId }, settlementOfHost(host));
  }

  /** Hears every settlement recorded here, after it is stored; returns the unsubscribe function. Listeners must not throw. */
  onSettled(listener: SettlementListener): () => void {
    this.settlementListeners.add(listener);
    return () => this.settlementListeners.delete(listener);
  }

  /** Starts the pumps of every instance with an unsettled submission (what a stopped or killed process left). */
  async recover(): Promise<void> {
    const unsettled = await this.deps.store.listSubmissions({ statuses: ['running', 'queued', 'joined'] });
    await this.joins.recover(unsettled, (s, settlement) => this.settle(s, settlement));
    for (const threadId of new Set(unsettled.map((s) => s.threadId))) this.kick(threadId);
  }

  /**
   * Refuses new sends, lets each pump finish the submission it runs (one
   * whose operation is parked for a human or a deferred result is left as
   * stored, and its waiters rejected with KERNEL_STOPPED), and resolves when
   * they are done.
   */
  async drain(): Promise<void> {
    this.stopping = true;
    this.drainStarted();
    while (this.pumps.size > 0) await Promise.allSettled([...this.pumps.values()]);
  }

  private kick(threadId: string): void {
    if (this.stopping) return;
    if (this.pumps.has(threadId)) {
      this.pending.add(threadId);
      return;
    }
    const pump = this.pump(threadId).catch((err: unknown) => {
      this.pumps.delete(threadId);
      const running = this.current.get(threadId);
      if (running !== undefined) this.rejectWaiters(running, err);
      // Leaves the submission as stored (queued or running): the next start recovers it.
      if (!this.stopping) this.deps.logger.warn('a submission pump stopped', { threadId, error: errorMessage(err) });
    });
    this.pumps.set(threadId, pump);
  }

  private async pump(threadId: string): Promise<void> {
    for (;;) {
      this.pending.delete(threadId);
      const [next] = this.stopping ? [] : await this.deps.store.listSubmissions({ threadId, statuses: ['queued', 'running'], limit: 1 });
      if (!next) {
        if (!this.stopping && this.pending.has(threadId)) continue;
        this.pumps.delete(threadId);
        return;
      }
      // A delivery being handed to the live response: once that is decided it is either joined or still queued.
      const handing = this.joins.inProgress(next.id);
      if (handing) {
        await handing.catch(() => false);
        continue;
      }
      this.current.set(threadId, next.id);
      await this.run(next);
      this.current.delete(threadId);
    }
  }

  private rejectWaiters(submissionId: string, err: unknown): void {
    const waiters = this.waiters.get(submissionId) ?? [];
    this.waiters.delete(submissionId);
    for (const waiter of waiters) waiter.reject(err);
  }

  /** Runs one submission to its settlement (or leaves it as stored when the kernel stops under it). */
  private async run(submission: SubmissionRecord): Promise<void> {
    const agent = this.deps.directory.byIdentity(submission.agentId);
    if (!agent) {
      // Nobody here can run it; it waits, as stored, for a runtime that serves its agent.
      this.deps.logger.warn('a submission waits for an agent this runtime does not serve', { submissionId: submission.id, agentId: submission.agentId });
      throw new Error(`agent ${submission.agentId} is not registered`);
    }
    let durability;
    try {
      durability = validateAgentStatics(agent, submission.agentId);
    } catch (err) {
      return void (await this.settle(submission, { status: 'failed', error: errorOf(err) }));
    }
    let operation = await operationOfSubmission(this.deps.store, submission);
    if (operation && TERMINAL_STATUSES.has(operation.status)) return this.settleFrom(submission, operation, durability.timeoutMs);
    // Checked before recovery work and before every attempt: an abort asked for, the deadline, the attempt budget.
    if (submission.abortRequestedAt !== undefined || this.intents.get(submission.id) === 'abort') {
      if (operation) await this.abortOperation(operation.id);
      return void (await this.settle(submission, { status: 'aborted', error: { message: `submission '${submission.id}' was aborted`, code: 'AGENT_RUN_FAILED', type: 'aborted' } }));
    }
    if (pastDeadline(submission, durability.timeoutMs)) {
      if (operation) await this.abortOperation(operation.id);
      return void (await this.settle(submission, timedOut(submission, durability.timeoutMs)));
    }
    if (submission.attempts >= durability.maxAttempts) {
      if (operation) await this.abortOperation(operation.id);
      return void (await this.settle(submission, exhausted(submission)));
    }
    // A delivery offered to a response in another process (queue mode) whose sender died: decided before it runs alone.
    if (!operation && submission.status === 'queued' && (await this.joins.joinedBeforeOwnRun(submission, () => this.stopping))) {
      const now = await this.deps.store.getSubmission(submission.id);
      if (now?.status === 'joined' && now.joinedInto !== undefined) await this.settleJoinedIfHostSettled(now.id, now.joinedInto);
      return;
    }
    const handle = operation ? await this.resume(submission, operation, durability.timeoutMs) : await this.start(submission, durability.timeoutMs);
    if (!handle) return;
    let final: OperationRecord | undefined;
    this.liveHosts.set(submission.threadId, { submissionId: submission.id, operationId: handle.operationId });
    try {
      final = await untilEnd(handle, this.draining);
    } catch (err) {
      if (!isHookgateError(err, 'KERNEL_STOPPED') && !isHookgateError(err, 'KERNEL_NOT_STARTED')) throw err;
    } finally {
      this.runningOps.delete(submission.id);
      this.liveHosts.delete(submission.threadId);
    }
    if (!final) {
      // Left as stored (running, its operation parked or stopped): the next start recovers it.
      this.rejectWaiters(submission.id, new HookgateError('KERNEL_STOPPED', `the runtime stopped before submission ${submission.id} settled; it stays as stored and the next start() on this store recovers it`));
      return;
    }
    const latest = (await this.deps.store.getSubmission(submission.id)) ?? submission;
    await this.settleFrom(latest, final, durability.timeoutMs);
  }

  /** A fresh attempt: the attempt counted, then the operation started on the instance thread and linked. */
  private async start(submission: SubmissionRecord, timeoutMs: number): Promise<OperationHandle | undefined> {
    const begun = await this.deps.store.beginSubmissionAttempt(submission.id);
    for (;;) {
      let handle: OperationHandle;
      const message = parseDeliveredMessage(submission.message);
      const images = deliveredImages(message);
      try {
        handle = await this.deps.operations.execAgent({
          threadId: submission.threadId,
          agentSource: this.deps.agentSource,
          agentId: submission.agentId,
          prompt: renderDeliveredMessage(message),
          ...(images !== undefined ? { promptImages: images } : {}),
          context: { [SUBMISSION_CONTEXT_KEY]: submission.id },
          // A handler runs only where steps run: in queue mode that is a worker, where this process's deadline cannot be called.
          ...(this.deps.hooks.mode === 'local' ? { hooks: [deadlineHook(begun, timeoutMs, (operationId) => this.pastDeadline(submission.id, operationId))] } : {}),
        });
      } catch (err) {
        if (isHookgateError(err, 'THREAD_BUSY')) {
          // Another operation runs on the instance (started outside the agent API): this one waits its turn.
          await waitForThreadIdle(this.deps.store, this.deps.operations, submission.threadId);
          continue;
        }
        if (isHookgateError(err, 'KERNEL_STOPPED')) return undefined;
        // Nothing was started (the agent source refused, ...): the submission fails with that error.
        await this.settle(begun, { status: 'failed', error: errorOf(err) });
        return undefined;
      }
      this.runningOps.set(submission.id, handle.operationId);
      await this.deps.store.linkSubmissionOperation(submission.id, handle.operationId);
      if (this.intents.get(submission.id) === 'abort') await this.abortOperation(handle.operationId);
      return handle;
    }
  }

  /**
   * Recovery of a running submission whose operation a stopped or killed
   * process left unfinished: the core's resume (once the dead holder's lease
   * expired), counted as a new attempt. A parked operation (waiting for a
   * human or a deferred result) is only waited for.
   */
  private async resume(submission: SubmissionRecord, operation: OperationRecord, timeoutMs: number): Promise<OperationHandle | undefined> {
    this.deps.hooks.register(operation.id, [deadlineHook(submission, timeoutMs, (operationId) => this.pastDeadline(submission.id, operationId))]);
    // A parked operation goes on when its decision or result comes (which launches its loop): it is only waited
    // for. Resuming it too would race that decision (two copies of it in this process, the tool run twice).
    if (operation.status !== 'running') return parkedHandle(this.deps.operations, operation.id);
    for (;;) {
      try {
        const handle = await this.deps.operations.resume(operation.id);
        await this.deps.store.beginSubmissionAttempt(submission.id);
        this.runningOps.set(submission.id, operation.id);
        return handle;
      } catch (err) {
        if (isHookgateError(err, 'KERNEL_STOPPED')) return undefined;
        if (!isHookgateError(err, 'OPERATION_LEASED')) throw err;
      }
      // The dead process's lease holds until it expires; a live holder renews it and finishes the operation itself.
      const lease = await this.deps.store.getLease(operation.id);
      await sleep(Math.min(5_000, Math.max(25, (lease?.expiresAt ?? 0) - Date.now() + 10)));
      if (this.stopping) return undefined;
      const now = await this.deps.store.getOperation(operation.id);
      if (now && TERMINAL_STATUSES.has(now.status)) return endedHandle(now);
    }
  }

  /** The deadline hook saw a model turn past the deadline: the operation is aborted, and the submission will fail with a timeout. */
  private pastDeadline(submissionId: string, operationId: string): void {
    if (this.intents.has(submissionId)) return;
    this.intents.set(submissionId, 'timeout');
    void this.abortOperation(operationId);
  }

  private async settleFrom(submission: SubmissionRecord, operation: OperationRecord, timeoutMs: number): Promise<void> {
    const values = (await this.deps.store.getThread(operation.threadId))?.values;
    const data = operation.status === 'done' ? dataPartsOf(values, operation.id) : {};
    await this.settle(submission, settlementOf(operation, submission, this.intents.get(submission.id), timeoutMs, data), values);
  }

  /**
   * Records the settlement (the first one wins) and tells the waiters.
   * `values` (the thread's, read after the operation ended) give the data
   * parts the stream keeps with the settlement.
   */
  private async settle(submission: SubmissionRecord, settlement: SubmissionSettlement, values?: Readonly<Record<string, unknown>>): Promise<void> {
    const { settled, submission: record } = await this.deps.store.settleSubmission(submission.id, await this.positioned(submission, settlement, values));
    if (settled) for (const listener of this.settlementListeners) listener(record);
    // The deliveries that joined this response take its outcome.
    for (const joined of this.joins.joinedTo(submission.id)) await this.settle({ ...record, id: joined }, settlementOfHost(record));
    this.joins.forget(submission.id);
    this.intents.delete(submission.id);
    const waiters = this.waiters.get(submission.id) ?? [];
    this.waiters.delete(submission.id);
    for (const waiter of waiters) waiter.resolve(record);
  }

  /**
   * The settlement with its conversation-stream position: after the last
   * message of the submission's operation (a joined delivery's is its
   * host's), or the thread's newest message when it stored none.
   */
  private async positioned(submission: SubmissionRecord, settlement: SubmissionSettlement, values?: Readonly<Record<string, unknown>>): Promise<SubmissionSettlement> {
    let position = -1;
    let streamData: StreamDataPart[] = [];
    if (submission.operationId !== undefined) {
      const messages = await this.deps.store.listMessages(submission.operationId, { includeCompacted: true });
      if (messages.length > 0) position = messages[messages.length - 1]!.position;
      streamData = placedDataParts(values, messages, submission.operationId);
    }
    if (position < 0) position = await threadHeadPosition(this.deps.store, submission.threadId);
    const streamPosition = Math.max(0, position);
    // A joined delivery's settlement is its host's: the host's record keeps the parts, once.
    const placed = streamData.length > 0 ? { streamData } : {};
    if (settlement.status === 'completed') {
      const { streamData: _host, ...result } = settlement.result ?? { text: '' };
      return { ...settlement, result: { ...result, streamPosition, ...placed } };
    }
    const { streamData: _host, ...error } = settlement.error ?? { message: `submission '${submission.id}' ${settlement.status}` };
    return { ...settlement, error: { ...error, streamPosition, ...placed } };
  }

  private async abortOperation(operationId: string): Promise<void> {
    try {
      await this.deps.operations.abort(operationId);
    } catch (err) {
      if (!isHookgateError(err, 'KERNEL_STOPPED')) this.deps.logger.warn('could not abort a submission operation', { operationId, error: errorMessage(err) });
    }
  }
}
