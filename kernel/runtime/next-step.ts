import { DEFAULT_MAX_STEPS, type AgentDefinition } from '../agent-definition.js';
import type { StepKind, TerminalReason } from '../hooks/hook-types.js';
import type { Message, ToolCall } from '../messages.js';
import { conversationTokens } from './conversation-tokens.js';
import type { OperationState } from '../store.js';
import { callAllowed, callFacts, callNeedsApproval, SUBAGENT_IDENTIFIER } from './call-facts.js';

// The allow-list and the approval requirement (remembered per admitted call, see call-facts.ts).
export { callAllowed, callNeedsApproval, SUBAGENT_IDENTIFIER };

/** The input schema of every sub-agent call (`agents/<id>`). */
export const SUBAGENT_PARAMETERS: Readonly<Record<string, unknown>> = Object.freeze({
  type: 'object',
  properties: { instruction: { type: 'string', description: 'What the sub-agent should do' } },
  required: ['instruction'],
});

/** Calls that would wait for a human at the approval stage of the gate: allowed, valid arguments, covered, not approved. */
export function awaitsApproval(agent: AgentDefinition, state: OperationState, call: ToolCall): boolean {
  if (call.argumentError !== undefined) return false;
  const facts = callFacts(agent, call);
  return facts.allowed && facts.needsApproval && !state.approvedToolCallIds.includes(call.id);
}

export type NextStep = { kind: 'step'; step: StepKind } | { kind: 'finish'; reason: TerminalReason } | { kind: 'park' };

/**
 * Decides what an operation does next from its persisted state alone, so any
 * process holding the state decides the same. Pure.
 */
export function decideNextStep(agent: AgentDefinition, state: OperationState, messages: readonly Message[]): NextStep {
  if (state.approval) return { kind: 'park' };
  // A prefilter_llm_history thread hook blocked the request: its message is stored, nothing more runs.
  if (state.hookBlocked === true) return { kind: 'finish', reason: 'hook_blocked' };
  const limits = agent.limits;
  if (limits?.maxTotalTokens !== undefined && state.usage.totalTokens >= limits.maxTotalTokens) return { kind: 'finish', reason: 'cost_limit' };
  if (limits?.maxCost !== undefined && state.usage.cost >= limits.maxCost) return { kind: 'finish', reason: 'cost_limit' };

  let next: StepKind;
  const first = state.pendingToolCalls[0];
  if (first) {
    // The gate's order: a call the allow-list or the schema refuses is answered without asking anyone.
    if (awaitsApproval(agent, state, first)) next = 'request_human_approve';
    else if (first.identifier === SUBAGENT_IDENTIFIER && callAllowed(agent, first) && first.argumentError === undefined) next = 'call_agent';
    else next = 'call_tool';
  } else if ((state.deferredToolCallIds?.length ?? 0) > 0) {
    // Every call that could run did; the rest arrive later (kernel.completeToolCall).
    return { kind: 'park' };
  } else {
    // A tool asked to end the operation (ToolResult.endsOperation) and every call of its turn is answered.
    if (state.endRequested === true) return { kind: 'finish', reason: 'done' };
    const last = messages[messages.length - 1];
    if (last && last.role === 'assistant' && !(last.toolCalls && last.toolCalls.length > 0)) return { kind: 'finish', reason: 'done' };
    next = needsCompaction(agent, state, messages) ? 'compress_context' : 'call_llm';
  }
  if (state.stepIndex >= (limits?.maxSteps ?? DEFAULT_MAX_STEPS)) return { kind: 'finish', reason: 'max_steps' };
  return { kind: 'step', step: next };
}

function needsCompaction(agent: AgentDefinition, state: OperationState, messages: readonly Message[]): boolean {
  const c = agent.compaction;
  if (!c) return false;
  const tokens = conversationTokens(messages);
  if (tokens <= c.thresholdTokens) return false;
  if (state.compactRetryAboveTokens !== undefined && tokens <= state.compactRetryAboveTokens) return false;
  return compactableCount(messages, c.keepRecent ?? 4) >= 2;
}

/**
 * How many leading messages a compaction may replace: all but the last
 * `keepRecent`, moved back so a tool result never loses its tool call.
 */
export function compactableCount(messages: readonly Message[], keepRecent: number): number {
  let cut = Math.max(0, messages.length - keepRecent);
  while (cut > 0 && cut < messages.length && messages[cut]!.role === 'tool') cut--;
  return cut;
}
