import type { StepKind } from '../hooks/hook-types.js';
import { approvalStep } from './step-approval.js';
import { compactionStep } from './step-compaction.js';
import type { StepExecutor } from './step-executor.js';
import { modelCallStep } from './step-model-call.js';
import { subAgentStep } from './step-sub-agent.js';
import { toolCallStep } from './step-tool-call.js';

/** The executor of each step kind that `decideNextStep` can choose. */
export const STEP_EXECUTORS: Readonly<Record<StepKind, StepExecutor>> = Object.freeze({
  call_llm: modelCallStep,
  call_tool: toolCallStep,
  request_human_approve: approvalStep,
  compress_context: compactionStep,
  call_agent: subAgentStep,
});
