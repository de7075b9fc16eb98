import { HookgateError } from '../errors.js';
import type { NewMessage, StepCommit } from '../store.js';
import type { AgentFinishingContext, AgentLifecycleContext, AgentLifecycleOutcome, AgentSource, AgentTurnNarration } from './agent-source.js';
import { boundSourceOf, sourceFailed } from './agent-source-step.js';
import { copyState } from './copy-state.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';

/**
 * The optional lifecycle members of an operation's agent source (`start`,
 * `finishing`, `threadValues`, `settled`), called by the step loop at their
 * points. A source without them (the static source, most plugin sources)
 * costs one lookup per call and changes nothing.
 */

/** What the loop does at a finish decision once the source was asked: go on (commit, then another model turn) or finish (with what to write in the terminal commit). */
export type FinishingDecision = { kind: 'continue'; commit: StepCommit } | { kind: 'finish'; closing: ClosingWrites | undefined };

/** What the terminal commit of a `done` operation writes besides its status: the response metadata and the thread's values. */
export interface ClosingWrites {
  metadata?: Record<string, unknown>;
  threadValues?: Record<string, unknown>;
}

/**
 * The commit of the source's `start` (undefined: nothing to run or write):
 * only before the operation's first step and only once committed. The
 * commit marks the state `sourceStarted`, carries the messages and metadata
 * `start` returned and the thread values the source holds.
 */
export async function sourceStartCommit(deps: RuntimeDeps, op: RunningOperation): Promise<StepCommit | undefined> {
  const { source, sourceId } = boundSourceOf(deps, op);
  const state = op.record.state;
  if (source.start === undefined || state.sourceStarted === true || state.stepIndex !== 0) return undefined;
  const outcome = await askLifecycle(source, sourceId, op, 'start', lifecycleContext(op));
  const messages = outcome?.messages ?? [];
  const threadValues = takeThreadValues(deps, op, messages.length);
  if (messages.length === 0 && outcome?.metadata === undefined && threadValues === undefined) return undefined;
  const next = copyState(state);
  next.sourceStarted = true;
  if (outcome?.metadata !== undefined) next.metadata = outcome.metadata;
  return { state: next, messages: [...messages], ...(threadValues !== undefined ? { threadValues } : {}) };
}

/**
 * What each delivery joining at this model turn brings (the source's
 * `joining`, asked once per delivery in order): the messages that go right
 * after it. Undefined for a source without `joining`. Rejects with
 * AGENT_SOURCE_FAILED / AGENT_SOURCE_INVALID like `start`.
 */
export async function sourceJoining(deps: RuntimeDeps, op: RunningOperation, deliveries: readonly { id: string; content: string }[]): Promise<Array<readonly NewMessage[]> | undefined> {
  const { source, sourceId } = boundSourceOf(deps, op);
  if (source.joining === undefined) return undefined;
  const after: Array<readonly NewMessage[]> = [];
  for (const d of deliveries) {
    const outcome = await askLifecycle(source, sourceId, op, 'joining', { ...lifecycleContext(op), delivery: { id: d.id, content: d.content } });
    const messages = outcome?.messages ?? [];
    if (messages.some((m) => m === null || typeof m !== 'object' || m.role !== 'user' || typeof m.content !== 'string')) {
      throw new HookgateError('AGENT_SOURCE_INVALID', `agent source "${sourceId}" returned from joining messages that are not user messages`, { details: { source: sourceId } });
    }
    after.push(messages);
  }
  return after;
}

/**
 * Asks the source's `finishing` where the operation would finish `done`:
 * messages returned continue it (the commit appends them and counts the
 * continuation); otherwise it finishes with the metadata returned and the
 * thread values the source holds. Undefined for a source without `finishing`.
 */
export async function sourceFinishing(deps: RuntimeDeps, op: RunningOperation): Promise<FinishingDecision | undefined> {
  const { source, sourceId } = boundSourceOf(deps, op);
  if (source.finishing === undefined) return undefined;
  const state = op.record.state;
  const context: AgentFinishingContext = { ...lifecycleContext(op), continuations: state.finishContinuations ?? 0, toolCalls: operationToolCalls(op), usage: state.usage };
  const outcome = await askLifecycle(source, sourceId, op, 'finishing', context);
  const messages = outcome?.messages ?? [];
  const threadValues = takeThreadValues(deps, op, messages.length);
  if (messages.length === 0) return { kind: 'finish', closing: { ...(outcome?.metadata !== undefined ? { metadata: outcome.metadata } : {}), ...(threadValues !== undefined ? { threadValues } : {}) } };
  const next = copyState(state);
  next.finishContinuations = (state.finishContinuations ?? 0) + 1;
  if (outcome?.metadata !== undefined) next.metadata = outcome.metadata;
  return { kind: 'continue', commit: { state: next, messages: [...messages], ...(threadValues !== undefined ? { threadValues } : {}) } };
}

/**
 * The thread values the operation's source changed since it was last asked
 * (undefined: unchanged, or a source that keeps none), for a commit that
 * appends `appending` messages of the operation.
 */
export function takeThreadValues(deps: RuntimeDeps, op: RunningOperation, appending: number): Record<string, unknown> | undefined {
  const { source } = boundSourceOf(deps, op);
  if (source.threadValues === undefined) return undefined;
  // Lazy: only a source with writes to place reads it, so a step without them walks no messages.
  return source.threadValues(op.record.agentId, {
    operationId: op.record.id,
    threadId: op.record.threadId,
    get seqAfterCommit() {
      return lastSeqOf(op) + appending;
    },
  });
}

/**
 * The `seq` of the operation's newest stored message (its prompt at least).
 * Model order puts summaries first and the rest in thread order, so the
 * operation's (the thread's newest) messages are the tail: the summaries and
 * that tail are looked at, not the whole conversation.
 */
function lastSeqOf(op: RunningOperation): number {
  let last = 0;
  const id = op.record.id;
  const messages = op.messages;
  for (let i = 0; i < messages.length && messages[i]!.role === 'summary'; i++) {
    if (messages[i]!.operationId === id && messages[i]!.seq > last) last = messages[i]!.seq;
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.operationId !== id) break;
    if (m.seq > last) last = m.seq;
  }
  return last;
}

/**
 * What the operation's source says at this model turn (`turnMessages`;
 * nothing for a source without it): the messages and, when given, the
 * `sourceState` for the turn's commit. A throw is AGENT_SOURCE_FAILED naming
 * the source; an answer whose messages are not user messages
 * AGENT_SOURCE_INVALID.
 */
export function sourceTurnNarration(deps: RuntimeDeps, op: RunningOperation): { readonly messages: readonly NewMessage[]; readonly sourceState?: unknown } {
  const { source, sourceId } = boundSourceOf(deps, op);
  if (source.turnMessages === undefined) return SILENT;
  const record = op.record;
  let said: AgentTurnNarration | undefined;
  try {
    said = source.turnMessages(record.agentId, { operationId: record.id, threadId: record.threadId, stepIndex: record.state.stepIndex, operation: record, definition: op.agent, messages: op.messages });
  } catch (err) {
    throw sourceFailed(sourceId, record.agentId, record.state.stepIndex, err, 'narrate the model turn of');
  }
  if (said === undefined) return SILENT;
  const messages: unknown = said !== null && typeof said === 'object' ? (said.messages ?? []) : undefined;
  if (!Array.isArray(messages) || messages.some((m: NewMessage | null) => m === null || typeof m !== 'object' || typeof m.content !== 'string' || m.role !== 'user')) {
    throw new HookgateError('AGENT_SOURCE_INVALID', `agent source "${sourceId}" returned from turnMessages something that is not { messages?: user messages, sourceState? }`, { details: { source: sourceId } });
  }
  return said.sourceState !== undefined ? { messages, sourceState: said.sourceState } : { messages };
}

const SILENT = Object.freeze({ messages: Object.freeze([]) as readonly NewMessage[] });

/** Tells the source the operation is terminal here; a throw is logged, never raised. */
export function sourceSettled(deps: RuntimeDeps, op: RunningOperation): void {
  try {
    const { source } = boundSourceOf(deps, op);
    source.settled?.(op.record.agentId, { operationId: op.record.id, threadId: op.record.threadId });
  } catch (err) {
    // The operation is terminal and stored: nothing about the source may undo or hide that.
    deps.logger.warn('an agent source failed when told an operation settled', { operationId: op.record.id, error: err instanceof Error ? err.message : String(err) });
  }
}

function lifecycleContext(op: RunningOperation): AgentLifecycleContext {
  const record = op.record;
  return { operationId: record.id, threadId: record.threadId, stepIndex: record.state.stepIndex, operation: record, definition: op.agent, messages: op.messages, signal: op.abort.signal };
}

async function askLifecycle<C extends AgentLifecycleContext>(
  source: AgentSource,
  sourceId: string,
  op: RunningOperation,
  member: 'start' | 'finishing' | 'joining',
  context: C,
): Promise<AgentLifecycleOutcome | undefined> {
  try {
    const outcome = await (source[member] as (ref: string, context: C) => AgentLifecycleOutcome | undefined | Promise<AgentLifecycleOutcome | undefined>).call(source, op.record.agentId, context);
    if (outcome !== undefined && (outcome === null || typeof outcome !== 'object' || (outcome.messages !== undefined && !Array.isArray(outcome.messages)))) {
      throw new HookgateError('AGENT_SOURCE_INVALID', `agent source "${sourceId}" returned from ${member} something that is not { messages?, metadata? }`, { details: { source: sourceId } });
    }
    return outcome;
  } catch (err) {
    if (err instanceof HookgateError && err.code === 'AGENT_SOURCE_INVALID') throw err;
    throw sourceFailed(sourceId, op.record.agentId, context.stepIndex, err, member === 'finishing' ? 'finish' : member === 'joining' ? 'join a delivery into' : 'start');
  }
}

/** Every tool call of this operation (not earlier operations of the thread), with whether its published result was an error. */
function operationToolCalls(op: RunningOperation): AgentFinishingContext['toolCalls'] {
  const failed = new Set<string>();
  const calls: Array<{ id: string; identifier: string; apiName: string }> = [];
  for (const m of op.messages) {
    if (m.operationId !== op.record.id) continue;
    if (m.role === 'assistant' && m.toolCalls) for (const c of m.toolCalls) calls.push(c);
    else if (m.role === 'tool' && m.toolCallId !== undefined && m.toolResult?.success === false) failed.add(m.toolCallId);
  }
  return calls.map((c) => ({ identifier: c.identifier, apiName: c.apiName, isError: failed.has(c.id) }));
}
