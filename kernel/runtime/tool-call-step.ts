import { errorMessage } from '../errors.js';
import { toolListCovers } from '../agent-definition.js';
import type { AfterToolCallEvent, ControlVerdict, PendingTool, ToolCallHookContext } from '../hooks/hook-types.js';
import { buildToolCallHookContext } from '../hooks/tool-call-context.js';
import type { ToolCall, ToolResult } from '../messages.js';
import { locateToolCall, type RunningOperation } from './running-operation.js';
import { toolKey, type RuntimeDeps } from './runtime-deps.js';

/** What one tool call produced. */
export type ToolCallOutcome =
  | { kind: 'published'; result: ToolResult; mocked: boolean; context: ToolCallHookContext; threw?: string; notify: () => Promise<void> }
  | { kind: 'needs_approval'; pending: PendingTool }
  | { kind: 'deferred'; context: ToolCallHookContext }
  | { kind: 'cancelled' };

/**
 * One tool call, end to end, in the order of ARCHITECTURE.md: context, policy
 * and webhook controls, mocks, execution, result control. The caller publishes
 * the returned result (store, stream, model) and only then runs `notify`
 * (afterToolCall / onToolCallError observers).
 */
export async function runToolCall(deps: RuntimeDeps, op: RunningOperation, call: ToolCall, stepIndex: number): Promise<ToolCallOutcome> {
  const operationId = op.record.id;
  const signal = op.abort.signal;
  const located = locateToolCall(op.messages, call.id);
  const entry = deps.tools.get(toolKey(call.identifier, call.apiName));
  const context = buildToolCallHookContext({
    call,
    assistantMessageId: located?.message.id ?? '',
    callIndex: located?.index ?? 0,
    stepIndex,
    run: op.run,
    toolSource: entry?.tool.toolSource,
  });

  // 1. Policies (in-process controls), then webhook controls. A local deny costs no HTTP call.
  const approved = op.record.state.approvedToolCallIds.includes(call.id);
  for (const policy of deps.policies) {
    if (policy.mayDecide?.('beforeToolCall') === false) continue;
    const decision = await policy.evaluateToolCall(context, signal);
    if (decision.effect === 'deny') return published(deps, op, context, blockedResult(decision.reason ?? 'Blocked by policy.', 'hook_denied'), false);
    if (decision.effect === 'ask' && !approved) {
      return { kind: 'needs_approval', pending: { toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, args: call.args, reason: decision.reason } };
    }
  }
  const verdict: ControlVerdict = deps.dispatcher.mightHandle(operationId, 'beforeToolCall', 'control')
    ? await deps.dispatcher.evaluateToolCall(operationId, context, signal)
    : { decision: 'allow' };
  if (verdict.decision === 'cancelled') return { kind: 'cancelled' };
  if (verdict.decision === 'blocked') return published(deps, op, context, blockedResult(verdict.reason, verdict.classification), false);

  // 2. Mocks and observation webhooks (in the background; they never block execution).
  if (deps.dispatcher.mightHandle(operationId, 'beforeToolCall', 'webhook-notification')) {
    void deps.dispatcher.dispatch(operationId, 'beforeToolCall', context as never, { signal, webhooksOnly: true }).catch((err) =>
      deps.logger.warn('beforeToolCall observation failed', { operationId, error: errorMessage(err) }),
    );
  }
  const mock = await deps.dispatcher.dispatchBeforeToolCall(operationId, context);
  if (signal.aborted) return { kind: 'cancelled' };

  let result: ToolResult;
  let threw: string | undefined;
  let mocked = false;
  deps.events.emit({ type: 'tool_started', operationId, stepIndex, toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, args: call.args });
  const started = performance.now();
  if (mock) {
    mocked = true;
    result = { success: true, executionTime: 0, ...mock.result };
  } else if (!entry || !toolAllowed(op, call)) {
    result = { content: `Tool "${call.identifier}/${call.apiName}" is not available to this agent.`, success: false, error: 'tool_not_found', executionTime: 0 };
  } else {
    try {
      const out = await entry.source.execute(
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
  return published(deps, op, context, result, mocked, threw, started);
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
    if (decision.effect === 'deny') return blockedResult(decision.reason ?? 'Blocked by policy.', 'hook_denied');
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
  threw?: string,
  started?: number,
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
    if (op.abort.signal.aborted) return; // nothing arrives after onComplete
    if (threw !== undefined) {
      await deps.dispatcher.dispatch(operationId, 'onToolCallError', { ...context, error: threw });
    }
    await deps.dispatcher.dispatch(operationId, 'afterToolCall', { ...context, result, mocked });
  };
  return { kind: 'published', result, mocked, context, threw, notify };
}

/** The result of a denied or control-failed call: costs nothing, runs nothing. */
export function blockedResult(reason: string, classification: 'hook_denied' | 'hook_control_error'): ToolResult {
  return { content: reason, error: classification, executionTime: 0, state: { type: 'blocked', reason }, success: false };
}

function toolAllowed(op: RunningOperation, call: ToolCall): boolean {
  return toolListCovers(op.agent.tools, call.identifier, call.apiName);
}
