import { errorMessage } from '../errors.js';
import type { AgentHook, ToolCallHookContext } from '../hooks/hook-types.js';
import type { ToolCall, ToolResult } from '../messages.js';
import { PARENT_TOOL_CALL_KEY } from './exec-agent-options.js';
import { baseEvent, dispatchHook } from './operation-dispatch.js';
import { toolCallContext, type RunningOperation } from './running-operation.js';
import type { StepDraft, StepExecutor, StepOutcome, StepServices } from './step-executor.js';
import { settleWithoutRunning } from './step-tool-call.js';
import { gateToolCall } from './tool-call-gate.js';
import { controlResult } from './tool-result-control.js';
import { toolCallDone, toolCallsWatched } from './tool-call-thread-hooks.js';
import { deferInStep, publishInStep } from './tool-result-publication.js';

/**
 * `call_agent`: a sub-agent call is a tool call, through the same gate in the
 * same order, before anything starts. Its execution starts the sub-agent as
 * its own operation and leaves an empty placeholder for its answer: the
 * parent parks (`waiting_tool`), and the child's completion publishes into the
 * placeholder through the same result control as any deferred tool result
 * (AgentRuntime.bridgeToParent). Survives restarts: the link is in the
 * child's stored context.
 */
export const subAgentStep: StepExecutor = async (services, op, draft) => {
  const { deps } = services;
  const call = draft.state.pendingToolCalls[0]!;
  const context = toolCallContext(op, call, draft.stepIndex, 'agent');
  const verdict = await gateToolCall(deps, op, call, context, undefined);
  const settled = settleWithoutRunning(deps, op, draft, context, call, verdict);
  if (settled !== undefined) return settled;
  if (verdict.kind === 'mocked') return answerNow(services, op, draft, context, call, verdict.result, true);
  return startSubAgent(services, op, draft, context, call, { agentId: call.apiName, prompt: call.args.instruction as string });
};

/**
 * Runs a tool call that passed the gate as a sub-agent: `beforeCallAgent`,
 * then the child operation (`parentOperationId`, the caller's hooks, the
 * call id in its context), then `afterCallAgent`, and the call deferred until
 * the child ends. A child that cannot start is answered now (`agent_error`,
 * after `afterCallAgent` with `success: false` and `onCallAgentError`).
 * Shared by `agents/<id>` calls and tools that delegate (DelegatedToolResult).
 */
export async function startSubAgent(
  services: StepServices,
  op: RunningOperation,
  draft: StepDraft,
  context: ToolCallHookContext,
  call: ToolCall,
  child: { agentId: string; agentSource?: string; prompt: string },
): Promise<StepOutcome> {
  const { deps } = services;
  const base = { ...baseEvent(op), stepIndex: draft.stepIndex, agentId: child.agentId, callerAgentId: op.agent.id };
  await dispatchHook(deps, op, 'beforeCallAgent', { ...base, instruction: child.prompt });
  let failure: unknown;
  try {
    const subOperationId = await services.startOperation({
      agentId: child.agentId,
      ...(child.agentSource !== undefined ? { agentSource: child.agentSource } : {}),
      prompt: child.prompt,
      // Sub-agents inherit the registered snapshots, never the caller's (mutable) objects; after a restart, the persisted ones.
      hooks: op.fromStore ? ((await deps.store.loadHooks(op.record.id)) as AgentHook[]) : op.hooks,
      userId: op.record.userId,
      parentOperationId: op.record.id,
      context: { ...op.record.context, [PARENT_TOOL_CALL_KEY]: call.id },
    });
    if (op.threadHooks?.has('after_subagent_created')) await afterSubagentCreated(services, op, subOperationId);
    await dispatchHook(deps, op, 'afterCallAgent', { ...base, subOperationId, success: true, threadId: `thread_${subOperationId}` });
    deferInStep(draft, call.id);
    return 'ready';
  } catch (err) {
    if (op.abort.signal.aborted) return 'cancelled';
    failure = err;
  }
  // The sub-agent could not even start: answered now.
  await dispatchHook(deps, op, 'afterCallAgent', { ...base, subOperationId: '', success: false });
  await dispatchHook(deps, op, 'onCallAgentError', { ...base, error: errorMessage(failure) });
  return answerNow(services, op, draft, context, call, { content: `Error: ${errorMessage(failure)}`, success: false, error: 'agent_error' }, false);
}

/**
 * Document 003's `after_subagent_created` on the parent's thread, right after
 * the child's thread was created with its operation. A failure (a hook's is
 * logged by the chain; here, loading the child) is logged and changes
 * nothing: the child runs and the call waits for it as without the hook.
 */
async function afterSubagentCreated(services: StepServices, op: RunningOperation, childOperationId: string): Promise<void> {
  try {
    await op.threadHooks!.afterSubagentCreated(await services.threadHookHost(childOperationId));
  } catch (err) {
    services.deps.logger.error('[Hooks] ✗ after_subagent_created could not run', { operationId: op.record.id, childOperationId, error: errorMessage(err) });
  }
}

/** An answer given now (a mock, or a sub-agent that could not start) passes result control and the result hooks like any result. */
async function answerNow(services: StepServices, op: RunningOperation, draft: StepDraft, context: ToolCallHookContext, call: ToolCall, raw: ToolResult, mocked: boolean): Promise<StepOutcome> {
  const controlled = await controlResult(services.deps, op, context, raw, mocked);
  if (controlled === 'cancelled') return 'cancelled';
  // Document 003's tool_call_done and result hooks, as for any result of a call (the child's answer: publishDeferred).
  const result = toolCallsWatched(services.deps, op) ? await toolCallDone(services.deps, op, call, controlled) : controlled;
  publishInStep(services.deps, op, draft, context, call, result, { mocked, observed: true, durationMs: 0 });
  return 'ready';
}
