import type Database from 'better-sqlite3';
import { newMessageRecord } from '../../kernel/message-record.js';
import type { MessageRecord, StepCommit } from '../../kernel/store.js';
import type { MessageIds } from './message-ids.js';
import type { LogTail, OperationSeqs } from './operation-seqs.js';
import { isPrimaryKeyError } from './sqlite-errors.js';
import { stateJson, summaryJson, toolCallsJson, toolResultJson, usageJson } from './step-json.js';

/**
 * The step loop's usual commit as one statement: the step (with the state and its next version) and the message
 * after it (generated id), written only while the operations row still holds the state version the connection's
 * kept tail says it does. Parameters: the step's 11 (as insertStep), the message's 7 (as insertMessage without
 * message_id and images), then the operation's seq, id and row state version.
 */
export const USUAL_STEP_SQL = `INSERT INTO operation_log (key, operation_seq, entry, created_at, step_index, step_kind, started_at, finished_at, usage,
    summary, state, state_version, message_seq, message_id, role, content, tool_calls, tool_call_id, tool_result)
  SELECT * FROM (VALUES (?, ?, 'step', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (?, ?, 'message', ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, NULL, ?, ?, ?, ?, ?))
  WHERE EXISTS (SELECT 1 FROM operations WHERE seq = ? AND id = ? AND state_version = ?)`;

export type UsualStepStatement = Database.Statement<[number, number, string, number, string, string, string, string, string, string, number,
  number, number, string, number, string, string, string | null, string | null, string | null, number, string, number]>;

/**
 * Commits the step loop's usual commit (a step, one message without an id or
 * images, no status, reason, error, thread values or compaction) as one
 * statement in autocommit mode, with no BEGIN, COMMIT or `data_version` read,
 * when this connection keeps a tail for the operation (operation-seqs.ts).
 * Returns undefined, having written nothing, for any other commit and when
 * the tail may be stale; the caller then runs the full transaction, which
 * reads the log again where needed.
 *
 * Why the statement alone is enough: a single statement takes the write lock
 * when it starts (waiting on busy_timeout, as BEGIN IMMEDIATE does) and is
 * atomic. What the tail says can only change through another write to the
 * operation: an entry appended to its log (which takes the key this commit
 * writes, so the INSERT fails on the primary key) or a write of the operations
 * row's state version (a status change, a publication: the EXISTS guard finds
 * another version). The id check refuses a seq SQLite gave to a new operation
 * after this one was pruned. Either way nothing is written and the tail is
 * dropped. Versions only grow, so an equal row version is the same write.
 * Throws what the statement throws (SQLITE_BUSY after the busy timeout, a full
 * disk) with nothing written.
 */
export function commitUsualStep(
  statement: UsualStepStatement,
  seqs: OperationSeqs,
  ids: MessageIds,
  operationId: string,
  commit: StepCommit,
  now: string,
  keysPerOperation: number,
): MessageRecord[] | undefined {
  const step = commit.step;
  const messages = commit.messages;
  if (step === undefined || messages === undefined || messages.length !== 1) return undefined;
  if (commit.status !== undefined || commit.reason !== undefined || commit.error !== undefined || commit.threadValues !== undefined || commit.compact !== undefined) {
    return undefined;
  }
  const only = messages[0]!;
  if (only.id !== undefined || only.images !== undefined) return undefined;
  const seq = seqs.get(operationId);
  const tail = seqs.keptTail(operationId);
  if (seq === undefined || tail === undefined) return undefined;
  // A mismatch may be a stale tail: the transaction reads the log again and decides (STORE_VERSION_CONFLICT or not).
  if (commit.expectedVersion !== undefined && commit.expectedVersion !== tail.version) return undefined;
  const key = tail.nextKey;
  if (key + 2 > (seq + 1) * keysPerOperation) return undefined; // the transaction reports the operation full
  const version = tail.version + 1;
  const messageSeq = tail.nextMessageSeq;
  let changes: number;
  try {
    changes = statement.run(key, seq, now, step.stepIndex, step.kind, step.startedAt, step.finishedAt, usageJson(step.usage),
      summaryJson(step.summary ?? {}), stateJson(commit.state), version,
      key + 1, seq, now, messageSeq, only.role, only.content, toolCallsJson(only.toolCalls) ?? null, only.toolCallId ?? null, toolResultJson(only.toolResult) ?? null,
      seq, operationId, tail.rowVersion).changes;
  } catch (err) {
    if (!isPrimaryKeyError(err)) throw err;
    changes = 0; // another connection appended to the log: this tail is stale
  }
  if (changes === 0) {
    seqs.dropTail(operationId);
    return undefined;
  }
  const next: LogTail = { dataVersion: tail.dataVersion, version, rowVersion: tail.rowVersion, nextKey: key + 2, nextMessageSeq: messageSeq + 1, positionBase: tail.positionBase };
  seqs.setTail(operationId, next);
  return [newMessageRecord(only, ids.forKey(key + 1), operationId, messageSeq, tail.positionBase + messageSeq, now)];
}
