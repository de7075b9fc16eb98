import type { AfterToolCallEvent, ControlVerdict, ToolCallHookContext } from '../hooks/hook-types.js';
import type { ToolResult } from '../messages.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { blockedResult } from './tool-call-gate.js';

/**
 * The fourth stage of a tool call: result control, before anything is
 * published. Policies first (a deny replaces the result, a redaction rewrites
 * it), then afterToolCall control hooks. A deny replaces the result; it does
 * not undo the tool's side effects. Deferred results (kernel.completeToolCall)
 * and sub-agent answers pass through the same control.
 */
export async function controlResult(deps: RuntimeDeps, op: RunningOperation, context: ToolCallHookContext, result: ToolResult, mocked: boolean): Promise<ToolResult | 'cancelled'> {
  const signal = op.abort.signal;
  let current = result;
  // Indexed: runs for every tool result, and a loop without an iterator costs least.
  for (let i = 0; i < deps.policies.length; i++) {
    const policy = deps.policies[i]!;
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
