import type { OperationRecord, OperationState } from '../store.js';

/**
 * A copy of an operation state that a step may change freely: fresh arrays and
 * usage, shared tool calls (never mutated once the model made them). Far
 * cheaper than structuredClone on the hot path of every step.
 */
export function copyState(state: OperationState): OperationState {
  return {
    ...state,
    usage: { ...state.usage },
    pendingToolCalls: [...state.pendingToolCalls],
    approvedToolCallIds: [...state.approvedToolCallIds],
    ...(state.approval ? { approval: { ...state.approval, pendingTools: [...state.approval.pendingTools] } } : {}),
  };
}

/**
 * A copy of an operation record for callers (waiters, `finalState`): state,
 * context and error are copied; the agent definition is shared, since it is
 * deep-frozen.
 */
export function copyRecord(record: OperationRecord): OperationRecord {
  return {
    ...record,
    state: structuredClone(record.state),
    context: { ...record.context },
    ...(record.error ? { error: { ...record.error } } : {}),
  };
}
