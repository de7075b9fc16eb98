import { confirmApprovedCallIsCurrent } from './approved-call-check.js';
import { SUBAGENT_IDENTIFIER } from './call-facts.js';
import { toolCallContext } from './running-operation.js';
import { requestApproval } from './step-approval.js';
import type { ToolCallHookContext } from '../hooks/hook-types.js';
import type { ToolCall } from '../messages.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { StepDraft, StepExecutor, StepOutcome } from './step-executor.js';
import { executeToolCall } from './tool-call-execution.js';
import { startSubAgent } from './step-sub-agent.js';
import { gateToolCall, toolEntryFor, type GateVerdict } from './tool-call-gate.js';
import { controlResult } from './tool-result-control.js';
import { toolCallDone, toolCallsWatched } from './tool-call-thread-hooks.js';
import { deferInStep, publishInStep } from './tool-result-publication.js';

/**
 * `call_tool`: the first pending call, end to end, one stage per file in the
 * order of ARCHITECTURE.md: the gate (allow-list, arguments, approval,
 * policies, controls, mocks: tool-call-gate.ts), execution
 * (tool-call-execution.ts), result control (tool-result-control.ts), and
 * publication (tool-result-publication.ts: stored by the step's commit, then
 * streamed, then observed, then seen by the model at its next turn). A call
 * the gate denies runs nothing and gets no result control.
 */
export const toolCallStep: StepExecutor = async (services, op, draft) => {
  const { deps } = services;
  const call = draft.state.pendingToolCalls[0]!;
  // Sub-agent calls reach this step only when the gate refuses them; no tool source answers for `agents/`.
  const isSubagent = call.identifier === SUBAGENT_IDENTIFIER;
  const entry = isSubagent ? undefined : toolEntryFor(deps, op.agent, call);
  const context = toolCallContext(op, call, draft.stepIndex, isSubagent ? 'agent' : entry?.tool.toolSource);

  // Synchronous when every stage was (no policy, no control webhook, sync handlers): no microtask for it.
  const gated = gateToolCall(deps, op, call, context, entry);
  const verdict = gated instanceof Promise ? await gated : gated;
  const settled = settleWithoutRunning(deps, op, draft, context, call, verdict);
  if (settled !== undefined) return settled;

  const mocked = verdict.kind === 'mocked';
  // An approved call runs only while the operation is still this process's to run (an abort elsewhere ends it).
  if (!mocked) await confirmApprovedCallIsCurrent(deps, op, call);
  // The fence against an abort committed by another process: checked after the gate (which may wait on webhooks).
  if (!mocked && services.mayStartTool !== undefined && !(await services.mayStartTool(op))) return 'cancelled';
  const execution = await executeToolCall(deps, op, call, context, mocked ? { mocked: verdict.result } : { entry: entry! });
  if (execution.kind === 'cancelled') return 'cancelled';
  if (execution.kind === 'deferred') {
    deferInStep(draft, call.id, op);
    return 'ready';
  }
  // A tool that delegates (DelegatedToolResult): the call, already through the gate, runs as a sub-agent.
  if (execution.kind === 'delegated') return startSubAgent(services, op, draft, context, call, execution.delegate);
  const controlled = await controlResult(deps, op, context, execution.result, mocked);
  if (controlled === 'cancelled') return 'cancelled';
  // Document 003's tool_call_done and result hooks: after result control (which decides first), before the store.
  const result = toolCallsWatched(deps, op) ? await toolCallDone(deps, op, call, controlled) : controlled;
  publishInStep(deps, op, draft, context, call, result, { mocked, observed: true, durationMs: execution.durationMs, ...(execution.threw !== undefined ? { threw: execution.threw } : {}) });
  return 'ready';
};

/**
 * The gate verdicts that run nothing, settled into the step's draft: an
 * abort (nothing committed), a park for approval, a denial published as the
 * call's result without result control. Undefined when the call goes on
 * (allowed, or mocked). Tool calls and sub-agent calls share it.
 */
export function settleWithoutRunning(
  deps: RuntimeDeps,
  op: RunningOperation,
  draft: StepDraft,
  context: ToolCallHookContext,
  call: ToolCall,
  verdict: GateVerdict,
): StepOutcome | Promise<StepOutcome> | undefined {
  switch (verdict.kind) {
    case 'cancelled':
      return 'cancelled';
    case 'needs_approval':
      return requestApproval(deps, op, draft, [verdict.pending]).then(() => 'ready');
    case 'denied':
      publishInStep(deps, op, draft, context, call, verdict.result, { mocked: false, observed: verdict.observed, durationMs: 0 });
      return 'ready';
    default:
      return undefined;
  }
}
