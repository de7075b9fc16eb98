import { HookgateError } from '../errors.js';
import type { PendingTool } from '../hooks/hook-types.js';
import type { NewMessage, OperationState, StepCommit } from '../store.js';
import { copyState } from './copy-state.js';
import type { HumanDecision } from './exec-agent-options.js';
import { baseEvent, dispatchHook } from './operation-dispatch.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';

/**
 * The pending tools a decision is about, or OPERATION_NOT_WAITING saying why
 * the operation cannot take it (not parked, already being decided here,
 * left running by a process that is gone, no such pending call).
 */
export function decisionTargets(op: RunningOperation, decision: HumanDecision): { approval: NonNullable<OperationState['approval']>; targets: PendingTool[] } {
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
  return { approval, targets };
}

/** The message a rejected call gets, so the conversation stays consistent. */
function rejectionText(reason: string): string {
  return reason ? `The user rejected this tool call: ${reason}` : 'The user rejected this tool call.';
}

/**
 * The one commit of a decision, a compare-and-swap on the version the
 * decision was made against: approved calls are remembered by their minted
 * identity; every rejected call gets its result. A decision on one call
 * leaves the others waiting; `reject` halts the whole run (the caller
 * finishes it as interrupted after the observers).
 */
export function decisionCommit(op: RunningOperation, decision: HumanDecision, approval: NonNullable<OperationState['approval']>, targets: PendingTool[]): StepCommit {
  const state = copyState(op.record.state);
  const remaining = approval.pendingTools.filter((t) => !targets.includes(t));
  state.approval = remaining.length > 0 && decision.action !== 'reject' ? { ...approval, pendingTools: remaining } : undefined;
  const messages: NewMessage[] = [];
  if (decision.action === 'approve') {
    state.approvedToolCallIds = [...new Set([...state.approvedToolCallIds, ...targets.map((t) => t.toolCallId)])];
  } else {
    const reason = decision.reason ?? '';
    const rejected = decision.action === 'reject' ? state.pendingToolCalls : state.pendingToolCalls.filter((c) => targets.some((t) => t.toolCallId === c.id));
    for (const call of rejected) {
      const content = rejectionText(reason);
      messages.push({ role: 'tool', toolCallId: call.id, content, toolResult: { content, success: false, error: 'human_rejected', state: { type: 'rejected', reason } } });
    }
    state.pendingToolCalls = state.pendingToolCalls.filter((c) => !rejected.includes(c));
  }
  return { state, status: state.approval ? 'waiting_approval' : 'running', messages, expectedVersion: op.record.version };
}

/** Observers of a stored decision: afterHumanIntervention, then onStopByHumanIntervention for a `reject`. */
export async function announceDecision(deps: RuntimeDeps, op: RunningOperation, decision: HumanDecision): Promise<void> {
  const base = baseEvent(op);
  await dispatchHook(deps, op, 'afterHumanIntervention', {
    ...base,
    action: decision.action === 'reject_continue' ? 'rejectAndContinue' : decision.action,
    ...(decision.toolCallId ? { toolCallId: decision.toolCallId } : {}),
    ...(decision.action !== 'approve' && decision.reason !== undefined ? { rejectionReason: decision.reason } : {}),
  });
  if (decision.action === 'reject') {
    await dispatchHook(deps, op, 'onStopByHumanIntervention', {
      ...base,
      ...(decision.toolCallId ? { toolCallId: decision.toolCallId } : {}),
      ...(decision.reason !== undefined ? { rejectionReason: decision.reason } : {}),
    });
  }
}
