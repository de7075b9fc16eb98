import { nowIso } from '../clock.js';
import type { AgentHookEvent, HookEventMap, HookType } from '../hooks/hook-types.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';

/**
 * Hook dispatch for the runtime's own events: nothing is built when no hook
 * of the type could run; a critical delivery failure rejects (and fails the
 * operation where the caller lets it); nothing else does.
 */
export async function dispatchHook<T extends HookType>(
  deps: RuntimeDeps,
  op: RunningOperation,
  type: T,
  event: Omit<HookEventMap[T], 'timestamp'> & { timestamp?: string },
): Promise<void> {
  if (!deps.dispatcher.mightHandle(op.record.id, type, 'notification')) return;
  const full = (event.timestamp === undefined ? { ...event, timestamp: nowIso() } : event) as HookEventMap[T];
  await deps.dispatcher.dispatch(op.record.id, type, full, { signal: op.abort.signal });
}

/** The fields every event of an operation carries (a fresh object: callers add their own fields to it). */
export function baseEvent(op: RunningOperation): AgentHookEvent {
  const event: AgentHookEvent = { operationId: op.record.id, threadId: op.record.threadId, agentId: op.record.agentId, stepIndex: op.record.state.stepIndex, timestamp: nowIso() };
  const userId = op.run.runtime?.userId ?? op.run.origin?.userId;
  if (userId !== undefined) event.userId = userId;
  if (op.record.parentOperationId) event.parentOperationId = op.record.parentOperationId;
  return event;
}
