import { HookgateError } from '../errors.js';
import type { ToolCall } from '../messages.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';

/**
 * Right before a call a human approved runs: whether the operation is still
 * running in the store. Another process may have ended it
 * meanwhile (an abort or reject of a copy it does not run commits by
 * compare-and-swap without the lease, as it must for an operation whose
 * process died): then the approved tool must not run, since its result
 * could never be stored and the abort was already acknowledged. One store
 * read per approved call (human speed, never the hot path); rejects with
 * STORE_VERSION_CONFLICT, which stops this process's loop with nothing
 * written. The window left is the read itself.
 */
export async function confirmApprovedCallIsCurrent(deps: RuntimeDeps, op: RunningOperation, call: ToolCall): Promise<void> {
  if (!op.record.state.approvedToolCallIds.includes(call.id)) return;
  const stored = await deps.store.getOperation(op.record.id);
  // A newer version that is still running is a deferred result another process published (the commit rebases on it).
  if (stored?.status === 'running') return;
  op.stale = true;
  throw new HookgateError(
    'STORE_VERSION_CONFLICT',
    `operation ${op.record.id} was changed by another writer (${stored?.status ?? 'gone'}) before its approved call ${call.identifier}/${call.apiName} ran; the call did not run`,
    { details: { operationId: op.record.id, expectedVersion: op.record.version, ...(stored ? { version: stored.version } : {}) } },
  );
}
