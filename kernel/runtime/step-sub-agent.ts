import { errorMessage } from '../errors.js';
import type { AgentHook } from '../hooks/hook-types.js';
import type { ToolResult } from '../messages.js';
import { PARENT_TOOL_CALL_KEY } from './exec-agent-options.js';
import { baseEvent, dispatchHook } from './operation-dispatch.js';
import { toolCallContext } from './running-operation.js';
import type { StepExecutor } from './step-executor.js';
import { settleWithoutRunning } from './step-tool-call.js';
import { gateToolCall } from './tool-call-gate.js';
import { controlResult } from './tool-result-control.js';
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
  // An answer given now (a mock, or a sub-agent that could not start) passes result control like any result.
  const answer = async (raw: ToolResult, mocked: boolean) => {
    const result = await controlResult(deps, op, context, raw, mocked);
    if (result === 'cancelled') return 'cancelled';
    publishInStep(deps, op, draft, context, call, result, { mocked, observed: true, durationMs: 0 });
    return 'ready';
  };
  if (verdict.kind === 'mocked') return answer(verdict.result, true);

  const subAgentId = call.apiName;
  const base = { ...baseEvent(op), stepIndex: draft.stepIndex, agentId: subAgentId, callerAgentId: op.agent.id };
  await dispatchHook(deps, op, 'beforeCallAgent', { ...base, instruction: call.args.instruction as string });
  let failure: unknown;
  try {
    const subOperationId = await services.startOperation({
      agentId: subAgentId,
      prompt: call.args.instruction as string,
      // Sub-agents inherit the registered snapshots, never the caller's (mutable) objects; after a restart, the persisted ones.
      hooks: op.fromStore ? ((await deps.store.loadHooks(op.record.id)) as AgentHook[]) : op.hooks,
      userId: op.record.userId,
      parentOperationId: op.record.id,
      context: { ...op.record.context, [PARENT_TOOL_CALL_KEY]: call.id },
    });
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
  return answer({ content: `Error: ${errorMessage(failure)}`, success: false, error: 'agent_error' }, false);
};
