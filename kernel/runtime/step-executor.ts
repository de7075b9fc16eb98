import type { ThreadHookHost } from './thread-hooks-port.js';
import type { HookEventMap, StepKind } from '../hooks/hook-types.js';
import type { Usage } from '../messages.js';
import type { OperationState, StepCommit } from '../store.js';
import type { ExecAgentOptions } from './exec-agent-options.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';

/**
 * One step in the making: the next persisted state (a copy of the
 * operation's, `stepIndex` already advanced), the one commit that will write
 * it with the step's messages, what `afterStep` reports, the usage it cost,
 * and the effects to run once the commit is stored (streamed events, observer
 * hooks). An executor fills it in; the step loop commits it (compare-and-swap
 * on the state version), then runs `effects`, then dispatches `afterStep`.
 */
export interface StepDraft {
  readonly kind: StepKind;
  /** The index of the step being run (the state's, before it advances). */
  readonly stepIndex: number;
  readonly state: OperationState;
  readonly commit: StepCommit & { messages: NonNullable<StepCommit['messages']> };
  readonly after: Partial<HookEventMap['afterStep']>;
  usage: Usage;
  /** Runs after the commit, in order: what the step streams and tells observers only once it is stored. */
  effects?: () => Promise<void>;
}

/** What executors use beyond the kernel's dependencies: starting an operation (a sub-agent's). */
export interface StepServices {
  readonly deps: RuntimeDeps;
  startOperation(options: ExecAgentOptions): Promise<string>;
  /** The thread hook host of an operation (a sub-agent's, for its parent's `after_subagent_created`): the one this process runs, else loaded. */
  threadHookHost(operationId: string): Promise<ThreadHookHost>;
  /**
   * Queue mode: asked right before a tool starts; false when this process no
   * longer holds the operation's lease (an abort from another process seized
   * it), and the step is then cancelled without running the tool. Absent in
   * embedded mode (the process that runs the loop is the one that aborts it).
   */
  mayStartTool?(op: RunningOperation): Promise<boolean>;
}

/** An executor's answer: the draft is ready to commit, or the operation was aborted meanwhile (nothing is committed). */
export type StepOutcome = 'ready' | 'cancelled';

/**
 * One step kind: from the operation as persisted (its record, its thread's
 * messages, the agent of this step) and the dependencies, to the draft of
 * one commit plus its effects. It writes nothing itself.
 */
export type StepExecutor = (services: StepServices, op: RunningOperation, draft: StepDraft) => Promise<StepOutcome>;
