import type { AgentHook } from '../../kernel/hooks/hook-types.js';
import type { OperationHandle } from '../../kernel/operation-handle.js';
import type { Operations } from '../../kernel/operations.js';
import { TERMINAL_STATUSES, UNFINISHED_STATUSES, type OperationRecord, type Store } from '../../kernel/store.js';
import type { SubmissionRecord } from '../../kernel/submissions.js';
import { SUBMISSION_CONTEXT_KEY } from './submission-settlement.js';

/**
 * A submission's operation: the linked one, else (a crash between its start
 * and the link) the thread's operation whose context carries the submission
 * id, linked now. Undefined for a submission that never started one.
 */
export async function operationOfSubmission(store: Store, submission: SubmissionRecord): Promise<OperationRecord | undefined> {
  if (submission.operationId !== undefined) return store.getOperation(submission.operationId);
  if (submission.status !== 'running') return undefined;
  const ops = await store.listThreadOperations(submission.threadId);
  const found = ops.reverse().find((op) => op.context[SUBMISSION_CONTEXT_KEY] === submission.id);
  if (found) await store.linkSubmissionOperation(submission.id, found.id);
  return found;
}

/**
 * The deadline check of document 001's `durability.timeoutMs`: a
 * `beforeStep` handler that calls `onPast` before a model turn
 * (`call_llm`) that would begin after `firstStartedAt + timeoutMs` (not
 * before the tool calls of the turn in flight). In-process only: recovery
 * registers it again for a resumed operation.
 */
export function deadlineHook(submission: SubmissionRecord, timeoutMs: number, onPast: (operationId: string) => void): AgentHook {
  const started = Date.parse(submission.firstStartedAt ?? new Date().toISOString());
  return {
    id: 'agent-api:deadline',
    type: 'beforeStep',
    handler: (event) => {
      if (event.stepType === 'call_llm' && Date.now() > started + timeoutMs) onPast(event.operationId);
    },
  };
}

/**
 * The operation's end. Once `draining` resolves, an operation that is parked
 * (for a human or a deferred result) is not waited for: undefined.
 */
export async function untilEnd(handle: OperationHandle, draining: Promise<undefined>): Promise<OperationRecord | undefined> {
  const completed = handle.completed();
  completed.catch(() => undefined);
  const first = await Promise.race([completed, draining]);
  if (first) return first;
  const settled = await handle.settled();
  return TERMINAL_STATUSES.has(settled.status) ? settled : undefined;
}

/** Waits until the thread's unfinished operation (one started outside the agent API) is over. */
export async function waitForThreadIdle(store: Store, operations: Operations, threadId: string): Promise<void> {
  // One operation of a thread runs at a time: only its newest can be unfinished.
  const ops = await store.listThreadOperations(threadId, { last: 1 });
  const busy = ops.find((op) => UNFINISHED_STATUSES.has(op.status));
  if (busy) await operations.wait(busy.id, 'terminal');
}
