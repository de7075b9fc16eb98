import { nowIso } from '../clock.js';
import { timeOrderedId } from '../time-ordered-id.js';
import { copyRecord, copyState } from './copy-state.js';
import { randomUUID } from 'node:crypto';
import { deepFreeze, type AgentDefinition } from '../agent-definition.js';
import { HookgateError, errorMessage } from '../errors.js';
import type { AgentHook, AgentHookEvent, HookEventMap, HookType, PendingTool, StepKind, TerminalReason, ToolCallHookContext } from '../hooks/hook-types.js';
import { ZERO_USAGE, addUsage, estimateTokens, type ToolResult, type Usage } from '../messages.js';
import { TERMINAL_STATUSES, type MessageRecord, type NewMessage, type OperationRecord, type OperationState, type StepCommit } from '../store.js';
import { activeMessages, locateToolCall, type RunningOperation } from './running-operation.js';
import { awaitsApproval, callAllowed, compactableCount, decideNextStep, SUBAGENT_IDENTIFIER, type NextStep } from './next-step.js';
import { callModel, promptMessages, usageOf } from './model-turn.js';
import { controlResult, runToolCall, toolCallContext } from './tool-call-step.js';
import { admitToolCalls, gateToolCall, pendingTool, readmitLegacyState, toolEntryFor } from './tool-call-gate.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { agentAtStart, agentSourceOf, readStepAgent } from './agent-source-step.js';
import type { OperationDriver } from './operation-driver.js';
import { InProcessDriver } from './in-process-driver.js';

/** What `kernel.execAgent` takes: the agent, the prompt, hooks, and who runs it. */
export interface ExecAgentOptions {
  /** A defined agent's id, or pass `agent` inline; with `agentSource`, the agent that source resolves. */
  agentId?: string;
  agent?: AgentDefinition;
  /**
   * The agent source to read the agent from before every step (an
   * `AgentSources` plugin's or `kernel.agentSources.add`'s id); default
   * `static`: agent files, `kernel.agents.define` and inline agents.
   */
  agentSource?: string;
  prompt: string;
  hooks?: readonly AgentHook[];
  /** runtime.userId: wins over origin.userId. */
  userId?: string;
  origin?: { userId?: string };
  parentOperationId?: string;
  /**
   * Continue this thread: the model sees the thread's whole history (earlier
   * operations' messages, compaction summaries in place of what they replaced)
   * before the new prompt. The thread must exist (THREAD_NOT_FOUND), belong to
   * the same agent (THREAD_AGENT_MISMATCH) and have no unfinished operation
   * (THREAD_BUSY). Without it the operation gets a new thread of its own.
   */
  threadId?: string;
  /** Associations copied into tool contexts: topicId, sessionId, threadId, groupId, taskId, workspaceId, documentId. */
  context?: Record<string, string>;
}

/** A human's decision on a parked operation. */
export type HumanDecision =
  | { action: 'approve'; toolCallId?: string }
  | { action: 'reject'; toolCallId?: string; reason?: string }
  | { action: 'reject_continue'; toolCallId?: string; reason?: string };

type Waiter = { until: 'settled' | 'terminal'; resolve: (r: OperationRecord) => void; reject: (e: unknown) => void };

const TERMINAL = TERMINAL_STATUSES;

/** Where a sub-agent operation keeps the parent's tool call id (in its stored context). */
export const PARENT_TOOL_CALL_KEY = 'hookgate.parentToolCallId';

/**
 * The step loop. An operation is a sequence of steps, each a transition over
 * persisted state: decide the next step from the state, dispatch beforeStep,
 * run it, commit its writes in one transaction, dispatch afterStep. The loop
 * parks when a human must decide and finishes with a terminal reason.
 */
export class AgentRuntime {
  private readonly running = new Map<string, RunningOperation>();
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly loading = new Map<string, Promise<RunningOperation>>();
  /** Operations whose waiters are resolved from the store (see watchStore). */
  private readonly watching = new Set<string>();
  /** How often a waiter on an operation another process runs reads the store. */
  private readonly waitPollMs = 100;
  /** Set by `shutdown`: loops stop where they are and nothing is finished or persisted as terminal. */
  private stopping = false;

  /** Who runs what: an operation's loop runs only while this process holds its lease (see OperationDriver). */
  readonly driver: OperationDriver;

  constructor(private readonly deps: RuntimeDeps, driver?: OperationDriver) {
    this.driver = driver ?? new InProcessDriver(deps.store, deps.logger);
  }

  /** Creates and persists the operation, then runs it in the background. Resolves once persisted. */
  async start(options: ExecAgentOptions): Promise<string> {
    if (this.stopping) throw new HookgateError('KERNEL_STOPPED', 'the kernel is stopping; no new operation can start');
    // Time-ordered: a new operation's id goes at the right edge of the store's id index.
    const operationId = `op_${timeOrderedId()}`;
    // The definition stored with the operation (validated; asked of its agent source unless static) and its context.
    const { agent, context } = await agentAtStart(this.deps, options, operationId);
    const userId = options.userId ?? options.origin?.userId;
    const counters = options.threadId === undefined ? { modelTurns: 0, compactions: 0 } : await this.threadCounters(options.threadId, agent.id);
    // Validate hooks before anything is stored.
    this.deps.dispatcher.register(operationId, options.hooks ?? []);
    const state: OperationState = { stepIndex: 0, usage: { ...ZERO_USAGE }, pendingToolCalls: [], approvedToolCallIds: [], ...counters };
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
          // Created claimed by this process: the loop's first claim costs no write of its own.
          lease: this.driver.leaseRequest(),
        },
        [{ role: 'user', content: options.prompt }],
        this.deps.dispatcher.getSerializedHooks(operationId) ?? [],
      );
    } catch (err) {
      this.deps.dispatcher.unregister(operationId);
      throw err;
    }
    this.driver.adopt(operationId);
    // The thread's history and the new prompt, read once: the step loop keeps it up to date from its own commits.
    const messages = await this.deps.store.listThreadMessages(record.threadId);
    // Sub-agents inherit the registered snapshots, never the caller's (mutable) objects.
    const op = this.track(record, agent, messages, this.deps.dispatcher.getRegisteredHooks(operationId), options);
    this.deps.events.emit({ type: 'operation_started', operationId, agentId: agent.id, parentOperationId: options.parentOperationId });
    this.launch(op);
    return operationId;
  }

  /**
   * Checks that `threadId` can take a new operation of `agentId` and returns
   * the turn counters its previous operation ended with: a continued thread
   * counts model turns and compactions on, so a scripted model plays one
   * script across the thread. The store checks "no unfinished operation"
   * again in the create transaction (two starts racing: one gets THREAD_BUSY).
   */
  private async threadCounters(threadId: string, agentId: string): Promise<{ modelTurns: number; compactions: number }> {
    const thread = await this.deps.store.getThread(threadId);
    if (!thread) throw new HookgateError('THREAD_NOT_FOUND', `no thread has id ${threadId}`, { details: { threadId } });
    if (thread.agentId !== agentId) {
      throw new HookgateError('THREAD_AGENT_MISMATCH', `thread ${threadId} belongs to agent "${thread.agentId}", not "${agentId}"; continue it with its own agent`, {
        details: { threadId, threadAgentId: thread.agentId, agentId },
      });
    }
    const previous = (await this.deps.store.listThreadOperations(threadId)).at(-1);
    if (previous && !TERMINAL.has(previous.status)) {
      throw new HookgateError('THREAD_BUSY', `thread ${threadId} has an unfinished operation (${previous.id} is ${previous.status}); finish, decide or abort it first`, {
        details: { threadId, operationId: previous.id },
      });
    }
    return { modelTurns: previous?.state.modelTurns ?? 0, compactions: previous?.state.compactions ?? 0 };
  }

  /** Applies a human decision to a parked operation (also after a restart) and resumes it. */
  async decide(operationId: string, decision: HumanDecision): Promise<void> {
    const op = await this.claimed(operationId);
    try {
      await this.decideClaimed(op, decision);
    } finally {
      if (!op.loopActive) await this.driver.release(operationId);
    }
  }

  private async decideClaimed(op: RunningOperation, decision: HumanDecision): Promise<void> {
    const operationId = op.record.id;
    const approval = op.record.state.approval;
    if (op.record.status !== 'waiting_approval' || !approval || op.deciding) {
      const orphaned = op.record.status === 'running' && !op.loopActive;
      const what = op.deciding
        ? 'already being decided'
        : orphaned
          ? `running, not waiting for approval (if the process running it is gone: hookgate resume ${operationId}, or hookgate abort ${operationId})`
          : `${op.record.status}, not waiting for approval`;
      throw new HookgateError('OPERATION_NOT_WAITING', `operation ${operationId} is ${what}`, { details: { operationId } });
    }
    const targets = decision.toolCallId ? approval.pendingTools.filter((t) => t.toolCallId === decision.toolCallId) : approval.pendingTools;
    if (decision.toolCallId && targets.length === 0) {
      throw new HookgateError('OPERATION_NOT_WAITING', `operation ${operationId} is not waiting for tool call ${decision.toolCallId}`, { details: { operationId } });
    }
    // One decision at a time per operation in this process (a second concurrent one is refused above);
    // across processes the decision's commit is a compare-and-swap on the state version, so exactly one wins.
    op.deciding = true;
    try {
      await this.exclusive(op, () => this.applyDecision(op, decision, approval, targets));
    } catch (err) {
      if (!(err instanceof HookgateError && err.code === 'STORE_VERSION_CONFLICT')) throw err;
      // Nothing was written: the other decision (or a run elsewhere) stands. Forget the stale copy.
      if (!op.loopActive) this.running.delete(operationId);
      throw new HookgateError('OPERATION_NOT_WAITING', `operation ${operationId} was decided or changed by another process first; this decision changed nothing`, {
        cause: err,
        details: { operationId },
      });
    } finally {
      op.deciding = false;
    }
  }

  private async applyDecision(
    op: RunningOperation,
    decision: HumanDecision,
    approval: NonNullable<OperationState['approval']>,
    targets: PendingTool[],
  ): Promise<void> {
    const state = copyState(op.record.state);
    const remaining = approval.pendingTools.filter((t) => !targets.includes(t));
    // A decision on one call leaves the others waiting; `reject` halts the whole run.
    state.approval = remaining.length > 0 && decision.action !== 'reject' ? { ...approval, pendingTools: remaining } : undefined;
    const base = this.baseEvent(op);
    const messages: NewMessage[] = [];

    if (decision.action === 'approve') {
      state.approvedToolCallIds = [...new Set([...state.approvedToolCallIds, ...targets.map((t) => t.toolCallId)])];
    } else {
      const reason = decision.reason ?? '';
      // Every rejected call gets a result, so the conversation stays consistent.
      const rejected = decision.action === 'reject' ? state.pendingToolCalls : state.pendingToolCalls.filter((c) => targets.some((t) => t.toolCallId === c.id));
      for (const call of rejected) {
        messages.push({
          role: 'tool',
          toolCallId: call.id,
          content: reason ? `The user rejected this tool call: ${reason}` : 'The user rejected this tool call.',
          toolResult: { content: reason ? `The user rejected this tool call: ${reason}` : 'The user rejected this tool call.', success: false, error: 'human_rejected', state: { type: 'rejected', reason } },
        });
      }
      state.pendingToolCalls = state.pendingToolCalls.filter((c) => !rejected.includes(c));
    }
    const status = state.approval ? 'waiting_approval' : 'running';
    await this.commit(op, { state, status, messages, expectedVersion: op.record.version });
    try {
      await this.dispatch(op, 'afterHumanIntervention', {
        ...base,
        action: decision.action === 'reject_continue' ? 'rejectAndContinue' : decision.action,
        ...(decision.toolCallId ? { toolCallId: decision.toolCallId } : {}),
        ...(decision.action !== 'approve' && decision.reason !== undefined ? { rejectionReason: decision.reason } : {}),
      });
      if (decision.action === 'reject') {
        await this.dispatch(op, 'onStopByHumanIntervention', {
          ...base,
          ...(decision.toolCallId ? { toolCallId: decision.toolCallId } : {}),
          ...(decision.reason !== undefined ? { rejectionReason: decision.reason } : {}),
        });
      }
    } catch (err) {
      // Persisted hooks that cannot be restored (or a critical delivery failure) fail the
      // operation, as they do inside the step loop: it never goes on without its policy.
      await this.fail(op, err);
      return;
    }
    if (decision.action === 'reject') {
      await this.finish(op, 'interrupted');
      return;
    }
    if (status === 'running') this.launch(op);
    else this.notify(op);
  }

  /**
   * Aborts a running or parked operation and the sub-agent operations it
   * started in this process; each ends with reason `interrupted`.
   */
  async abort(operationId: string): Promise<void> {
    const op = await this.get(operationId);
    if (TERMINAL.has(op.record.status)) return;
    op.abort.abort();
    // Children running here, and unfinished ones a stopped or crashed process left behind.
    const children = new Set([...this.running.values()].filter((c) => c.record.parentOperationId === operationId).map((c) => c.record.id));
    for (const child of await this.deps.store.listOperations({ parentOperationId: operationId })) if (!TERMINAL.has(child.status)) children.add(child.id);
    for (const child of children) await this.abort(child);
    // A loop in this process finishes it itself; a parked operation, or one a stopped process left running, is
    // finished here, by compare-and-swap: if another process changed it meanwhile, nothing is written.
    if (!op.loopActive) await this.finish(op, 'interrupted', undefined, op.record.version);
  }

  /** Resolves when the operation is parked or terminal (`settled`) or only when terminal. */
  async wait(operationId: string, until: 'settled' | 'terminal'): Promise<OperationRecord> {
    const live = this.running.get(operationId);
    const record = live?.record ?? (await this.deps.store.getOperation(operationId));
    if (!record) throw new HookgateError('OPERATION_NOT_FOUND', `no operation has id ${operationId}`, { details: { operationId } });
    // A parent waiting for deferred results is woken by its children's completion (here, or once they are loaded here).
    if (this.isSettled(record, until)) return copyRecord(record);
    // Not run here: wait on the store while another process holds its lease; otherwise nobody runs it (as it is).
    const elsewhere = !live && (await this.runElsewhere(operationId));
    if (!live && !elsewhere && record.status !== 'waiting_tool') return copyRecord(record);
    const settled = new Promise<OperationRecord>((resolve, reject) => {
      const list = this.waiters.get(operationId) ?? [];
      list.push({ until, resolve, reject });
      this.waiters.set(operationId, list);
    });
    if (elsewhere) this.watchStore(operationId);
    return settled;
  }

  /** Continues an operation left `running` by a stopped process, from its persisted state. */
  async resume(operationId: string, options: { force?: boolean } = {}): Promise<void> {
    const op = await this.claimed(operationId, options);
    if (op.record.status === 'running' && !op.loopActive) this.launch(op);
    else if (!op.loopActive) await this.driver.release(operationId);
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
    const stored = await this.driver.claim(operationId, options);
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
    const loops = [...this.running.values()].map((op) => {
      op.abort.abort();
      return op.loop;
    });
    await Promise.allSettled(loops);
    // Released, not left to expire: another process can take a `running` operation over at once.
    await this.driver.shutdown();
    for (const [operationId, list] of this.waiters) {
      for (const w of list) w.reject(new HookgateError('KERNEL_STOPPED', `the kernel was stopped while waiting for operation ${operationId}`, { details: { operationId } }));
    }
    this.waiters.clear();
    this.running.clear();
  }

  /** Whether another process holds an unexpired lease on the operation. */
  private async runElsewhere(operationId: string): Promise<boolean> {
    const lease = await this.deps.store.getLease(operationId);
    return lease !== undefined && lease.owner !== this.driver.owner && lease.expiresAt > Date.now();
  }

  private isSettled(record: OperationRecord, until: 'settled' | 'terminal'): boolean {
    return TERMINAL.has(record.status) || (until === 'settled' && (record.status === 'waiting_approval' || record.status === 'waiting_tool'));
  }

  private track(record: OperationRecord, agent: AgentDefinition, messages: MessageRecord[], hooks: readonly AgentHook[], options: Partial<ExecAgentOptions>): RunningOperation {
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
    if (!TERMINAL.has(record.status)) this.running.set(record.id, op);
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
    return op;
  }

  private launch(op: RunningOperation): void {
    const loop = {};
    op.loopActive = true;
    op.loopToken = loop;
    op.loop = this.loop(op)
      .catch((err) => this.fail(op, err))
      .finally(() => {
        // A loop launched after this one parked (by a completion) keeps its own flag, and the lease.
        if (op.loopToken !== loop) return;
        op.loopActive = false;
        return this.driver.release(op.record.id);
      });
  }

  /**
   * Runs `fn` while no other change to the operation runs in this process:
   * a step of its loop, a deferred completion, a human decision. Each reads
   * the state the previous one committed, so none overwrites another's.
   */
  private async exclusive<T>(op: RunningOperation, fn: () => Promise<T>): Promise<T> {
    const turn = acquireTurn(op);
    if (turn) await turn;
    try {
      return await fn();
    } finally {
      releaseTurn(op);
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
    while (true) {
      if (this.stopping) return;
      if (op.abort.signal.aborted) return this.finish(op, 'interrupted');
      // Each step takes the operation's turn (as `exclusive` does, inline: no closure and no extra
      // async frame per step on the hot path).
      const turn = acquireTurn(op);
      if (turn) await turn;
      let next: NextStep;
      try {
        // The agent of this step, fresh from its source (synchronous for the static source: nothing awaited).
        const reading = readStepAgent(this.deps, op);
        if (reading !== undefined) await reading;
        next = decideNextStep(op.agent, op.record.state, op.messages);
        if (next.kind === 'step') await this.runStep(op, next.step);
        // Parked, decided under the lock: a completion that comes after this sees no loop and launches one.
        else if (next.kind === 'park') op.loopActive = false;
      } finally {
        releaseTurn(op);
      }
      if (next.kind === 'park') return this.notify(op);
      if (next.kind === 'finish') return this.finish(op, next.reason);
    }
  }

  private async runStep(op: RunningOperation, kind: StepKind): Promise<void> {
    const stepIndex = op.record.state.stepIndex;
    const operationId = op.record.id;
    const started = performance.now();
    const startedAt = nowIso();
    this.deps.events.emit({ type: 'step_started', operationId, stepIndex, kind });
    if (this.deps.dispatcher.mightHandle(operationId, 'beforeStep', 'notification')) {
      const event = this.baseEvent(op) as HookEventMap['beforeStep'];
      event.stepType = kind;
      await this.dispatch(op, 'beforeStep', event);
    }

    const state = copyState(op.record.state);
    state.stepIndex = stepIndex + 1;
    let usage: Usage = { ...ZERO_USAGE };
    const commit: StepCommit = { state, messages: [] };
    const after: Partial<HookEventMap['afterStep']> = {};
    let notify: (() => Promise<void>) | undefined;

    switch (kind) {
      case 'call_llm': {
        const response = await callModel(this.deps, op, 'turn', promptMessages(op), state.modelTurns);
        usage = usageOf(op, response);
        // From here on a call is known by the identity minted for it, never by the model's id.
        const toolCalls = admitToolCalls(this.deps, op.agent, response.toolCalls);
        state.modelTurns += 1;
        state.pendingToolCalls = toolCalls;
        state.lastText = response.text || state.lastText;
        commit.messages!.push({ role: 'assistant', content: response.text, ...(toolCalls.length > 0 ? { toolCalls } : {}) });
        after.content = response.text;
        // Observers see only calls the allow-list lets through: a refused call reaches no hook (the gate's first stage).
        after.toolCalls = toolCalls.filter((c) => callAllowed(op.agent, c) && (c.identifier === SUBAGENT_IDENTIFIER || toolEntryFor(this.deps, op.agent, c) !== undefined));
        this.deps.events.emit({ type: 'assistant_message', operationId, stepIndex, text: response.text, toolCalls });
        break;
      }
      case 'call_tool': {
        const call = state.pendingToolCalls[0]!;
        const outcome = await runToolCall(this.deps, op, call, stepIndex);
        if (outcome.kind === 'cancelled') return;
        if (outcome.kind === 'needs_approval') {
          await this.requestApproval(op, state, stepIndex, [outcome.pending], commit);
          break;
        }
        if (outcome.kind === 'deferred') {
          this.deferCall(state, commit, call.id);
          break;
        }
        state.pendingToolCalls = state.pendingToolCalls.slice(1);
        commit.messages!.push({ role: 'tool', toolCallId: call.id, content: outcome.result.content, toolResult: outcome.result });
        if (outcome.observed) after.toolResults = [{ toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, result: outcome.result }];
        notify = outcome.notify;
        break;
      }
      case 'request_human_approve': {
        // Every pending call the gate would park at its approval stage, sub-agent calls included.
        const pendingTools = state.pendingToolCalls.filter((c) => awaitsApproval(op.agent, state, c)).map((c) => pendingTool(c, 'This tool needs approval.'));
        await this.requestApproval(op, state, stepIndex, pendingTools, commit);
        break;
      }
      case 'compress_context': {
        ({ usage, notify } = await this.compact(op, state, stepIndex, commit));
        break;
      }
      case 'call_agent': {
        const out = await this.callAgent(op, state, stepIndex, commit);
        if (out === 'cancelled') return;
        notify = out.notify;
        after.toolResults = out.toolResults;
        break;
      }
    }

    state.usage = addUsage(state.usage, usage);
    commit.step = { operationId, stepIndex, kind, startedAt, finishedAt: nowIso(), usage, summary: summarize(after) };
    await this.commit(op, commit);
    if (notify) await notify();
    if (this.deps.dispatcher.mightHandle(operationId, 'afterStep', 'notification')) {
      // Built field by field: spreading the varying `after` shape was the costliest line of a step.
      const event = this.baseEvent(op) as HookEventMap['afterStep'];
      event.stepIndex = stepIndex;
      event.stepType = kind;
      if (after.content !== undefined) event.content = after.content;
      if (after.toolCalls !== undefined) event.toolCalls = after.toolCalls;
      if (after.toolResults !== undefined) event.toolResults = after.toolResults;
      event.usage = usage;
      event.totalUsage = state.usage;
      await this.dispatch(op, 'afterStep', event);
    }
    this.deps.events.emit({ type: 'step_finished', operationId, stepIndex, kind, usage, durationMs: Math.round(performance.now() - started) });
  }

  private async requestApproval(op: RunningOperation, state: OperationState, stepIndex: number, pendingTools: PendingTool[], commit: StepCommit): Promise<void> {
    state.approval = { pendingTools, requestedAt: nowIso() };
    commit.status = 'waiting_approval';
    this.deps.events.emit({ type: 'approval_requested', operationId: op.record.id, stepIndex, pendingTools });
    await this.dispatch(op, 'beforeHumanIntervention', { ...this.baseEvent(op), stepIndex, pendingTools });
  }

  /** Replaces older messages with a model-written summary; on failure the run goes on uncompressed. */
  private async compact(op: RunningOperation, state: OperationState, stepIndex: number, commit: StepCommit): Promise<{ usage: Usage; notify?: () => Promise<void> }> {
    const keep = op.agent.compaction?.keepRecent ?? 4;
    const cut = compactableCount(op.messages, keep);
    const older = op.messages.slice(0, cut);
    const tokenCount = estimateTokens(op.messages);
    const base = { ...this.baseEvent(op), stepIndex };
    await this.dispatch(op, 'beforeCompact', { ...base, messageCount: op.messages.length, tokenCount });
    try {
      const transcript = older.map((m) => `${m.role}: ${m.content}${m.toolCalls ? ` [tool calls: ${m.toolCalls.map((c) => `${c.identifier}/${c.apiName}`).join(', ')}]` : ''}`).join('\n');
      const response = await callModel(
        this.deps,
        op,
        'summarize',
        [
          { role: 'system', content: 'Summarize the conversation so far for your own later use. Keep facts, decisions, file names and open tasks. Be brief.' },
          { role: 'user', content: transcript },
        ],
        state.compactions,
      );
      const summaryId = `msg_${randomUUID()}`;
      const summary = response.text;
      state.compactions += 1;
      state.compactRetryAboveTokens = undefined;
      commit.messages!.push({ id: summaryId, role: 'summary', content: summary });
      commit.compact = { messageIds: older.map((m) => m.id), summaryId };
      const messagesBefore = op.messages.length;
      const messagesAfter = messagesBefore - older.length + 1;
      this.deps.events.emit({ type: 'compacted', operationId: op.record.id, stepIndex, messagesBefore, messagesAfter });
      return {
        usage: usageOf(op, response),
        notify: () => this.dispatch(op, 'afterCompact', { ...base, groupId: summaryId, messagesBefore, messagesAfter, summary }),
      };
    } catch (err) {
      if (op.abort.signal.aborted) throw err;
      state.compactRetryAboveTokens = tokenCount + Math.ceil((op.agent.compaction?.thresholdTokens ?? 0) / 2);
      await this.dispatch(op, 'onCompactError', { ...base, error: errorMessage(err), tokenCount });
      return { usage: { ...ZERO_USAGE } };
    }
  }

  /**
   * Starts the sub-agent as its own operation and leaves an empty placeholder
   * for its answer: the parent parks (`waiting_tool`) and the child's
   * completion publishes into the placeholder through the same result control
   * as any tool result (see bridgeToParent). Survives restarts: the link is in
   * the child's stored context.
   */
  private async callAgent(
    op: RunningOperation,
    state: OperationState,
    stepIndex: number,
    commit: StepCommit,
  ): Promise<'cancelled' | { notify?: () => Promise<void>; toolResults?: HookEventMap['afterStep']['toolResults'] }> {
    const call = state.pendingToolCalls[0]!;
    const subAgentId = call.apiName;
    const context = toolCallContext(op, call, stepIndex, 'agent');
    // A sub-agent call is a tool call: the same gate, in the same order, before anything starts.
    const verdict = await gateToolCall(this.deps, op, call, context, undefined);
    if (verdict.kind === 'cancelled') return 'cancelled';
    if (verdict.kind === 'needs_approval') {
      await this.requestApproval(op, state, stepIndex, [verdict.pending], commit);
      return {};
    }
    if (verdict.kind === 'denied') return this.answerCall(op, state, commit, context, verdict.result, false, verdict.observed);
    if (verdict.kind === 'mocked') return this.answerCall(op, state, commit, context, verdict.result, true, true);

    const instruction = call.args.instruction as string;
    const base = { ...this.baseEvent(op), stepIndex, agentId: subAgentId, callerAgentId: op.agent.id };
    await this.dispatch(op, 'beforeCallAgent', { ...base, instruction });
    let failure: unknown;
    try {
      const subOperationId = await this.start({
        agentId: subAgentId,
        prompt: instruction,
        hooks: op.fromStore ? ((await this.deps.store.loadHooks(op.record.id)) as AgentHook[]) : op.hooks,
        userId: op.record.userId,
        parentOperationId: op.record.id,
        context: { ...op.record.context, [PARENT_TOOL_CALL_KEY]: call.id },
      });
      await this.dispatch(op, 'afterCallAgent', { ...base, subOperationId, success: true, threadId: `thread_${subOperationId}` });
      this.deferCall(state, commit, call.id);
      return {};
    } catch (err) {
      if (op.abort.signal.aborted) return 'cancelled';
      failure = err;
    }
    // The sub-agent could not even start: answer now, through the same result control.
    await this.dispatch(op, 'afterCallAgent', { ...base, subOperationId: '', success: false });
    await this.dispatch(op, 'onCallAgentError', { ...base, error: errorMessage(failure) });
    return this.answerCall(op, state, commit, context, { content: `Error: ${errorMessage(failure)}`, success: false, error: 'agent_error' }, false, true, true);
  }

  /**
   * Answers the first pending call within this step: result control first
   * (unless the gate refused the call before it ran: a denial runs nothing),
   * then the tool message, then, after the commit, afterToolCall observers
   * (not for calls refused before any hook saw them).
   */
  private async answerCall(
    op: RunningOperation,
    state: OperationState,
    commit: StepCommit,
    context: ToolCallHookContext,
    raw: ToolResult,
    mocked: boolean,
    observed: boolean,
    control = mocked,
  ): Promise<'cancelled' | { notify?: () => Promise<void>; toolResults?: HookEventMap['afterStep']['toolResults'] }> {
    const result = control ? await controlResult(this.deps, op, context, raw, mocked) : raw;
    if (result === 'cancelled') return 'cancelled';
    const call = state.pendingToolCalls[0]!;
    state.pendingToolCalls = state.pendingToolCalls.slice(1);
    commit.messages!.push({ role: 'tool', toolCallId: call.id, content: result.content, toolResult: result });
    this.deps.events.emit({ type: 'tool_finished', operationId: op.record.id, stepIndex: context.stepIndex, toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, result, mocked, durationMs: 0 });
    return {
      notify: async () => {
        if (observed && !op.abort.signal.aborted) await this.dispatch(op, 'afterToolCall', { ...context, result, mocked });
      },
      ...(observed ? { toolResults: [{ toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, result }] } : {}),
    };
  }

  /** Writes the empty placeholder of a deferred call; the operation parks once nothing else can run. */
  private deferCall(state: OperationState, commit: StepCommit, toolCallId: string): void {
    state.pendingToolCalls = state.pendingToolCalls.slice(1);
    state.deferredToolCallIds = [...(state.deferredToolCallIds ?? []), toolCallId];
    commit.messages!.push({ role: 'tool', toolCallId, content: '' });
    if (state.pendingToolCalls.length === 0 && !state.approval) commit.status = 'waiting_tool';
  }

  /**
   * Publishes a deferred tool result into its placeholder exactly once, after
   * result control (policies, afterToolCall controls). A duplicate, late or
   * unknown completion changes nothing and resolves `{ published: false }`;
   * the first final result, a denial included, stays. Resumes the operation
   * when nothing else is outstanding. Works after a restart.
   */
  async completeToolCall(operationId: string, toolCallId: string, raw: ToolResult): Promise<{ published: boolean }> {
    const op = await this.get(operationId);
    // Between steps and decisions, one at a time: a completion never overwrites a step's state, nor a step its result.
    try {
      return await this.exclusive(op, () => this.publishDeferred(op, toolCallId, raw));
    } catch (err) {
      if (!isVersionConflict(err)) throw err;
      // This process's copy was out of date (another process committed meanwhile): drop it and publish once more
      // against the stored state. Publishing fills an empty placeholder at most once, so this cannot store it twice.
      this.dropStale(op, err);
      const fresh = await this.get(operationId);
      return this.exclusive(fresh, () => this.publishDeferred(fresh, toolCallId, raw));
    }
  }

  private async publishDeferred(op: RunningOperation, toolCallId: string, raw: ToolResult): Promise<{ published: boolean }> {
    const deferred = op.record.state.deferredToolCallIds ?? [];
    if (TERMINAL.has(op.record.status) || op.abort.signal.aborted || !deferred.includes(toolCallId)) return { published: false };
    const located = locateToolCall(op.messages, toolCallId);
    if (!located) return { published: false };
    const { call } = located;
    const context = toolCallContext(op, call, op.record.state.stepIndex, call.identifier === SUBAGENT_IDENTIFIER ? 'agent' : toolEntryFor(this.deps, op.agent, call)?.tool.toolSource);
    const result = await controlResult(this.deps, op, context, raw, false);
    if (result === 'cancelled') return { published: false };
    const state = copyState(op.record.state);
    state.deferredToolCallIds = deferred.filter((id) => id !== toolCallId);
    const resume = state.deferredToolCallIds.length === 0 && state.pendingToolCalls.length === 0 && !state.approval;
    const status = resume ? 'running' : op.record.status;
    if (!(await this.deps.store.publishToolResult(op.record.id, toolCallId, result, { state, status, expectedVersion: op.record.version }))) return { published: false };
    op.record = { ...op.record, state, status, updatedAt: nowIso(), version: op.record.version + 1 };
    const placeholder = op.messages.find((m) => m.role === 'tool' && m.toolCallId === toolCallId);
    if (placeholder) {
      placeholder.content = result.content;
      placeholder.toolResult = result;
    }
    this.deps.events.emit({ type: 'tool_finished', operationId: op.record.id, stepIndex: context.stepIndex, toolCallId, identifier: call.identifier, apiName: call.apiName, result, mocked: false, durationMs: 0 });
    await this.deps.dispatcher.dispatch(op.record.id, 'afterToolCall', { ...context, result, mocked: false });
    if (status === 'running' && !op.loopActive && !this.stopping) this.launch(op);
    return { published: true };
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
      await this.deps.dispatcher.dispatch(parentId, 'onCallAgentError', {
        ...this.baseEvent(parent),
        agentId: child.record.agentId,
        callerAgentId: parent.agent.id,
        error,
        subOperationId,
      });
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
  private async commit(op: RunningOperation, commit: StepCommit): Promise<void> {
    if (op.stale) throw staleError(op);
    if (commit.expectedVersion === undefined) commit.expectedVersion = op.record.version;
    const written = await this.deps.store.commitStep(op.record.id, commit);
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
  }

  private async fail(op: RunningOperation, err: unknown): Promise<void> {
    if (isVersionConflict(err) || isLeased(err) || op.stale) return this.dropStale(op, err);
    if (TERMINAL.has(op.record.status) || this.stopping) return;
    if (op.abort.signal.aborted) return this.finish(op, 'interrupted');
    this.deps.logger.error('operation failed', { operationId: op.record.id, error: errorMessage(err) });
    const code = err instanceof HookgateError ? err.code : undefined;
    await this.dispatch(op, 'onError', {
      ...this.baseEvent(op),
      errorMessage: errorMessage(err),
      errorType: err instanceof Error ? err.name : typeof err,
      ...(code ? { errorCode: code } : {}),
      ...(err instanceof HookgateError ? { errorDetail: err.details } : {}),
    }).catch(() => undefined);
    await this.finish(op, 'error', { message: errorMessage(err), ...(code ? { code } : {}) });
  }

  /** Ends the operation. With `expectedVersion`, the terminal commit is a compare-and-swap and a conflict throws (nothing is dispatched). */
  private async finish(op: RunningOperation, reason: TerminalReason, error?: { message: string; code?: string }, expectedVersion?: number): Promise<void> {
    if (TERMINAL.has(op.record.status)) return;
    const status = reason === 'error' ? 'error' : reason === 'interrupted' ? 'interrupted' : 'done';
    const state = copyState(op.record.state);
    state.approval = undefined;
    // What never ran never will; dropped so finalState carries no call the gate refused or never reached.
    state.pendingToolCalls = [];
    try {
      await this.commit(op, { state, status, reason, ...(error ? { error } : {}), ...(expectedVersion !== undefined ? { expectedVersion } : {}) });
    } catch (err) {
      if (expectedVersion !== undefined && err instanceof HookgateError && err.code === 'STORE_VERSION_CONFLICT') {
        this.running.delete(op.record.id);
        throw new HookgateError('OPERATION_NOT_WAITING', `operation ${op.record.id} was changed by another process first; nothing was aborted`, { cause: err, details: { operationId: op.record.id } });
      }
      // Another process finished or moved the operation first: its outcome stands, this one announces nothing.
      if (isVersionConflict(err) || op.stale) return this.dropStale(op, err);
      this.deps.logger.error('could not persist the terminal state', { operationId: op.record.id, error: errorMessage(err) });
      op.record = { ...op.record, status, reason };
    }
    const steps = op.record.state.stepIndex;
    try {
      await this.deps.dispatcher.dispatch(op.record.id, 'onComplete', {
        ...this.baseEvent(op),
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
    this.notify(op);
    this.running.delete(op.record.id);
    if (op.record.parentOperationId) {
      await this.bridgeToParent(op, reason).catch((err) =>
        this.deps.logger.error('could not hand a sub-agent result to its parent', { operationId: op.record.id, error: errorMessage(err) }),
      );
    }
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
    if (this.waiters.has(operationId)) this.watchStore(operationId);
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

  /**
   * Resolves the waiters of an operation this process does not run from the
   * store: reads it every `waitPollMs` until each waiter's condition holds
   * (or the runtime shuts down, which rejects them). One watch per operation.
   */
  private watchStore(operationId: string): void {
    if (this.watching.has(operationId)) return;
    this.watching.add(operationId);
    const tick = async (): Promise<void> => {
      try {
        const list = this.waiters.get(operationId);
        if (this.stopping || !list || list.length === 0 || this.running.has(operationId)) return;
        const record = await this.deps.store.getOperation(operationId);
        if (record) {
          const keep = list.filter((w) => {
            if (!this.isSettled(record, w.until)) return true;
            w.resolve(copyRecord(record));
            return false;
          });
          if (keep.length === 0) {
            this.waiters.delete(operationId);
            return;
          }
          this.waiters.set(operationId, keep);
        }
      } catch (err) {
        this.deps.logger.warn('could not read an operation someone waits for', { operationId, error: errorMessage(err) });
      }
      // Not unref'd: a process that only waits for another process's operation stays up until it settles.
      setTimeout(() => void run(), this.waitPollMs);
    };
    const run = (): Promise<void> => tick().then(() => {
      if (!this.waiters.has(operationId) || this.stopping || this.running.has(operationId)) this.watching.delete(operationId);
    });
    void run();
  }

  private notify(op: RunningOperation): void {
    const list = this.waiters.get(op.record.id);
    if (!list) return;
    const keep: Waiter[] = [];
    for (const w of list) {
      if (this.isSettled(op.record, w.until)) w.resolve(copyRecord(op.record));
      else keep.push(w);
    }
    if (keep.length > 0) this.waiters.set(op.record.id, keep);
    else this.waiters.delete(op.record.id);
  }

  /** Hook dispatch for the runtime: a critical delivery failure fails the operation; nothing else does. */
  private async dispatch<T extends HookType>(op: RunningOperation, type: T, event: Omit<HookEventMap[T], 'timestamp'> & { timestamp?: string }): Promise<void> {
    if (!this.deps.dispatcher.mightHandle(op.record.id, type, 'notification')) return;
    const full = (event.timestamp === undefined ? { ...event, timestamp: nowIso() } : event) as HookEventMap[T];
    await this.deps.dispatcher.dispatch(op.record.id, type, full, { signal: op.abort.signal });
  }

  private baseEvent(op: RunningOperation): AgentHookEvent {
    const event: AgentHookEvent = { operationId: op.record.id, threadId: op.record.threadId, agentId: op.record.agentId, stepIndex: op.record.state.stepIndex, timestamp: nowIso() };
    const userId = op.run.runtime?.userId ?? op.run.origin?.userId;
    if (userId !== undefined) event.userId = userId;
    if (op.record.parentOperationId) event.parentOperationId = op.record.parentOperationId;
    return event;
  }
}

/**
 * Takes the operation's turn (see AgentRuntime.exclusive): undefined when it
 * was free and is now held, else a promise that resolves once it is handed
 * over (uncontended, the usual case: no promise and no queue).
 */
function acquireTurn(op: RunningOperation): Promise<void> | undefined {
  if (!op.exclusiveHeld) {
    op.exclusiveHeld = true;
    return undefined;
  }
  return new Promise<void>((resolve) => (op.exclusiveWaiters ??= []).push(resolve));
}

/** Hands the turn straight to the next waiter, or frees it. */
function releaseTurn(op: RunningOperation): void {
  const next = op.exclusiveWaiters?.shift();
  if (next) next();
  else op.exclusiveHeld = false;
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
