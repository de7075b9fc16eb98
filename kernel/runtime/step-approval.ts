import { nowIso } from '../clock.js';
import type { PendingTool } from '../hooks/hook-types.js';
import { awaitsApproval } from './next-step.js';
import { baseEvent, dispatchHook } from './operation-dispatch.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { StepDraft, StepExecutor } from './step-executor.js';
import { pendingTool } from './tool-call-gate.js';

/**
 * Parks the operation for a human: the approval request goes into the step's
 * commit (`waiting_approval`), and beforeHumanIntervention runs before it is
 * committed, as the specification orders it. Any process can apply the
 * decision later (the request is in the persisted state).
 */
export async function requestApproval(deps: RuntimeDeps, op: RunningOperation, draft: StepDraft, pendingTools: PendingTool[]): Promise<void> {
  draft.state.approval = { pendingTools, requestedAt: nowIso() };
  draft.commit.status = 'waiting_approval';
  deps.events.emit({ type: 'approval_requested', operationId: op.record.id, stepIndex: draft.stepIndex, pendingTools });
  const event = baseEvent(op);
  event.stepIndex = draft.stepIndex;
  await dispatchHook(deps, op, 'beforeHumanIntervention', { ...event, pendingTools });
}

/** `request_human_approve`: every pending call the gate would park at its approval stage, sub-agent calls included. */
export const approvalStep: StepExecutor = async ({ deps }, op, draft) => {
  const state = draft.state;
  const pendingTools = state.pendingToolCalls.filter((c) => awaitsApproval(op.agent, state, c)).map((c) => pendingTool(c, 'This tool needs approval.'));
  await requestApproval(deps, op, draft, pendingTools);
  return 'ready';
};
