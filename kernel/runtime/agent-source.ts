import type { AgentDefinition } from '../agent-definition.js';
import type { Usage } from '../messages.js';
import type { MessageRecord, NewMessage, OperationRecord } from '../store.js';
import type { ToolEntry } from './call-facts.js';

/**
 * What an operation's agent is for one step: the instructions and model of
 * the next model call, the tools that exist for the step and the allow-list,
 * approval requirement, limits, compaction and sub-agents the step applies.
 * An agent source returns one before every step; the gate, the next-step
 * decision and the model turn of that step read nothing else.
 *
 * A view is read-only once returned: the runtime validates it the first time
 * it sees the object and remembers what it derived per object, so a source
 * that returns the same view again costs nothing (return a new object when
 * something changes, never change a returned one).
 */
export interface AgentView {
  /** The system instructions the model gets (none: no system message). */
  readonly instructions?: string;
  /** The model block of the agent file: `provider`, `name`, `temperature`, `pricing`, provider options. */
  readonly model: AgentDefinition['model'];
  /**
   * The tools that exist for this step, each with the source that runs it:
   * a list, or a map keyed `identifier/apiName`. The model is offered the
   * ones the allow-list covers; a call of a tool that is not here is refused
   * at the gate with `tool_not_found`.
   */
  readonly tools: readonly ToolEntry[] | ReadonlyMap<string, ToolEntry>;
  /**
   * The allow-list (`identifier/apiName`, `identifier/*`, `*`): a call outside
   * it is refused at the gate with `tool_not_allowed`, before anything else
   * sees it. Empty: no tool may be called.
   */
  readonly allowList: readonly string[];
  /** Tools that need a human's approval before they run (the agent file's `approval`). */
  readonly approval?: AgentDefinition['approval'];
  /** Step, token and cost limits (the agent file's `limits`). */
  readonly limits?: AgentDefinition['limits'];
  /** When to compact the conversation (the agent file's `compaction`). */
  readonly compaction?: AgentDefinition['compaction'];
  /**
   * The operation's work is a compaction: once a `compress_context` step of
   * this view committed a summary, the operation finishes (reason `done`)
   * instead of calling the model again. A failed summarization does not end
   * it (the limits still do). What `harness.compact()` runs with.
   */
  readonly endAfterCompaction?: boolean;
  /** Sub-agents the model may call as `agents/<id>` (defined agents, run from the static source). */
  readonly subagents?: readonly string[];
  /** A description, stored with the operation's definition. */
  readonly description?: string;
}

/** What a source is told when asked for the thread values of a commit (`AgentSource.threadValues`). */
export interface AgentThreadValuesContext {
  readonly operationId: string;
  readonly threadId: string;
  /** The operation's last message `seq` after the commit about to be written (its own messages counted). */
  readonly seqAfterCommit: number;
}

/** What a source is told when asked for a view. */
export interface AgentSourceContext {
  /** The operation the view is for. */
  readonly operationId: string;
  /** The operation's thread. */
  readonly threadId: string;
  /** The step about to run (0 for the first; also 0 at start). */
  readonly stepIndex: number;
  /**
   * The operation as stored when the step begins (state, status, context,
   * user), not a copy: do not change it. Undefined at start, when the source
   * is asked for the definition the operation will store.
   */
  readonly operation: Readonly<OperationRecord> | undefined;
  /**
   * The definition the operation stored at start (for the static source, the
   * agent file or `kernel.agents.define` definition it runs). Undefined at
   * start.
   */
  readonly definition: AgentDefinition | undefined;
  /** The conversation the model sees before this step (active messages, model order; empty at start). Do not change it. */
  readonly messages: readonly MessageRecord[];
  /** The operation that started this one as a sub-agent (also at start, when `operation` is undefined); absent for a top-level operation. */
  readonly parentOperationId?: string;
}

/**
 * Where an operation's agent comes from, read fresh before every step. YAML
 * agents and `kernel.agents.define` agents are the static source (id
 * `static`); a plugin adds its own (agent functions that are rendered before
 * every model call, tools that appear at run time) through the `AgentSources`
 * token or `kernel.agentSources.add`, and an operation names it with
 * `execAgent({ agentSource, agentId })`.
 *
 * `resolve` is called once at start (the view becomes the definition the
 * operation stores; a throw rejects `execAgent` and nothing is stored) and
 * then before every step, with the operation's agent id as `ref`. A throw
 * or a rejection there ends the operation in error (`AGENT_SOURCE_FAILED`,
 * naming the source); a view that is not valid, `AGENT_SOURCE_INVALID`.
 * Return synchronously when nothing is asynchronous: the step then awaits
 * nothing for it.
 */
export interface AgentSource {
  /** Lowercase letters, digits, `-`, `_`, `.`; stored with every operation that runs from the source. */
  readonly id: string;
  resolve(ref: string, context: AgentSourceContext): AgentView | Promise<AgentView>;
  /**
   * Optional: called once per operation, after the view of its first step was
   * read and before that step runs (a resumed operation whose start committed
   * is not started again; one that crashed before is: at least once). What it
   * returns is one commit: `messages` go in front of the model before its
   * first turn, `metadata` becomes the operation's `state.metadata`, and the
   * thread values the source holds then (`threadValues`) are written with it.
   * A throw or rejection ends the operation in error (AGENT_SOURCE_FAILED).
   */
  start?(ref: string, context: AgentLifecycleContext): AgentLifecycleOutcome | undefined | Promise<AgentLifecycleOutcome | undefined>;
  /**
   * Optional: called where the operation would finish `done` (the model
   * answered without tool calls). Messages returned continue the operation
   * instead (committed, then the loop goes on with another model turn, and
   * `state.finishContinuations` grows by one); none: it finishes, with
   * `metadata` as its `state.metadata` in the terminal commit. A throw or
   * rejection ends the operation in error (AGENT_SOURCE_FAILED).
   */
  finishing?(ref: string, context: AgentFinishingContext): AgentLifecycleOutcome | undefined | Promise<AgentLifecycleOutcome | undefined>;
  /**
   * Optional: called at a model turn that takes a joining delivery
   * (`Operations.deliverAtNextTurn`), once per delivery in arrival order,
   * before the model is asked. `messages` returned go in front of the model
   * right after that delivery and are stored with it in the turn's commit
   * (user role); `metadata` is ignored (a joined delivery is part of the
   * response already started). A throw or rejection ends the operation in
   * error (AGENT_SOURCE_FAILED); the deliveries it took were not stored, so
   * their senders deliver them otherwise.
   */
  joining?(ref: string, context: AgentJoiningContext): AgentLifecycleOutcome | undefined | Promise<AgentLifecycleOutcome | undefined>;
  /**
   * Optional, synchronous: the thread's values to write with the commit the
   * runtime is about to make for this operation (a step, a lifecycle commit,
   * the terminal commit), when the source changed them since it was last
   * asked; undefined: unchanged. What it returns is written in the same
   * transaction (`StepCommit.threadValues`). `context.seqAfterCommit` is the
   * `seq` the operation's last message will have once the commit is written
   * (what the commit appends included), so a source can place what it
   * writes relative to the messages committed with it.
   */
  threadValues?(ref: string, context: AgentThreadValuesContext): Record<string, unknown> | undefined;
  /**
   * Optional, synchronous: what the source says at the model turn about to
   * run (a turn boundary), asked after the step's view was read. `messages`
   * go into that turn's prompt and its commit (user role, in order, before
   * any delivery joining at the same boundary); `sourceState` (a JSON value,
   * when given) replaces `state.sourceState` in the same commit, so a
   * message and what the source recorded about it are stored together or
   * not at all. The source reads the previous one from
   * `context.operation.state.sourceState` (a new operation on a thread starts
   * with its previous operation's). Undefined: nothing. A throw ends the
   * operation in error (AGENT_SOURCE_FAILED).
   */
  turnMessages?(ref: string, context: AgentSourceContext): AgentTurnNarration | undefined;
  /** Optional: the operation reached a terminal status in this process (the source may forget what it kept for it). Never throws into the runtime. */
  settled?(ref: string, context: Pick<AgentSourceContext, 'operationId' | 'threadId'>): void;
}

/** What `start` and `finishing` are told: the step context (operation stored) and the operation's abort signal. */
export interface AgentLifecycleContext extends AgentSourceContext {
  readonly operation: Readonly<OperationRecord>;
  readonly signal: AbortSignal;
}

/** What `finishing` is told besides: how often it continued the operation already, and what the operation did. */
export interface AgentFinishingContext extends AgentLifecycleContext {
  /** `state.finishContinuations` (0 the first time). */
  readonly continuations: number;
  /** Every tool call this operation made, in order, with whether its result was an error. */
  readonly toolCalls: ReadonlyArray<{ readonly identifier: string; readonly apiName: string; readonly isError: boolean }>;
  /** The operation's usage so far. */
  readonly usage: Usage;
}

/** What `joining` is told besides: the delivery joining at this turn (its stored message id and text). */
export interface AgentJoiningContext extends AgentLifecycleContext {
  readonly delivery: { readonly id: string; readonly content: string };
}

/** What a source says at a model turn: messages in front of the model, and the state it keeps about them. */
export interface AgentTurnNarration {
  readonly messages?: readonly NewMessage[];
  readonly sourceState?: unknown;
}

/** What a lifecycle member adds to the operation: messages (user role, in order) and the response metadata (replacing `state.metadata`). */
export interface AgentLifecycleOutcome {
  readonly messages?: readonly NewMessage[];
  readonly metadata?: Record<string, unknown>;
}

/** The id of the source of agent files and `kernel.agents.define` agents (also of every operation stored before agent sources). */
export const STATIC_AGENT_SOURCE_ID = 'static';

/**
 * Where an operation keeps the id of its agent source (in its stored
 * context; absent: the static source). The agent ref is the operation's
 * `agentId`.
 */
export const AGENT_SOURCE_CONTEXT_KEY = 'hookgate.agentSource';
