import type { OperationRecord } from '../../kernel/store.js';
import type { SubmissionError, SubmissionRecord, SubmissionSettlement } from '../../kernel/submissions.js';
import { AgentApiError, AgentRunError, SubmissionRetryExhaustedError, SubmissionTimeoutError } from './agent-errors.js';
import { HookgateError } from '../../kernel/errors.js';

/** Where a submission's operation keeps the submission's id (its stored context): recovery finds an unlinked operation by it. */
export const SUBMISSION_CONTEXT_KEY = 'agent-api.submissionId';

/** Why this process ended a submission's operation itself (abort and deadline both end it `interrupted`). */
export type EndIntent = 'abort' | 'timeout' | undefined;

/**
 * The settlement of a submission from its operation's terminal record:
 * `done` completes with the final text and the response metadata the agent's
 * `useResponseStart` / `useResponseFinish` attached and `data`, the
 * parts its `useDataWriter` writers wrote (`dataPartsOf` the thread's values); `error` fails with the recorded
 * error; `interrupted` is `aborted` when an abort was asked for, a
 * SubmissionTimeoutError failure when the deadline ended it, else a failure
 * naming the reason (max_steps, cost_limit).
 */
export function settlementOf(op: OperationRecord, submission: SubmissionRecord, intent: EndIntent, timeoutMs: number, data: Record<string, unknown[]> = {}): SubmissionSettlement {
  // `done` with reason max_steps or cost_limit stopped short of an answer: a failure naming the reason (below).
  if (op.status === 'done' && (op.reason === undefined || op.reason === 'done')) {
    const metadata = op.state.metadata;
    return { status: 'completed', result: { text: op.state.lastText ?? '', data, ...(metadata !== undefined && Object.keys(metadata).length > 0 ? { metadata } : {}) } };
  }
  if (op.status === 'interrupted' && op.reason === 'interrupted') {
    if (intent === 'timeout') return { status: 'failed', error: errorOf(new SubmissionTimeoutError(submission.id, timeoutMs)) };
    if (intent === 'abort' || submission.abortRequestedAt !== undefined) return { status: 'aborted', error: { message: `submission '${submission.id}' was aborted`, code: 'AGENT_RUN_FAILED', type: 'aborted' } };
  }
  if (op.status === 'error') return { status: 'failed', error: { message: op.error?.message ?? 'the operation failed', ...(op.error?.code ? { code: op.error.code } : {}) } };
  return { status: 'failed', error: { message: `the operation ended ${op.status} (${op.reason ?? 'no reason'})`, code: op.error?.code ?? 'AGENT_RUN_FAILED' } };
}

/** The stored form of an error: message, code and (typed agent errors) wire type; never a stack. */
export function errorOf(err: unknown): SubmissionError {
  if (err instanceof AgentApiError) return { message: err.message, code: err.code, type: err.type };
  if (err instanceof HookgateError) return { message: err.message, code: err.code };
  return { message: err instanceof Error ? err.message : String(err) };
}

/** The failure settlement of an exhausted attempt budget. */
export function exhausted(submission: SubmissionRecord): SubmissionSettlement {
  return { status: 'failed', error: errorOf(new SubmissionRetryExhaustedError(submission.id, submission.attempts)) };
}

/** The failure settlement of a passed deadline. */
export function timedOut(submission: SubmissionRecord, timeoutMs: number): SubmissionSettlement {
  return { status: 'failed', error: errorOf(new SubmissionTimeoutError(submission.id, timeoutMs)) };
}

/** Whether the submission's deadline (first attempt's start + timeoutMs) has passed. */
export function pastDeadline(submission: SubmissionRecord, timeoutMs: number, now = Date.now()): boolean {
  return submission.firstStartedAt !== undefined && now > Date.parse(submission.firstStartedAt) + timeoutMs;
}

/** The AgentRunError an awaited send rejects with for a failed or aborted settlement; the recorded error is its `cause`. */
export function runErrorOf(submission: SubmissionRecord): AgentRunError {
  const outcome = submission.status === 'aborted' ? 'aborted' : 'failed';
  const recorded = submission.error;
  const cause = recorded ? Object.assign(new Error(recorded.message), { ...(recorded.code ? { code: recorded.code } : {}), ...(recorded.type ? { type: recorded.type } : {}) }) : undefined;
  return new AgentRunError(outcome, submission.id, `submission '${submission.id}' ${outcome === 'aborted' ? 'was aborted' : 'failed'}${recorded ? `: ${recorded.message}` : ''}`, cause);
}
