import { nowIso } from '../clock.js';
import type { ToolCallHookContext } from '../hooks/hook-types.js';
import type { ToolCall, ToolResult } from '../messages.js';
import { TERMINAL_STATUSES, type NewMessage } from '../store.js';
import { SUBAGENT_IDENTIFIER } from './call-facts.js';
import { recountConversation } from './conversation-tokens.js';
import { copyState } from './copy-state.js';
import { locateToolCall, toolCallContext, type RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { StepDraft } from './step-executor.js';
import { toolEntryFor } from './tool-call-gate.js';
import { controlResult } from './tool-result-control.js';
import { releaseHeldInjections, toolCallDone, toolCallsWatched } from './tool-call-thread-hooks.js';

/** How a result came to be: mocked by a hook, seen by hooks at all (a call refused before any hook saw it is not), the tool's error. */
export interface PublicationFacts {
  mocked: boolean;
  observed: boolean;
  threw?: string;
  durationMs: number;
}

/**
 * The last stage of a tool call, within its step: the result is stored first
 * (its tool message goes into the step's one commit), then streamed
 * (`tool_finished`, after the commit), then observers run (onToolCallError,
 * afterToolCall); the model gets it at its next turn, from the stored
 * conversation. Nothing is streamed or observed for a commit that is refused.
 */
export function publishInStep(deps: RuntimeDeps, op: RunningOperation, draft: StepDraft, context: ToolCallHookContext, call: ToolCall, result: ToolResult, facts: PublicationFacts): void {
  draft.state.pendingToolCalls = draft.state.pendingToolCalls.slice(1);
  // Only the tool's own successful answer may end the operation: not a mock, a denial or a tool error.
  if (result.endsOperation === true && result.success && !facts.mocked && facts.threw === undefined) draft.state.endRequested = true;
  draft.commit.messages.push({ role: 'tool', toolCallId: call.id, content: result.content, toolResult: result });
  if (op.heldInjections !== undefined) releaseHeldInjections(op, draft);
  if (facts.observed) draft.after.toolResults = [{ toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, result }];
  const operationId = op.record.id;
  draft.effects = async () => {
    deps.events.emit({
      type: 'tool_finished',
      operationId,
      stepIndex: context.stepIndex,
      toolCallId: call.id,
      identifier: call.identifier,
      apiName: call.apiName,
      result,
      mocked: facts.mocked,
      durationMs: facts.durationMs,
    });
    // Nothing arrives after onComplete; refused calls reach no hook.
    if (op.abort.signal.aborted || !facts.observed) return;
    if (facts.threw !== undefined) await deps.dispatcher.dispatch(operationId, 'onToolCallError', { ...context, error: facts.threw });
    await deps.dispatcher.dispatch(operationId, 'afterToolCall', { ...context, result, mocked: facts.mocked });
  };
}

/** Writes the empty placeholder of a deferred call into the step's commit; the operation parks once nothing else can run. */
export function deferInStep(draft: StepDraft, toolCallId: string, op?: RunningOperation): void {
  const state = draft.state;
  state.pendingToolCalls = state.pendingToolCalls.slice(1);
  state.deferredToolCallIds = [...(state.deferredToolCallIds ?? []), toolCallId];
  draft.commit.messages.push({ role: 'tool', toolCallId, content: '' });
  if (op?.heldInjections !== undefined) releaseHeldInjections(op, draft);
  if (state.pendingToolCalls.length === 0 && !state.approval) draft.commit.status = 'waiting_tool';
}

/**
 * What one completion decided before the store took it: the result after
 * result control and document 003's `tool_call_done` and result hooks, and
 * the messages those hooks injected. Kept by the caller across a retry on a
 * fresh copy of the operation (a version conflict), so controls and hooks
 * run once per result, never once per attempt.
 */
export interface PreparedCompletion {
  result?: ToolResult;
  held?: NewMessage[];
}

/**
 * Publishes a deferred result into its placeholder exactly once, in the same
 * order as a result of the step: result control, then document 003's
 * `tool_call_done` event and hooks and the result hooks (after_tool_call_*,
 * before_store_tool_result: their result is the one stored), then the store
 * (the placeholder is filled with a compare-and-swap on the state version, at
 * most once), then the stream, then afterToolCall observers. Messages the
 * result hooks inject are held on the operation (the caller stores them once
 * the turn's calls are all answered). Resolves `runnable: true` when the
 * operation is `running` afterwards (nothing else outstanding, or it never
 * parked): the caller launches it unless another process runs it (the model
 * gets the result at the next turn). A duplicate, late or unknown completion
 * changes nothing, runs no hook and resolves `published: false`.
 */
export async function publishDeferred(deps: RuntimeDeps, op: RunningOperation, toolCallId: string, raw: ToolResult, prepared: PreparedCompletion = {}): Promise<{ published: boolean; runnable?: boolean }> {
  const deferred = op.record.state.deferredToolCallIds ?? [];
  if (TERMINAL_STATUSES.has(op.record.status) || op.abort.signal.aborted || !deferred.includes(toolCallId)) return { published: false };
  const located = locateToolCall(op.messages, toolCallId);
  if (!located) return { published: false };
  const { call } = located;
  const context = toolCallContext(op, call, op.record.state.stepIndex, call.identifier === SUBAGENT_IDENTIFIER ? 'agent' : toolEntryFor(deps, op.agent, call)?.tool.toolSource);
  let result = prepared.result;
  if (result === undefined) {
    const controlled = await controlResult(deps, op, context, raw, false);
    if (controlled === 'cancelled') return { published: false };
    result = toolCallsWatched(deps, op) ? await toolCallDone(deps, op, call, controlled) : controlled;
    prepared.result = result;
    prepared.held = op.heldInjections;
  } else if (prepared.held !== undefined && op.heldInjections === undefined) {
    // A retry on a fresh copy: the injections of the first attempt's hooks go with the result.
    op.heldInjections = prepared.held;
  }
  const state = copyState(op.record.state);
  state.deferredToolCallIds = deferred.filter((id) => id !== toolCallId);
  const resume = state.deferredToolCallIds.length === 0 && state.pendingToolCalls.length === 0 && !state.approval;
  const status = resume ? 'running' : op.record.status;
  if (!(await deps.store.publishToolResult(op.record.id, toolCallId, result, { state, status, expectedVersion: op.record.version }))) return { published: false };
  op.record = { ...op.record, state, status, updatedAt: nowIso(), version: op.record.version + 1 };
  fillPlaceholder(op, toolCallId, result);
  deps.events.emit({ type: 'tool_finished', operationId: op.record.id, stepIndex: context.stepIndex, toolCallId, identifier: call.identifier, apiName: call.apiName, result, mocked: false, durationMs: 0 });
  await deps.dispatcher.dispatch(op.record.id, 'afterToolCall', { ...context, result, mocked: false });
  return { published: true, runnable: status === 'running' };
}

/**
 * Fills the in-memory placeholder of a deferred call with its published
 * result (published here or, taken in by a rebase, by another process). The
 * prompt and the token count held the empty placeholder: rebuilt at the next turn.
 */
export function fillPlaceholder(op: RunningOperation, toolCallId: string, result: ToolResult): void {
  const placeholder = op.messages.find((m) => m.role === 'tool' && m.toolCallId === toolCallId);
  if (!placeholder) return;
  placeholder.content = result.content;
  placeholder.toolResult = result;
  op.prompt = undefined;
  recountConversation(op.messages);
}
