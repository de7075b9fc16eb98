import type { AgentDefinition } from '../agent-definition.js';
import type { AgentHook, ToolCallHookContext } from '../hooks/hook-types.js';
import { buildToolCallHookContext, type ToolRunContext } from '../hooks/tool-call-context.js';
import type { Message, ToolCall } from '../messages.js';
import type { MessageRecord, NewMessage, OperationRecord } from '../store.js';
import type { TurnDelivery } from './turn-inbox.js';
import type { ThreadHookCalls } from './thread-hooks-port.js';

/** An operation loaded in this process: its persisted record plus what only lives in memory. */
export interface RunningOperation {
  record: OperationRecord;
  agent: AgentDefinition;
  /** Active (not compacted) messages, summaries first, in model order. */
  messages: MessageRecord[];
  abort: AbortController;
  /** Snapshots of the caller's hooks (sub-agents inherit them); empty when loaded from the store. */
  hooks: readonly AgentHook[];
  run: ToolRunContext;
  /**
   * What the model sees (model-turn.ts promptMessages): built from `messages` (`source`, the array it was built
   * from; `seen`, how many of its messages it holds) and the instructions, appended to turn by turn.
   * Undefined or stale: rebuilt at the next turn.
   */
  prompt?: { source: readonly MessageRecord[]; instructions: string | undefined; messages: Message[]; seen: number };
  /** The loop running in this process, if any. */
  loop?: Promise<void>;
  loopActive?: boolean;
  /** Which launch owns `loopActive` (a later launch's flag is not cleared by an earlier loop's end). */
  loopToken?: object;
  /** Whether a step, a deferred completion or a decision of the operation runs now (AgentRuntime.exclusive). */
  exclusiveHeld?: boolean;
  /** The ones waiting for their turn, in arrival order. */
  exclusiveWaiters?: Array<() => void>;
  /** Queue mode: this loop runs one job's step (`runQueuedStep`); `steps` counts the loop's iterations, and the second ends it. */
  queuedRun?: {
    steps: number;
    /**
     * The store could not be reached during the step (STORE_UNAVAILABLE): the
     * operation is neither failed nor finished here; the job is handed back
     * to the queue, which runs it again from the last commit once the store answers.
     */
    storeDown?: unknown;
  };
  /** Loaded from the store (after a restart): handlers are gone, persisted webhook hooks are read on use. */
  fromStore?: boolean;
  /** Its terminal state is being committed and announced here (AgentRuntime.finish): its waiters are resolved here, after onComplete, not from the store. */
  finishing?: boolean;
  /** A human decision is being applied (a concurrent one is refused). */
  deciding?: boolean;
  /**
   * Another writer committed first (a compare-and-swap refused this
   * process's commit): this copy is out of date, its loop stopped and it is
   * no longer kept; nothing more is written or dispatched from it.
   */
  stale?: boolean;
  /** Messages to join at the next model turn (turn-inbox.ts), and those taken into a step not yet committed. */
  inbox?: TurnDelivery[];
  inboxTaken?: TurnDelivery[];
  /** The thread hooks the operation selects (document 003); undefined when none (nothing runs per step). */
  threadHooks?: ThreadHookCalls;
  /**
   * Messages tool-result hooks injected (`state.injectMessage`), through
   * `before_create_message` already, held until the results of their turn's
   * calls are in the step's commit (tool-call-thread-hooks.ts). Set (to a list)
   * only while such hooks run or hold messages; in memory only.
   */
  heldInjections?: NewMessage[];
  /** Tool calls hooks queued on this operation once it ended (its thread idle): the run they start takes them together (queued-tool-calls.ts). */
  idleQueue?: ToolCall[];
  /** Tool calls thread hooks queued (`state.queueTool`), for the commit of the next step that leaves none pending (queued-tool-calls.ts). */
  queuedTools?: ToolCall[];
  /** Whether tool-result hooks run now (their injections are held). */
  holdingInjections?: boolean;
  /** Why its thread hooks could not be opened here (a selected id this process lacks): the loop fails the operation with it. */
  threadHooksProblem?: unknown;
}

/**
 * Orders active messages for the model: summaries first, then the rest by sequence.
 * Built by `push` into a fresh `[]`, never by spreading: once the caller is optimized, a spread literal comes out as a
 * holey array, and every optimized reader of `op.messages` (the loop, the prompt, the commit) then meets a new array map,
 * deoptimizes and is compiled again (issue 12: a burst of recompiles a few hundred operations into a process).
 */
export function activeMessages(all: readonly MessageRecord[]): MessageRecord[] {
  const out: MessageRecord[] = [];
  for (let i = 0; i < all.length; i++) {
    const m = all[i]!;
    if (m.compactedInto === undefined && m.role === 'summary') out.push(m);
  }
  for (let i = 0; i < all.length; i++) {
    const m = all[i]!;
    if (m.compactedInto === undefined && m.role !== 'summary') out.push(m);
  }
  return out;
}

/** The newest message that asked for `toolCallId`, the call and its index there; searched from the end, without a copy. */
export function locateToolCall(messages: readonly MessageRecord[], toolCallId: string): { message: MessageRecord; call: ToolCall; index: number } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    const index = message.toolCalls?.findIndex((c) => c.id === toolCallId) ?? -1;
    if (index >= 0) return { message, call: message.toolCalls![index]!, index };
  }
  return undefined;
}

/**
 * The tool context the stages of one call share. Its `args` are the call's
 * deep-frozen arguments; every handler gets its own event object built from
 * it, and what runs and is stored comes from the call, never from an event,
 * so a handler that swaps `event.args` changes only its own view.
 */
export function toolCallContext(op: RunningOperation, call: ToolCall, stepIndex: number, toolSource: string | undefined): ToolCallHookContext {
  const located = locateToolCall(op.messages, call.id);
  return buildToolCallHookContext({ call, assistantMessageId: located?.message.id ?? '', callIndex: located?.index ?? 0, stepIndex, run: op.run, toolSource });
}
