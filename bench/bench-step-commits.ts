import type { OperationState, StepCommit } from '../kernel/store.js';

/*
 * The step commits of a 20-call conversation as the runtime writes them, for
 * the store commit benches (sqlite-commit.ts, store-commit.ts): a model turn
 * asking for a tool, then its result, alternating.
 */

const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2, cost: 0 };

export function initialState(): OperationState {
  return { stepIndex: 0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
}

/** Step `s` of the conversation: even steps are model turns with one tool call, odd ones that call's result. */
export function stepCommit(operationId: string, s: number, state: OperationState): StepCommit {
  const callId = `call_${s >> 1}`;
  const now = new Date().toISOString();
  return {
    state: { ...state, stepIndex: s + 1 },
    messages: [
      s % 2 === 0
        ? { role: 'assistant', content: '', toolCalls: [{ id: callId, identifier: 'bench', apiName: 'noop', args: { i: s >> 1 } }] }
        : { role: 'tool', content: 'ok', toolCallId: callId, toolResult: { content: 'ok', success: true, executionTime: 0 } },
    ],
    step: { operationId, stepIndex: s, kind: s % 2 === 0 ? 'call_llm' : 'call_tool', startedAt: now, finishedAt: now, usage, summary: { toolCallIds: [callId] } },
  };
}
