import type { SubmissionRecord } from '../../kernel/submissions.js';

/** What an awaited handle send resolves with (document 001 `AgentReply`). */
export interface AgentReply {
  /** The submission's final assistant text; `''` when none. */
  text: string;
  /** Named client data parts written during the response, each an array of writes in order. */
  data: Record<string, unknown[]>;
  /** Agent-authored response metadata, when present. */
  metadata?: Record<string, unknown>;
  /** The contacted incarnation's uid. */
  uid?: string;
  /** The settled submission's id. */
  submissionId: string;
}

/** The reply of a completed submission. */
export function replyOf(submission: SubmissionRecord, uid: string | undefined): AgentReply {
  const result = submission.result ?? { text: '' };
  return {
    text: result.text,
    data: result.data ?? {},
    ...(result.metadata !== undefined ? { metadata: result.metadata } : {}),
    ...(uid !== undefined ? { uid } : {}),
    submissionId: submission.id,
  };
}
