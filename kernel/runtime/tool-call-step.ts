import { errorMessage } from '../errors.js';
import type { AfterToolCallEvent, ControlVerdict, PendingTool, ToolCallHookContext } from '../hooks/hook-types.js';
import { buildToolCallHookContext } from '../hooks/tool-call-context.js';
import type { ToolCall, ToolResult } from '../messages.js';
import { SUBAGENT_IDENTIFIER } from './next-step.js';
import { locateToolCall, type RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { blockedResult, gateToolCall, toolEntryFor } from './tool-call-gate.js';

/** What one tool call produced. */
export type ToolCallOutcome =
  /** `observed`: false for a call refused before any hook saw it (no afterStep toolResults, no afterToolCall). */
  | { kind: 'published'; result: ToolResult; mocked: boolean; context: ToolCallHookContext; threw?: string; observed: boolean; notify: () => Promise<void> }
  | { kind: 'needs_approval'; pending: PendingTool }
  | { kind: 'deferred'; context: ToolCallHookContext }
  | { kind: 'cancelled' };

/**
 * One tool call, end to end, in the order of ARCHITECTURE.md: context, the
 * gate (tool-call-gate.ts), execution, result control. The caller publishes
 * the returned result (store, stream, model) and only then runs `notify`
 * (afterToolCall / onToolCallError observers).
 */
export async function runToolCall(deps: RuntimeDeps, op: RunningOperation, call: ToolCall, stepIndex: number): Promise<ToolCallOutcome> {
  const operationId = op.record.id;
  const signal = op.abort.signal;
  // Sub-agent calls reach this step only when the gate refuses them; no tool source answers for `agents/`.
  const isSubagent = call.identifier === SUBAGENT_IDENTIFIER;
  const entry = isSubagent ? undefined : toolEntryFor(deps, op.agent, call);
  const context = toolCallContext(op, call, stepIndex, isSubagent ? 'agent' : entry?.tool.toolSource);

  // Synchronous when every stage was (no policy, no control webhook, sync handlers): no microtask for it.
  const gated = gateToolCall(deps, op, call, context, entry);
  const verdict = gated instanceof Promise ? await gated : gated;
  if (verdict.kind === 'cancelled') return { kind: 'cancelled' };
  if (verdict.kind === 'needs_approval') return verdict;
  if (verdict.kind === 'denied') return published(deps, op, context, verdict.result, false, undefined, undefined, verdict.observed);

  let result: ToolResult;
  let threw: string | undefined;
  deps.events.emit({ type: 'tool_started', operationId, stepIndex, toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, args: call.args });
  const started = performance.now();
  if (verdict.kind === 'mocked') {
    result = verdict.result;
  } else {
    try {
      // The tool gets exactly what the gates saw: the call's deep-frozen arguments, which nobody can change.
      const out = await entry!.source.execute(
        { identifier: call.identifier, apiName: call.apiName, args: call.args },
        { operationId, toolCallId: call.id, agentId: op.agent.id, userId: context.userId, signal },
      );
      if (typeof out === 'object' && 'deferred' in out && out.deferred === true) return { kind: 'deferred', context };
      const executionTime = Math.round(performance.now() - started);
      result = typeof out === 'string' ? { content: out, success: true, executionTime } : { success: true, ...(out as { content: string }), executionTime };
    } catch (err) {
      threw = errorMessage(err);
      result = { content: `Error: ${threw}`, success: false, error: 'tool_error', executionTime: Math.round(performance.now() - started) };
    }
  }
  if (signal.aborted) return { kind: 'cancelled' };
  return published(deps, op, context, result, verdict.kind === 'mocked', threw, started, true);
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

/**
 * Result control (policies, then afterToolCall controls) before anything is
 * published. A deny replaces the result; it does not undo side effects.
 */
export async function controlResult(deps: RuntimeDeps, op: RunningOperation, context: ToolCallHookContext, result: ToolResult, mocked: boolean): Promise<ToolResult | 'cancelled'> {
  const signal = op.abort.signal;
  let current = result;
  for (const policy of deps.policies) {
    if (policy.mayDecide?.('afterToolCall') === false) continue;
    const decision = await policy.evaluateToolResult({ ...context, result: current }, signal);
    if (decision.effect === 'deny') return blockedResult(decision.reason ?? 'Blocked by policy.', decision.classification ?? 'hook_denied');
    if (decision.redactedResult) current = decision.redactedResult;
  }
  if (!deps.dispatcher.mightHandle(op.record.id, 'afterToolCall', 'control')) return current;
  const event: AfterToolCallEvent = { ...context, result: current, mocked };
  const verdict: ControlVerdict = await deps.dispatcher.evaluateAfterToolCall(op.record.id, event, signal);
  if (verdict.decision === 'cancelled') return 'cancelled';
  if (verdict.decision === 'blocked') return blockedResult(verdict.reason, verdict.classification);
  return current;
}

async function published(
  deps: RuntimeDeps,
  op: RunningOperation,
  context: ToolCallHookContext,
  raw: ToolResult,
  mocked: boolean,
  threw: string | undefined,
  started: number | undefined,
  observed: boolean,
): Promise<ToolCallOutcome> {
  // No `started`: a denial before execution, which gets no result control.
  const result = started === undefined ? raw : await controlResult(deps, op, context, raw, mocked);
  if (result === 'cancelled') return { kind: 'cancelled' };
  const operationId = op.record.id;
  deps.events.emit({
    type: 'tool_finished',
    operationId,
    stepIndex: context.stepIndex,
    toolCallId: context.toolCallId,
    identifier: context.identifier,
    apiName: context.apiName,
    result,
    mocked,
    durationMs: started === undefined ? 0 : Math.round(performance.now() - started),
  });
  const notify = async () => {
    if (op.abort.signal.aborted || !observed) return; // nothing arrives after onComplete; refused calls reach no hook
    if (threw !== undefined) {
      await deps.dispatcher.dispatch(operationId, 'onToolCallError', { ...context, error: threw });
    }
    await deps.dispatcher.dispatch(operationId, 'afterToolCall', { ...context, result, mocked });
  };
  return { kind: 'published', result, mocked, context, threw, observed, notify };
}
