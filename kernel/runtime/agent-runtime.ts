import { AsyncLocalStorage } from 'node:async_hooks';
import { checkMessageImages } from '../message-images.js';
import { nowIso } from '../clock.js';
import { timeOrderedId } from '../time-ordered-id.js';
import { copyRecord, copyState } from './copy-state.js';
import { deepFreeze, type AgentDefinition } from '../agent-definition.js';
import { HookgateError, errorMessage } from '../errors.js';
import type { AgentHook, HookEventMap, StepKind, TerminalReason } from '../hooks/hook-types.js';
import { ZERO_USAGE, addUsage, type MessageImage, type ToolCall, type ToolResult } from '../messages.js';
import { TERMINAL_STATUSES, type MessageRecord, type OperationRecord, type OperationState, type StepCommit } from '../store.js';
import { activeMessages, type RunningOperation } from './running-operation.js';
import { decideNextStep, type NextStep } from './next-step.js';
import { admitToolCalls, readmitLegacyState } from './tool-call-gate.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { agentAtStart, agentSourceOf, readStepAgent } from './agent-source-step.js';
import { sourceFinishing, sourceSettled, sourceStartCommit, takeThreadValues, type ClosingWrites } from './agent-source-lifecycle.js';
import type { OperationDriver } from './operation-driver.js';
import { InProcessDriver } from './in-process-driver.js';
import type { QueuedStep, QueuedStepOutcome, StepQueue } from '../step-queue.js';
import { PARENT_TOOL_CALL_KEY, type ExecAgentOptions, type HumanDecision } from './exec-agent-options.js';
import { baseEvent, dispatchHook } from './operation-dispatch.js';
import { acquireTurn, inTurn, releaseTurn } from './operation-turn.js';
import { isSettled, OperationWaiters } from './operation-waiters.js';
import { announceDecision, decisionCommit, decisionTargets } from './human-decision.js';
import { threadContinuation } from './thread-continuation.js';
import { STATIC_AGENT_SOURCE_ID } from './agent-source.js';
import { publishDeferred, type PreparedCompletion } from './tool-result-publication.js';
import { rebaseOnPublications, takePublications } from './publication-rebase.js';
import type { StepDraft, StepServices } from './step-executor.js';
import { STEP_EXECUTORS } from './step-executors.js';
import { dropTurnDeliveries } from './turn-inbox.js';
import { deliverThroughStore } from './stored-turn-inbox.js';
import { defaultThreadId, type NewMessage } from '../store.js';
import { queuedToolRunOptions, takeQueuedToolCalls } from './queued-tool-calls.js';
import { refuseHooksWorkersLack } from './queue-admission-hooks.js';
import { afterCommitMessages, beforeCommitMessages, openThreadHooks, threadHookHost, type ThreadHookWrites } from './thread-hook-writes.js';

export type { ExecAgentOptions, HumanDecision } from './exec-agent-options.js';
export { PARENT_TOOL_CALL_KEY } from './exec-agent-options.js';

const TERMINAL = TERMINAL_STATUSES;

/** The operations whose decision, resume, completion or abort the current async context is applying (`oneAtATime`). */
const applyingHere = new AsyncLocalStorage<ReadonlySet<string>>();

/** How often one step's commit is rebased on concurrent publications before it counts as stale. */
const MAX_REBASES = 8;

/** How often an abort of an operation run elsewhere tries again after a racing commit or renewal. */
const MAX_ABORT_ATTEMPTS = 20;

/** A short, growing pause between abort attempts: the runner's in-flight step commits or notices the seized lease. */
function abortBackoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(200, 10 * attempt)));
}

/**
 * The orchestrator of the step loop. An operation is a sequence of steps,
 * each a transition over persisted state: decide the next step from the
 * state (next-step.ts), dispatch beforeStep, let the step kind's executor
 * (step-executors.ts) draft one commit, commit it with compare-and-swap on
 * the state version, run the step's effects, dispatch afterStep. The loop
 * runs only while this process holds the operation's lease (the driver); it
 * parks when a human or a deferred result must come, and finishes with a
 * terminal reason. Decisions, deferred completions and aborts are the other
 * writers, each one commit under the operation's turn.
 */
export class AgentRuntime {
  private readonly running = new Map<string, RunningOperation>();
  private readonly loading = new Map<string, Promise<RunningOperation>>();
  /** The decision, resume or deferred completion of each operation this process applies now, the last in line (`oneAtATime`). */
  private readonly applying = new Map<string, Promise<void>>();
  private readonly waiters: OperationWaiters;
  private readonly services: StepServices;
  /** Set by `shutdown`: loops stop where they are and nothing is finished or persisted as terminal. */
  private stopping = false;
  /** The takeover watch (`runtime.takeOver: watch`). */
  private takeOverTimer: NodeJS.Timeout | undefined;
  /** Operations a takeover could not load here (an agent source this process lacks): warned about once. */
  private readonly notTakenOver = new Set<string>();

  /** Who runs what: an operation's loop runs only while this process holds its lease (see OperationDriver). */
  readonly driver: OperationDriver;

  /**
   * Queue mode: with a step queue, no loop starts on admission, decision or
   * completion; the operation's next step is enqueued instead and a worker
   * runs it (`runQueuedStep`), one step per job.
   */
  private readonly queue: StepQueue | undefined;

  constructor(private readonly deps: RuntimeDeps, driver?: OperationDriver, queue?: StepQueue) {
    this.queue = queue;
    this.driver = driver ?? new InProcessDriver(deps.store, deps.logger);
    this.waiters = new OperationWaiters(deps.store, deps.logger, (id) => {
      const op = this.running.get(id);
      return op?.loopActive === true || op?.finishing === true;
    });
    this.services = {
      deps,
      startOperation: (options) => this.start(options),
      threadHookHost: async (operationId) => threadHookHost(this.deps, await this.get(operationId), [], this.hookWrites),
      ...(queue ? { mayStartTool: (op: RunningOperation) => this.mayStartTool(op) } : {}),
    };
  }

  /**
   * Creates and persists the operation, then runs it in the background. Resolves once persisted.
   * `queued`: tool calls a thread hook queued on the (idle) thread: the run's first message is the
   * assistant message holding them (not the prompt), and they are its first pending calls.
   */
  async start(options: ExecAgentOptions, queued?: readonly ToolCall[]): Promise<string> {
    if (this.stopping) throw new HookgateError('KERNEL_STOPPED', 'the kernel is stopping; no new operation can start');
    const images = checkMessageImages(options.promptImages, 'promptImages');
    // Time-ordered: a new operation's id goes at the right edge of the store's id index.
    const operationId = `op_${timeOrderedId()}`;
    // The definition stored with the operation (validated; asked of its agent source unless static) and its context.
    const { agent, context } = await agentAtStart(this.deps, options, operationId);
    const userId = options.userId ?? options.origin?.userId;
    const counters = options.threadId === undefined ? { modelTurns: 0, compactions: 0 } : await threadContinuation(this.deps.store, options.threadId, agent.id, options.agentSource ?? STATIC_AGENT_SOURCE_ID);
    // Validate hooks before anything is stored; queue mode refuses the ones its workers cannot run.
    if (this.queue) refuseHooksWorkersLack(options);
    this.deps.dispatcher.register(operationId, options.hooks ?? []);
    const state: OperationState = { stepIndex: 0, usage: { ...ZERO_USAGE }, pendingToolCalls: [], approvedToolCallIds: [], ...counters };
    // Queued calls are admitted again for this run's agent: a fresh identity each, arguments checked by its tools' schemas.
    const queuedCalls = queued === undefined ? undefined : admitToolCalls(this.deps, agent, queued.map((c) => ({ id: '', identifier: c.identifier, apiName: c.apiName, args: c.args })));
    if (queuedCalls !== undefined) state.pendingToolCalls = queuedCalls;
    const selection = threadHookSelection(options);
    if (selection !== undefined) state.threadHooks = selection;
    const promptMessage: NewMessage =
      queuedCalls !== undefined ? { role: 'assistant', content: '', toolCalls: queuedCalls } : images === undefined ? { role: 'user', content: options.prompt } : { role: 'user', content: options.prompt, images };
    // Thread hooks are opened before anything is stored (a bad or missing hook stores nothing), on the record to be.
    const provisional = provisionalRecord(operationId, agent, context, state, options, userId);
    const op = this.track(provisional, agent, [], [], options, false);
    openThreadHooks(this.deps, op, options.threadHooks ?? [], this.hookWrites);
    if (op.threadHooksProblem !== undefined) {
      this.deps.dispatcher.unregister(operationId);
      throw op.threadHooksProblem;
    }
    // The sent message's before_create_message runs before it is stored; a throw prevents it (message_hook_error below).
    let firstMessages: NewMessage[] = [promptMessage];
    let prevented: unknown;
    if (op.threadHooks !== undefined) {
      try {
        firstMessages = [await op.threadHooks.beforeCreateMessage(promptMessage, 'prompt')];
      } catch (err) {
        prevented = err;
        firstMessages = [];
      }
    }
    let record: OperationRecord;
    try {
      record = await this.deps.store.createOperation(
        {
          id: operationId,
          agentId: agent.id,
          ...(options.threadId !== undefined ? { threadId: options.threadId } : {}),
          parentOperationId: options.parentOperationId,
          userId,
          agent,
          context,
          state,
          // Created claimed by this process: the loop's first claim costs no write of its own (queue mode: a worker claims it).
          ...(this.queue ? {} : { lease: this.driver.leaseRequest() }),
        },
        firstMessages,
        this.deps.dispatcher.getSerializedHooks(operationId) ?? [],
      );
    } catch (err) {
      this.deps.dispatcher.unregister(operationId);
      op.threadHooks?.close();
      throw err;
    }
    if (!this.queue) this.driver.adopt(operationId);
    // The thread's history and the new prompt, read once: the step loop keeps it up to date from its own commits.
    const messages = await this.deps.store.listThreadMessages(record.threadId);
    op.record = record;
    op.messages = activeMessages(messages);
    // Sub-agents inherit the registered snapshots, never the caller's (mutable) objects.
    op.hooks = this.deps.dispatcher.getRegisteredHooks(operationId);
    this.running.set(operationId, op);
    this.deps.events.emit({ type: 'operation_started', operationId, agentId: agent.id, parentOperationId: options.parentOperationId });
    if (op.threadHooks !== undefined) {
      if (options.threadId === undefined) await op.threadHooks.afterThreadCreated();
      if (prevented !== undefined) {
        // A sent message (or a queued tool call's) a hook prevented: nothing stored, no turn, the run fails (document 003 "Error Handling").
        const what = queuedCalls !== undefined ? 'the tool call queued on the idle thread' : 'the sent message';
        await this.finish(op, 'message_hook_error', { message: `a before_create_message hook prevented ${what}: ${errorMessage(prevented)}`, code: 'MESSAGE_HOOK_ERROR' });
        await this.driver.release(operationId);
        return operationId;
      }
      const stored = messages.at(-1);
      if (stored !== undefined) await op.threadHooks.afterCreateMessage(stored);
    }
    // Queue mode: admitted once its first step is enqueued (a queue that is down rejects here; the operation stays
    // stored as running and a worker's sweep enqueues it later).
    if (this.queue) await this.handToQueue(op);
    else this.launch(op);
    return operationId;
  }

  /**
   * Applies a human decision to a parked operation (also after a restart) and
   * resumes it. Decisions, resumes and deferred completions of one operation
   * take turns in this process (`oneAtATime`): the next one starts once the
   * previous one's commit is acknowledged and its loop launched, so none of
   * them reads the decision's commit before the decision has heard back and
   * loads a second copy of the operation that would run the approved tool
   * again.
   */
  async decide(operationId: string, decision: HumanDecision): Promise<void> {
    return this.oneAtATime(operationId, async () => {
      const op = await this.claimed(operationId);
      try {
        await this.decideClaimed(op, decision);
      } finally {
        if (!op.loopActive) await this.driver.release(operationId);
      }
    });
  }

  /**
   * Runs `fn` after the decisions, resumes and completions of the operation
   * this process started before it (arrival order), and before later ones.
   */
  private async oneAtATime<T>(operationId: string, fn: () => Promise<T>): Promise<T> {
    const outer = applyingHere.getStore();
    // Called from inside the change being applied (a decision's observer aborting it): not queued behind itself.
    if (outer?.has(operationId)) return fn();
    const inner = new Set(outer).add(operationId);
    const guarded = () => applyingHere.run(inner, fn);
    const before = this.applying.get(operationId);
    const run = before === undefined ? guarded() : before.then(guarded);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.applying.set(operationId, tail);
    try {
      return await run;
    } finally {
      if (this.applying.get(operationId) === tail) this.applying.delete(operationId);
    }
  }

  private async decideClaimed(op: RunningOperation, decision: HumanDecision): Promise<void> {
    const operationId = op.record.id;
    const { approval, targets } = decisionTargets(op, decision);
    // One decision at a time per operation in this process (a second concurrent one is refused above);
    // across processes the decision's commit is a compare-and-swap on the state version, so exactly one wins.
    op.deciding = true;
    let commit: StepCommit | undefined;
    try {
      // Drafted in the operation's turn, against the version the commit swaps on.
      commit = await inTurn(op, async () => {
        const drafted = decisionCommit(op, decision, approval, targets);
        await this.commit(op, drafted);
        return drafted;
      });
    } catch (err) {
      if (!isVersionConflict(err)) throw err;
      // Nothing was written: the other decision (or a run elsewhere) stands. Forget the stale copy.
      if (!op.loopActive) this.running.delete(operationId);
      throw new HookgateError('OPERATION_NOT_WAITING', `operation ${operationId} was decided or changed by another process first; this decision changed nothing`, {
        cause: err,
        details: { operationId },
      });
    } finally {
      op.deciding = false;
    }
    try {
      await announceDecision(this.deps, op, decision);
    } catch (err) {
      // Persisted hooks that cannot be restored (or a critical delivery failure) fail the
      // operation, as they do inside the step loop: it never goes on without its policy.
      await this.fail(op, err);
      return;
    }
    if (decision.action === 'reject') await this.finish(op, 'interrupted');
    // A deferred result published while the observers ran may have launched the loop already (and it may have
    // ended since): one loop per operation, and none for an operation that ended.
    else if (commit.status === 'running') {
      if (!op.loopActive && op.record.status === 'running' && !op.stale) this.launch(op);
    }
    else this.waiters.notify(op.record);
  }

  /**
   * Aborts a running or parked operation and the sub-agent operations it
   * started; each ends with reason `interrupted`, exactly once. A loop in
   * this process ends it itself at its next turn boundary. Otherwise (parked,
   * left by a stopped process, or run by another process or a queue worker)
   * the abort seizes the operation's lease, so the runner starts no further
   * tool and stops at its next renewal, then commits the end by
   * compare-and-swap; a step the runner committed meanwhile makes it read the
   * operation again and try once more (OPERATION_NOT_WAITING only after
   * MAX_ABORT_ATTEMPTS). Resolves once the end is stored (or the operation
   * had already ended).
   */
  async abort(operationId: string): Promise<void> {
    // A decision, resume or completion being applied here is told at once (its loop, once launched, stops before its
    // first step), and the abort is applied after it, to the copy it leaves: never to a second copy read meanwhile.
    if (this.applying.has(operationId)) this.running.get(operationId)?.abort.abort();
    return this.oneAtATime(operationId, () => this.abortNow(operationId));
  }

  private async abortNow(operationId: string): Promise<void> {
    const live = this.running.get(operationId);
    if (live?.loopActive) {
      if (TERMINAL.has(live.record.status)) return;
      live.abort.abort();
      await this.abortChildren(operationId);
      return;
    }
    const stored = await this.deps.store.getOperation(operationId);
    if (!stored) throw new HookgateError('OPERATION_NOT_FOUND', `no operation has id ${operationId}`, { details: { operationId } });
    if (TERMINAL.has(stored.status)) return;
    live?.abort.abort();
    await this.abortChildren(operationId);
    await this.abortHeldElsewhere(operationId);
  }

  /** Children running here, and unfinished ones a stopped or crashed process (or a worker) runs or left behind. */
  private async abortChildren(operationId: string): Promise<void> {
    const children = new Set([...this.running.values()].filter((c) => c.record.parentOperationId === operationId).map((c) => c.record.id));
    for (const child of await this.deps.store.listOperations({ parentOperationId: operationId })) if (!TERMINAL.has(child.status)) children.add(child.id);
    for (const child of children) await this.abort(child);
  }

  /**
   * The end of an operation no loop of this process runs: the lease seized
   * first (held through every attempt, so no runner claims it in between),
   * then the end committed by compare-and-swap, read again after a racing commit.
   */
  private async abortHeldElsewhere(operationId: string): Promise<void> {
    let stored: OperationRecord | undefined;
    for (let attempt = 1; stored === undefined; attempt++) {
      try {
        stored = await this.driver.seize(operationId);
      } catch (err) {
        // The holder renewed between the read and the conditional claim: read again.
        if (!isLeased(err) || attempt >= MAX_ABORT_ATTEMPTS) throw err;
        await abortBackoff(attempt);
      }
    }
    try {
      for (let attempt = 1; ; attempt++) {
        if (TERMINAL.has(stored.status)) return;
        // A loop that started here meanwhile (a completion launched it) ends itself.
        const here = this.running.get(operationId);
        if (here?.loopActive) {
          here.abort.abort();
          return;
        }
        let op = await this.get(operationId);
        if (op.record.version !== stored.version) {
          // A copy from before the runner moved the operation on: read again (a copy holding a caller's handlers is kept).
          if (op.fromStore) {
            if (this.running.get(operationId) === op) this.running.delete(operationId);
            op = await this.get(operationId);
          } else op.record = stored;
        }
        op.abort.abort();
        try {
          await this.finish(op, 'interrupted', undefined, op.record.version);
          return;
        } catch (err) {
          // The runner committed the step it was in (its tool started before the seizure): end it after that step.
          if (!(err instanceof HookgateError && err.code === 'OPERATION_NOT_WAITING') || attempt >= MAX_ABORT_ATTEMPTS) throw err;
        }
        await abortBackoff(attempt);
        const again = await this.deps.store.getOperation(operationId);
        if (!again) return;
        stored = again;
      }
    } finally {
      // Held only for the end: a loop that started here meanwhile keeps its lease (it releases it when it ends).
      if (!this.running.get(operationId)?.loopActive) await this.driver.release(operationId);
    }
  }

  /** Queue mode, right before a tool starts: the lease renewed now, or the step cancelled (an abort seized it). */
  private async mayStartTool(op: RunningOperation): Promise<boolean> {
    if (await this.driver.confirm(op.record.id)) return true;
    this.loseLease(op, (await this.deps.store.getLease(op.record.id).catch(() => undefined))?.owner);
    return false;
  }

  /**
   * Queues a user message to join the operation at its next model turn, in
   * that step's commit (under `id`). Resolves true once that commit is
   * stored; false at once when no loop of the operation runs in this
   * process, or later when the loop ends first (finish, park, stop).
   */
  deliverAtNextTurn(operationId: string, message: { id: string; content: string; images?: readonly MessageImage[] }): Promise<boolean> {
    let images: readonly MessageImage[] | undefined;
    try {
      images = checkMessageImages(message.images, 'images');
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.stopping) return Promise.resolve(false);
    // Queue mode: each step may run in another worker, so the message waits in the store for the next model turn.
    if (this.queue) {
      const delivery = images === undefined ? { id: message.id, content: message.content } : { id: message.id, content: message.content, images };
      return deliverThroughStore(this.deps.store, this.deps.events, operationId, delivery, () => this.stopping);
    }
    const op = this.running.get(operationId);
    if (!op?.loopActive || op.stale || op.finishing || TERMINAL.has(op.record.status)) return Promise.resolve(false);
    return new Promise((resolve) => (op.inbox ??= []).push(images === undefined ? { id: message.id, content: message.content, resolve } : { id: message.id, content: message.content, images, resolve }));
  }

  /** Resolves when the operation is parked or terminal (`settled`) or only when terminal. */
  async wait(operationId: string, until: 'settled' | 'terminal'): Promise<OperationRecord> {
    const live = this.running.get(operationId);
    // A copy this process does not run may be out of date: the store says how it stands.
    const record = live?.loopActive ? live.record : ((await this.deps.store.getOperation(operationId)) ?? live?.record);
    if (!record) throw new HookgateError('OPERATION_NOT_FOUND', `no operation has id ${operationId}`, { details: { operationId } });
    // A parent waiting for deferred results is woken by its children's completion (here, or once they are loaded here).
    if (isSettled(record, until)) return copyRecord(record);
    // Not run here: wait on the store while another process holds its lease; otherwise nobody runs it (as it is).
    const elsewhere = !live?.loopActive && (await this.runElsewhere(operationId));
    // Queue mode: a running operation is run by whichever worker takes its next step, so it is waited on in the store.
    if (!live && !elsewhere && record.status !== 'waiting_tool' && !(this.queue && record.status === 'running')) return copyRecord(record);
    const settled = this.waiters.add(operationId, until);
    // Not run here (parked, or run elsewhere): whoever moves it on may be another process, so the store is read.
    if (!live?.loopActive) this.waiters.watch(operationId);
    return settled;
  }

  /** Continues an operation left `running` by a stopped process, from its persisted state. */
  async resume(operationId: string, options: { force?: boolean } = {}): Promise<void> {
    return this.oneAtATime(operationId, async () => {
      // A parked or ended operation is not claimed: a decision or result moves a parked one on (a claim here would
      // only keep that decision's process from claiming it), and resuming one is waiting for it.
      if (this.running.get(operationId)?.loopActive) return;
      const stored = await this.deps.store.getOperation(operationId);
      if (stored === undefined) throw new HookgateError('OPERATION_NOT_FOUND', `no operation has id ${operationId}`, { details: { operationId } });
      if (stored.status !== 'running') return;
      const op = await this.claimed(operationId, options);
      if (op.record.status === 'running' && !op.loopActive) this.launch(op);
      else if (!op.loopActive) await this.driver.release(operationId);
    });
  }

  /**
   * Takes over the operations left `running` whose lease expired or was
   * released (their process died or stopped): each is claimed, never forced,
   * and continued from its last committed step. One that another live
   * process renews is left to it, and so is one a faster process claims
   * first; parked operations wait for their decision or result. Resolves the
   * ids this process took over.
   */
  async takeOverAbandoned(): Promise<string[]> {
    const taken: string[] = [];
    for (const record of await this.deps.store.listOperations({ status: 'running' })) {
      if (this.stopping) break;
      if (this.running.get(record.id)?.loopActive) continue;
      const lease = await this.deps.store.getLease(record.id);
      if (lease !== undefined && lease.expiresAt > Date.now()) continue;
      if (this.queue) {
        // Queue mode: a step whose job was lost (a worker killed between its commit and its enqueue, a queue that was
        // down at admission) is enqueued again, never claimed here: the job id makes this a no-op when the job exists.
        if (await this.enqueueSafely({ operationId: record.id, version: record.version })) taken.push(record.id);
        continue;
      }
      try {
        await this.resume(record.id);
        taken.push(record.id);
        this.deps.logger.info('took over an abandoned operation', { operationId: record.id, ...(lease ? { previousOwner: lease.owner } : {}) });
      } catch (err) {
        if (isLeased(err) || this.notTakenOver.has(record.id)) continue;
        this.notTakenOver.add(record.id);
        this.deps.logger.warn('could not take over an abandoned operation', { operationId: record.id, error: errorMessage(err) });
      }
    }
    return taken;
  }

  /** Runs `takeOverAbandoned` now and, with `everyMs`, again every `everyMs` (a timer that keeps no process alive) until shutdown. */
  startTakeOver(everyMs?: number): Promise<string[]> {
    if (everyMs !== undefined && !this.takeOverTimer) {
      this.takeOverTimer = setInterval(() => {
        this.takeOverAbandoned().catch((err: unknown) => this.deps.logger.warn('the takeover scan failed', { error: errorMessage(err) }));
      }, everyMs);
      this.takeOverTimer.unref();
    }
    return this.takeOverAbandoned();
  }

  /**
   * The operation, claimed for this process (OPERATION_LEASED while another
   * process holds an unexpired lease, unless `force`), as stored at the claim:
   * a copy this process kept from before another process moved the operation
   * on is dropped and read again.
   */
  private async claimed(operationId: string, options: { force?: boolean } = {}): Promise<RunningOperation> {
    const op = await this.get(operationId);
    if (op.loopActive) return op;
    let stored: OperationRecord;
    try {
      stored = await this.driver.claim(operationId, options);
    } catch (err) {
      // Refused (another process runs it): a copy loaded only for this claim would go out of date as that process
      // moves the operation on, so it is not kept (a copy holding a caller's handlers is: it has no other source).
      if (op.fromStore && this.running.get(operationId) === op) this.running.delete(operationId);
      throw err;
    }
    if (stored.version === op.record.version) return op;
    if (this.running.get(operationId) === op) this.running.delete(operationId);
    return this.get(operationId);
  }

  /**
   * Stops every loop (kernel stop). Operations stay persisted as they are
   * (`running` ones can be resumed by another process, parked ones decided);
   * no onComplete fires. Pending `wait` calls reject with KERNEL_STOPPED.
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.takeOverTimer) clearInterval(this.takeOverTimer);
    const loops = [...this.running.values()].map((op) => {
      op.abort.abort();
      return op.loop;
    });
    await Promise.allSettled(loops);
    // Released, not left to expire: another process can take a `running` operation over at once.
    await this.driver.shutdown();
    this.waiters.rejectAll();
    this.running.clear();
  }

  /**
   * Queue mode, in a worker: runs the one step of `step`'s job. Claims the
   * operation's lease (`later`, at the holder's expiry, while another process
   * holds it); a job whose version is no longer the stored one, or whose
   * operation parked or finished, runs nothing (`skipped`) and makes sure
   * the current version's job exists (a worker killed between a commit and
   * its enqueue left none). Otherwise one loop iteration runs here (a step,
   * a park or the finish, committed with compare-and-swap), the lease is
   * released, and a still running operation's next step is enqueued. Rejects
   * on an unexpected failure (the queue retries the job); a failing step
   * fails its operation as in-process.
   */
  async runQueuedStep(step: QueuedStep): Promise<QueuedStepOutcome> {
    const queue = this.queue;
    if (!queue) throw new HookgateError('QUEUE_NOT_CONFIGURED', 'this runtime has no step queue (set execution: queue)');
    const { operationId, version } = step;
    const here = this.running.get(operationId);
    // Handed back: a stopping worker runs nothing new, and one operation's loop runs once per process.
    if (this.stopping || here?.loopActive) return { kind: 'later', at: Date.now() + Math.max(50, Math.floor(this.driver.leaseMs / 10)) };
    let stored: OperationRecord;
    try {
      stored = await this.driver.claim(operationId);
    } catch (err) {
      if (isLeased(err)) return { kind: 'later', at: (Date.parse(String((err as HookgateError).details.expiresAt)) || Date.now()) + 10 };
      if (err instanceof HookgateError && err.code === 'STORE_NOT_FOUND') return { kind: 'skipped' };
      throw err;
    }
    // A copy kept from an earlier step is out of date unless it is at the stored version.
    if (here && here.record.version !== stored.version) this.running.delete(operationId);
    if (stored.version !== version || stored.status !== 'running') {
      await this.driver.release(operationId);
      if (stored.status === 'running' && stored.version > version) await queue.enqueue({ operationId, version: stored.version });
      return { kind: 'skipped' };
    }
    let op: RunningOperation;
    try {
      op = await this.get(operationId);
    } catch (err) {
      await this.driver.release(operationId);
      throw err;
    }
    const run: NonNullable<RunningOperation['queuedRun']> = { steps: 0 };
    op.queuedRun = run;
    this.launch(op);
    await op.loop;
    op.queuedRun = undefined;
    // Not kept: the next step may run in another worker, so this copy goes out of date.
    if (this.running.get(operationId) === op && !op.loopActive) this.running.delete(operationId);
    // The store went away mid-step: the job is retried (the queue's backoff) and runs the step again from the last commit.
    if (run.storeDown !== undefined) {
      if (this.running.get(operationId) === op) this.running.delete(operationId);
      throw run.storeDown;
    }
    if (!op.stale && op.record.status === 'running') await queue.enqueue({ operationId, version: op.record.version });
    return { kind: 'ran' };
  }

  /**
   * Queue mode: the operation's next step goes to the queue instead of a loop
   * here. The copy is dropped (a worker moves the operation on) and so are
   * in-memory hook registrations (workers deliver the persisted webhooks);
   * the lease is released first, so the worker that takes the job can claim
   * it at once. Rejects with the queue's error (logged).
   */
  private async handToQueue(op: RunningOperation): Promise<void> {
    const step = { operationId: op.record.id, version: op.record.version };
    if (this.running.get(step.operationId) === op) this.running.delete(step.operationId);
    this.deps.dispatcher.unregister(step.operationId);
    await this.driver.release(step.operationId);
    try {
      await this.queue!.enqueue(step);
    } catch (err) {
      this.deps.logger.error('could not enqueue the next step of an operation; a worker\'s sweep enqueues it later', { ...step, error: errorMessage(err) });
      throw err;
    }
  }

  /** `enqueue` for the takeover sweep: false (logged) when the queue refused. */
  private async enqueueSafely(step: QueuedStep): Promise<boolean> {
    try {
      await this.queue!.enqueue(step);
      return true;
    } catch (err) {
      this.deps.logger.warn('the sweep could not enqueue an operation\'s step', { ...step, error: errorMessage(err) });
      return false;
    }
  }

  /** Whether another process holds an unexpired lease on the operation. */
  private async runElsewhere(operationId: string): Promise<boolean> {
    const lease = await this.deps.store.getLease(operationId);
    return lease !== undefined && lease.owner !== this.driver.owner && lease.expiresAt > Date.now();
  }

  private track(record: OperationRecord, agent: AgentDefinition, messages: MessageRecord[], hooks: readonly AgentHook[], options: Partial<ExecAgentOptions>, keep = true): RunningOperation {
    const op: RunningOperation = {
      record,
      agent,
      messages: activeMessages(messages),
      abort: new AbortController(),
      hooks,
      run: {
        operationId: record.id,
        agentId: record.agentId,
        parentOperationId: record.parentOperationId,
        runtime: { userId: options.userId ?? record.userId },
        origin: options.origin,
        associations: record.context,
      },
    };
    // Terminal operations are read, never kept: only live ones stay in memory.
    if (keep && !TERMINAL.has(record.status)) this.running.set(record.id, op);
    return op;
  }

  /** The operation as loaded in this process; concurrent callers share one load. */
  private async get(operationId: string): Promise<RunningOperation> {
    const live = this.running.get(operationId);
    if (live) return live;
    let pending = this.loading.get(operationId);
    if (!pending) {
      pending = this.load(operationId).finally(() => this.loading.delete(operationId));
      this.loading.set(operationId, pending);
    }
    return pending;
  }

  private async load(operationId: string): Promise<RunningOperation> {
    const record = await this.deps.store.getOperation(operationId);
    if (!record) throw new HookgateError('OPERATION_NOT_FOUND', `no operation has id ${operationId}`, { details: { operationId } });
    // The whole thread, read once at load (a thread runs one operation at a time, so this one is its newest).
    const messages = await this.deps.store.listThreadMessages(record.threadId);
    // Handlers do not survive a restart. Persisted webhook hooks are read where they are used
    // (dispatch, sub-agent start), so a damaged list fails the operation there instead of here.
    const agent = deepFreeze(record.agent as AgentDefinition);
    // A source this kernel lacks leaves the operation as stored (AGENT_SOURCE_NOT_FOUND) for a process that has it.
    agentSourceOf(this.deps, record);
    record.state = readmitLegacyState(this.deps, agent, record.state);
    const op = this.track(record, agent, messages, [], {});
    op.fromStore = true;
    // Hooks are code: resolved again here from the ids the operation stored (a missing one fails it in its loop).
    if (!TERMINAL.has(record.status)) openThreadHooks(this.deps, op, [], this.hookWrites);
    return op;
  }

  private launch(op: RunningOperation): void {
    if (this.queue && op.queuedRun === undefined) {
      void this.handToQueue(op).catch(() => undefined);
      return;
    }
    const loop = {};
    op.loopActive = true;
    op.loopToken = loop;
    op.loop = this.loop(op)
      .catch((err) => this.fail(op, err))
      .finally(() => {
        // A loop launched after this one parked (by a completion) keeps its own flag, and the lease.
        if (op.loopToken !== loop) return;
        op.loopActive = false;
        dropTurnDeliveries(op);
        return this.driver.release(op.record.id).then(() => this.resumePublishedAfterPark(op));
      });
  }

  /**
   * A result another process published between this loop's park and its
   * lease release was left to this process (the publisher saw the lease):
   * the store says `running` at a newer version, and nobody runs it. Taken up
   * again here, unless a faster process claims it first (then it is theirs).
   */
  private async resumePublishedAfterPark(op: RunningOperation): Promise<void> {
    if (this.stopping || op.stale || op.loopActive || TERMINAL.has(op.record.status) || (op.record.state.deferredToolCallIds?.length ?? 0) === 0) return;
    try {
      const stored = await this.deps.store.getOperation(op.record.id);
      if (stored?.status === 'running' && stored.version !== op.record.version && !(await this.runElsewhere(op.record.id))) await this.resume(op.record.id);
    } catch (err) {
      if (!isLeased(err)) this.deps.logger.warn('could not take up an operation resumed while it parked', { operationId: op.record.id, error: errorMessage(err) });
    }
  }

  private async loop(op: RunningOperation): Promise<void> {
    const operationId = op.record.id;
    if (!this.driver.holds(operationId)) {
      // Refused (OPERATION_LEASED) while another process runs it; moved on since this copy was read: stale.
      const stored = await this.driver.claim(operationId);
      if (stored.version !== op.record.version) throw staleError(op);
    }
    this.driver.keep(operationId, (holder) => this.loseLease(op, holder?.owner));
    if (op.threadHooksProblem !== undefined) throw op.threadHooksProblem;
    while (true) {
      if (this.stopping) return;
      if (op.abort.signal.aborted) return this.finish(op, 'interrupted');
      // Queue mode: one step per job; the step after it is the next job's (runQueuedStep enqueues it).
      if (op.queuedRun !== undefined && op.queuedRun.steps++ > 0) return;
      // Each step takes the operation's turn inline (no closure and no extra async frame per step on the hot path).
      const turn = acquireTurn(op);
      if (turn) await turn;
      let next: NextStep;
      let published: string[] | undefined;
      let continued = false;
      let closing: ClosingWrites | undefined;
      try {
        // The agent of this step, fresh from its source (synchronous for the static source: nothing awaited).
        const reading = readStepAgent(this.deps, op);
        if (reading !== undefined) await reading;
        // The source's start (agent functions' useResponseStart / useAgentStart), once, before the first step.
        if (op.record.state.stepIndex === 0 && op.record.state.sourceStarted !== true) {
          const started = await sourceStartCommit(this.deps, op);
          if (started !== undefined) await this.commit(op, started);
        }
        // Calls hooks queued after the last step's draft (its after_create_message hooks): stored before the decision, so they run.
        if (op.queuedTools !== undefined) await this.commitQueuedToolCalls(op);
        next = decideNextStep(op.agent, op.record.state, op.messages);
        if (next.kind === 'finish' && next.reason === 'done') {
          // The source may continue the operation instead (agent functions' useAgentFinish appends).
          const decided = await sourceFinishing(this.deps, op);
          if (decided?.kind === 'continue') {
            await this.commit(op, decided.commit);
            continued = true;
          } else closing = decided?.closing;
        }
        if (next.kind === 'step') await this.runStep(op, next.step);
        // Results another process published since the last commit (it left the run to this lease holder): taken, not parked on.
        else if (next.kind === 'park' && (op.record.state.deferredToolCallIds?.length ?? 0) > 0) published = await takePublications(this.deps.store, op, this.driver.owner);
        // Parked, decided under the lock: a completion that comes after this sees no loop and launches one.
        if (next.kind === 'park' && published === undefined) op.loopActive = false;
      } finally {
        releaseTurn(op);
      }
      if (published !== undefined || continued) continue;
      if (next.kind === 'park') {
        this.waiters.notify(op.record);
        // Who waits on beyond the park: the result or decision may come to another process, so the store is read.
        if (this.waiters.has(operationId)) this.waiters.watch(operationId);
        return;
      }
      if (next.kind === 'finish') return this.finish(op, next.reason, undefined, undefined, closing);
    }
  }

  /** One step: beforeStep, the kind's executor drafts the commit, the commit, its effects, afterStep. */
  private async runStep(op: RunningOperation, kind: StepKind): Promise<void> {
    const stepIndex = op.record.state.stepIndex;
    const operationId = op.record.id;
    const started = performance.now();
    const startedAt = nowIso();
    this.deps.events.emit({ type: 'step_started', operationId, stepIndex, kind });
    if (this.deps.dispatcher.mightHandle(operationId, 'beforeStep', 'notification')) {
      const event = baseEvent(op) as HookEventMap['beforeStep'];
      event.stepType = kind;
      await dispatchHook(this.deps, op, 'beforeStep', event);
    }

    const state = copyState(op.record.state);
    state.stepIndex = stepIndex + 1;
    const draft: StepDraft = { kind, stepIndex, state, commit: { state, messages: [] }, after: {}, usage: ZERO_USAGE };
    if ((await STEP_EXECUTORS[kind](this.services, op, draft)) === 'cancelled') return;
    // Tool calls thread hooks queued (state.queueTool) join the first commit that leaves no call pending.
    if (op.queuedTools !== undefined) await takeQueuedToolCalls(this.deps, op, draft);

    const { usage, after, commit } = draft;
    state.usage = addUsage(state.usage, usage);
    commit.step = { operationId, stepIndex, kind, startedAt, finishedAt: nowIso(), usage, summary: summarize(after) };
    // What the step's tools wrote to the thread's persisted values (agent functions' usePersistentState) commits with it.
    const threadValues = takeThreadValues(this.deps, op, commit.messages?.length ?? 0);
    if (threadValues !== undefined) commit.threadValues = threadValues;
    await this.commit(op, commit);
    if (draft.effects) await draft.effects();
    if (this.deps.dispatcher.mightHandle(operationId, 'afterStep', 'notification')) {
      // Built field by field: spreading the varying `after` shape was the costliest line of a step.
      const event = baseEvent(op) as HookEventMap['afterStep'];
      event.stepIndex = stepIndex;
      event.stepType = kind;
      if (after.content !== undefined) event.content = after.content;
      if (after.toolCalls !== undefined) event.toolCalls = after.toolCalls;
      if (after.toolResults !== undefined) event.toolResults = after.toolResults;
      event.usage = usage;
      event.totalUsage = state.usage;
      await dispatchHook(this.deps, op, 'afterStep', event);
    }
    this.deps.events.emit({ type: 'step_finished', operationId, stepIndex, kind, usage, durationMs: Math.round(performance.now() - started) });
  }

  /**
   * Publishes a deferred tool result into its placeholder exactly once, after
   * result control (tool-result-publication.ts). A duplicate, late or
   * unknown completion changes nothing and resolves `{ published: false }`;
   * the first final result, a denial included, stays. Resumes the operation
   * when nothing else is outstanding. Works after a restart.
   */
  async completeToolCall(operationId: string, toolCallId: string, raw: ToolResult): Promise<{ published: boolean }> {
    return this.oneAtATime(operationId, () => this.completeInTurn(operationId, toolCallId, raw));
  }

  private async completeInTurn(operationId: string, toolCallId: string, raw: ToolResult): Promise<{ published: boolean }> {
    const op = await this.get(operationId);
    // What controls and thread hooks made of the result, kept for a retry: they run once per result.
    const prepared: PreparedCompletion = {};
    // Between steps and decisions, one at a time: a completion never overwrites a step's state, nor a step its result.
    try {
      return await inTurn(op, () => this.publish(op, toolCallId, raw, prepared));
    } catch (err) {
      if (!isVersionConflict(err)) throw err;
      // This process's copy was out of date (another process committed meanwhile): drop it and publish once more
      // against the stored state. Publishing fills an empty placeholder at most once, so this cannot store it twice.
      this.dropStale(op, err);
      const fresh = await this.get(operationId);
      return inTurn(fresh, () => this.publish(fresh, toolCallId, raw, prepared));
    }
  }

  private async publish(op: RunningOperation, toolCallId: string, raw: ToolResult, prepared: PreparedCompletion): Promise<{ published: boolean }> {
    const outcome = await publishDeferred(this.deps, op, toolCallId, raw, prepared);
    // Messages its result hooks injected: stored now when every call of the turn has its tool message (the
    // placeholders are stored), so they follow the results; else the step that answers the last call stores them.
    if (outcome.published && op.heldInjections !== undefined && op.record.state.pendingToolCalls.length === 0) await this.storeHeldInjections(op);
    if (outcome.runnable && !op.loopActive && !this.stopping) {
      // Published into an operation another process runs: that runner rebases its next commit on it
      // (publication-rebase.ts) and goes on; the copy here is out of date from then on, so it is not kept.
      if (await this.runElsewhere(op.record.id)) {
        if (this.running.get(op.record.id) === op) this.running.delete(op.record.id);
      } else {
        // Nobody runs it (it parked, or its process is gone): it runs here.
        this.launch(op);
      }
    }
    return { published: outcome.published };
  }

  /** Queued tool calls no step took (queued once its draft was made): their assistant message as a commit of its own, the calls pending. */
  private async commitQueuedToolCalls(op: RunningOperation): Promise<void> {
    const state = copyState(op.record.state);
    const draft: StepDraft = { kind: 'call_tool', stepIndex: state.stepIndex, state, commit: { state, messages: [] }, after: {}, usage: ZERO_USAGE };
    await takeQueuedToolCalls(this.deps, op, draft);
    if (draft.commit.messages!.length > 0) await this.commit(op, draft.commit);
  }

  /** Commits the messages result hooks injected for a deferred result (their before_create_message ran at injection), then after_create_message. */
  private async storeHeldInjections(op: RunningOperation): Promise<void> {
    const held = op.heldInjections ?? [];
    op.heldInjections = undefined;
    if (held.length === 0) return;
    const before = op.messages.length;
    await this.commit(op, { state: copyState(op.record.state), messages: held }, true);
    if (op.threadHooks !== undefined) await afterCommitMessages(op, op.messages.slice(before));
  }

  /** A finished sub-agent answers its parent's placeholder (in this process or after a restart). */
  private async bridgeToParent(child: RunningOperation, reason: TerminalReason): Promise<void> {
    const parentId = child.record.parentOperationId;
    const toolCallId = child.record.context[PARENT_TOOL_CALL_KEY];
    if (!parentId || !toolCallId || this.stopping) return;
    const parent = await this.get(parentId);
    if (TERMINAL.has(parent.record.status) || parent.abort.signal.aborted) return;
    const subOperationId = child.record.id;
    let result: ToolResult;
    if (reason === 'done') {
      result = { content: child.record.state.lastText ?? '', success: true, data: { subOperationId } };
    } else {
      const error = `sub-agent "${child.record.agentId}" ended with ${reason}${child.record.error ? `: ${child.record.error.message}` : ''}`;
      await this.deps.dispatcher.dispatch(parentId, 'onCallAgentError', { ...baseEvent(parent), agentId: child.record.agentId, callerAgentId: parent.agent.id, error, subOperationId });
      result = { content: `Error: ${error}`, success: false, error: 'agent_error', data: { subOperationId } };
    }
    await this.completeToolCall(parentId, toolCallId, result);
  }

  /**
   * Commits one step's writes with compare-and-swap on the version this
   * process holds (unless the caller named one): when another process or
   * connection committed first, the store refuses it with
   * STORE_VERSION_CONFLICT and nothing is written.
   */
  private async commit(op: RunningOperation, commit: StepCommit, hooked = false): Promise<void> {
    if (op.stale) throw staleError(op);
    // Thread hooks around every message write (document 003): one property check when the operation selects none.
    const threadHooks = hooked ? undefined : op.threadHooks;
    if (threadHooks !== undefined && commit.messages !== undefined && commit.messages.length > 0) await beforeCommitMessages(this.deps, op, commit);
    const loopCommit = commit.expectedVersion === undefined;
    if (loopCommit) commit.expectedVersion = op.record.version;
    let written: MessageRecord[];
    for (let attempt = 1; ; attempt++) {
      try {
        written = await this.deps.store.commitStep(op.record.id, commit);
        break;
      } catch (err) {
        // A step of the lease holder refused because deferred results were published meanwhile: rebased, not lost.
        if (!loopCommit || attempt > MAX_REBASES || !isVersionConflict(err) || !this.driver.holds(op.record.id)) throw err;
        if (!(await rebaseOnPublications(this.deps.store, op, commit, this.driver.owner))) throw err;
      }
    }
    // Updated in place: callers only ever get copies (copyRecord), and this runs once per step.
    const record = op.record;
    record.state = commit.state;
    if (commit.status) record.status = commit.status;
    if (commit.reason) record.reason = commit.reason;
    if (commit.error) record.error = commit.error;
    record.updatedAt = nowIso();
    record.version += 1;
    if (commit.compact) {
      const gone = new Set(commit.compact.messageIds);
      op.messages = activeMessages([...op.messages.filter((m) => !gone.has(m.id)), ...written]);
    } else if (written.some((m) => m.role === 'summary')) {
      op.messages = activeMessages([...op.messages, ...written]);
    } else {
      // The common case: new messages go at the end; no need to re-sort the conversation.
      for (const m of written) op.messages.push(m);
    }
    if (threadHooks !== undefined && written.length > 0) await afterCommitMessages(op, written);
  }

  /** What thread hooks write through (state.injectMessage): one message, its own commit, hooks run by the caller. */
  private readonly hookWrites: ThreadHookWrites = {
    commitMessage: async (op, message) => {
      const before = op.messages.length;
      await this.commit(op, { state: copyState(op.record.state), messages: [message] }, true);
      const stored = op.messages.slice(before).find((m) => m.role === message.role && m.content === message.content) ?? op.messages.at(-1);
      if (stored === undefined) throw new HookgateError('STORE_CONFLICT', `operation ${op.record.id}: the injected message was not stored`);
      return stored;
    },
    startQueuedToolRun: async (op, calls, codeHooks) => {
      if (this.stopping) throw new HookgateError('KERNEL_STOPPED', 'the kernel is stopping; no new operation can start');
      return this.start(await queuedToolRunOptions(this.deps, op, codeHooks), calls);
    },
  };

  private async fail(op: RunningOperation, err: unknown): Promise<void> {
    if (isVersionConflict(err) || isLeased(err) || op.stale) return this.dropStale(op, err);
    if (this.handBackOnStoreOutage(op, err)) return;
    if (TERMINAL.has(op.record.status) || this.stopping) return;
    if (op.abort.signal.aborted) return this.finish(op, 'interrupted');
    this.deps.logger.error('operation failed', { operationId: op.record.id, error: errorMessage(err) });
    const code = err instanceof HookgateError ? err.code : undefined;
    await dispatchHook(this.deps, op, 'onError', {
      ...baseEvent(op),
      errorMessage: errorMessage(err),
      errorType: err instanceof Error ? err.name : typeof err,
      ...(code ? { errorCode: code } : {}),
      ...(err instanceof HookgateError ? { errorDetail: err.details } : {}),
    }).catch(() => undefined);
    await this.finish(op, 'error', { message: errorMessage(err), ...(code ? { code } : {}) });
  }

  /** Ends the operation. With `expectedVersion`, the terminal commit is a compare-and-swap and a conflict throws (nothing is dispatched). */
  private async finish(
    op: RunningOperation,
    reason: TerminalReason,
    error?: { message: string; code?: string },
    expectedVersion?: number,
    closing?: ClosingWrites,
  ): Promise<void> {
    if (TERMINAL.has(op.record.status)) return;
    op.finishing = true;
    const status = reason === 'error' || reason === 'message_hook_error' ? 'error' : reason === 'interrupted' ? 'interrupted' : 'done';
    const state = copyState(op.record.state);
    state.approval = undefined;
    // What never ran never will; dropped so finalState carries no call the gate refused or never reached.
    state.pendingToolCalls = [];
    if (closing?.metadata !== undefined) state.metadata = closing.metadata;
    const threadValues = closing?.threadValues;
    try {
      await this.commit(op, { state, status, reason, ...(error ? { error } : {}), ...(expectedVersion !== undefined ? { expectedVersion } : {}), ...(threadValues !== undefined ? { threadValues } : {}) });
    } catch (err) {
      if (expectedVersion !== undefined && isVersionConflict(err)) {
        this.running.delete(op.record.id);
        throw new HookgateError('OPERATION_NOT_WAITING', `operation ${op.record.id} was changed by another process first; nothing was aborted`, { cause: err, details: { operationId: op.record.id } });
      }
      // Another process finished or moved the operation first: its outcome stands, this one announces nothing.
      if (isVersionConflict(err) || op.stale) return this.dropStale(op, err);
      // Queue mode, the store away: nothing announced; the job runs the end again once the store answers.
      if (this.handBackOnStoreOutage(op, err)) {
        op.finishing = false;
        return;
      }
      this.deps.logger.error('could not persist the terminal state', { operationId: op.record.id, error: errorMessage(err) });
      op.record = { ...op.record, status, reason };
    }
    const steps = op.record.state.stepIndex;
    try {
      await this.deps.dispatcher.dispatch(op.record.id, 'onComplete', {
        ...baseEvent(op),
        reason,
        status,
        totalUsage: op.record.state.usage,
        stepCount: steps,
        ...(op.record.state.lastText !== undefined ? { finalText: op.record.state.lastText } : {}),
        finalState: copyRecord(op.record),
      });
    } catch (err) {
      this.deps.logger.error('onComplete delivery failed', { operationId: op.record.id, error: errorMessage(err) });
    }
    this.deps.dispatcher.unregister(op.record.id);
    sourceSettled(this.deps, op);
    this.deps.events.emit({
      type: 'operation_finished',
      operationId: op.record.id,
      reason,
      status,
      usage: op.record.state.usage,
      steps,
      finalText: op.record.state.lastText,
      ...(error ? { error: error.message } : {}),
    });
    this.waiters.notify(op.record);
    this.running.delete(op.record.id);
    op.threadHooks?.close();
    if (op.record.parentOperationId) {
      await this.bridgeToParent(op, reason).catch((err) =>
        this.deps.logger.error('could not hand a sub-agent result to its parent', { operationId: op.record.id, error: errorMessage(err) }),
      );
    }
  }

  /**
   * Queue mode: a step that met an unreachable store (STORE_UNAVAILABLE, a
   * PostgreSQL restart) neither fails nor finishes its operation; the error
   * is kept for `runQueuedStep`, which hands the job back to the queue to run
   * again from the last commit (at least once; a commit that did land makes
   * the retried job find a newer version). True when it took the error.
   */
  private handBackOnStoreOutage(op: RunningOperation, err: unknown): boolean {
    if (op.queuedRun === undefined || !(err instanceof HookgateError && err.code === 'STORE_UNAVAILABLE')) return false;
    op.queuedRun.storeDown ??= err;
    this.deps.logger.warn('the store could not be reached during a queued step; the step runs again once it answers', { operationId: op.record.id, error: errorMessage(err) });
    return true;
  }

  /**
   * Stops this process's work on an operation another writer moved on (its
   * commit lost a compare-and-swap): logged once, no retry, nothing more
   * written or dispatched; the copy is dropped, so the next access reloads
   * it from the store, and whoever waits on it here waits on the store.
   */
  private dropStale(op: RunningOperation, err: unknown): void {
    const operationId = op.record.id;
    if (!op.stale) {
      op.stale = true;
      this.deps.logger.warn('operation changed by another writer; this process stops running it', {
        operationId,
        ...(err instanceof HookgateError ? { expectedVersion: err.details.expectedVersion, version: err.details.version } : {}),
      });
    }
    op.loopActive = false;
    if (this.running.get(operationId) === op) this.running.delete(operationId);
    void this.driver.release(operationId);
    if (this.waiters.has(operationId)) this.waiters.watch(operationId);
  }

  /**
   * A renewal found the lease taken (this process was too slow to renew, and
   * another one claimed the operation after it expired): nothing more is
   * committed from here; the in-flight step is aborted and its commit refused.
   */
  private loseLease(op: RunningOperation, holder: string | undefined): void {
    if (op.stale) return;
    op.stale = true;
    this.deps.logger.warn('lost the lease of a running operation; this process stops running it', { operationId: op.record.id, ...(holder ? { holder } : {}) });
    op.abort.abort();
    if (this.running.get(op.record.id) === op) this.running.delete(op.record.id);
  }
}

function summarize(after: Partial<HookEventMap['afterStep']>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (after.content) out.content = after.content.slice(0, 500);
  if (after.toolCalls?.length) out.toolCalls = after.toolCalls.map((c) => `${c.identifier}/${c.apiName}`);
  if (after.toolResults?.length) out.toolResults = after.toolResults.map((r) => ({ toolCallId: r.toolCallId, success: r.result.success, error: r.result.error }));
  return out;
}

function isLeased(err: unknown): boolean {
  return err instanceof HookgateError && err.code === 'OPERATION_LEASED';
}

function isVersionConflict(err: unknown): boolean {
  return err instanceof HookgateError && err.code === 'STORE_VERSION_CONFLICT';
}

/** What a write from a copy already known to be stale throws: the conflict it would meet in the store. */
function staleError(op: RunningOperation): HookgateError {
  return new HookgateError('STORE_VERSION_CONFLICT', `operation ${op.record.id} was changed by another writer; this process no longer runs it`, {
    details: { operationId: op.record.id },
  });
}

/** What an operation stores of its thread hook selection: the prompt's list and the ids of hooks given in code (only ids: hooks are code). */
function threadHookSelection(options: ExecAgentOptions): OperationState['threadHooks'] {
  const prompt = options.promptHooks;
  const code = options.threadHooks;
  if (prompt === undefined && (code === undefined || code.length === 0)) return undefined;
  if (prompt !== undefined && (!Array.isArray(prompt) || prompt.some((id) => typeof id !== 'string'))) {
    throw new HookgateError('THREAD_HOOK_INVALID', 'execAgent promptHooks: expected a list of thread hook ids');
  }
  if (code !== undefined && !Array.isArray(code)) throw new HookgateError('THREAD_HOOK_INVALID', 'execAgent threadHooks: expected a list of hooks made by defineHook');
  return {
    ...(prompt !== undefined ? { prompt: [...prompt] } : {}),
    ...(code !== undefined && code.length > 0 ? { code: code.map((h, i) => (typeof h === 'object' && h !== null && typeof h.id === 'string' ? h.id : `#${i}`)) } : {}),
  };
}

/** The record an operation will have once stored: what its thread hooks are opened on before anything is written. */
function provisionalRecord(id: string, agent: AgentDefinition, context: Record<string, string>, state: OperationState, options: ExecAgentOptions, userId: string | undefined): OperationRecord {
  const now = nowIso();
  return {
    id,
    agentId: agent.id,
    threadId: options.threadId ?? defaultThreadId(id),
    ...(options.parentOperationId !== undefined ? { parentOperationId: options.parentOperationId } : {}),
    ...(userId !== undefined ? { userId } : {}),
    status: 'running',
    agent,
    context,
    state,
    createdAt: now,
    updatedAt: now,
    version: 0,
  };
}
