import type { PoolClient } from 'pg';
import { HookgateError } from '../../kernel/errors.js';
import type { MessageRecord, StepCommit } from '../../kernel/store.js';
import { duplicateMessage, insertMessages, notFound, prepareMessages, versionConflict } from './postgres-commits.js';
import { isUniqueViolation, type PostgresConnection, type Queryable } from './postgres-connection.js';
import { toJson } from './postgres-rows.js';

/*
 * commitStep, the write the step loop makes after every step. Without a
 * compaction it is ONE statement (data-modifying CTEs: one implicit
 * transaction, one round trip): the operation row's UPDATE takes its lock
 * and checks the version (compare-and-swap), the thread row's UPDATE hands
 * out the message positions under its lock, the step and the messages are
 * inserted from the rows those return, so with a failed check nothing is
 * inserted. A compaction (rare) needs to know that every named message was
 * marked, so it runs as a transaction of several statements instead.
 */

/** The parts of a commit as parameters, computed before anything is sent (a value JSON cannot carry fails here). */
function encode(commit: StepCommit) {
  return {
    state: JSON.stringify(commit.state),
    error: toJson(commit.error),
    threadValues: commit.threadValues === undefined ? null : JSON.stringify(commit.threadValues),
    step: commit.step && [commit.step.stepIndex, commit.step.kind, commit.step.startedAt, commit.step.finishedAt, JSON.stringify(commit.step.usage),
      JSON.stringify(commit.step.summary ?? {})],
  };
}

/** Why the operation UPDATE matched no row: unknown operation, or a version other than the expected one. */
async function refusal(q: Queryable, operationId: string, expected: number | undefined): Promise<HookgateError> {
  const found = await q.query<{ version: string }>('SELECT version FROM operations WHERE id = $1', [operationId]);
  if (found.rows.length === 0 || expected === undefined) return notFound(operationId);
  return versionConflict(operationId, Number(found.rows[0]!.version), expected);
}

const UPDATE_OPERATION = `UPDATE operations SET state = $2, version = version + 1, status = COALESCE($3, status), reason = COALESCE($4, reason),
  error = COALESCE($5, error), last_message_seq = last_message_seq + $6, updated_at = $7
  WHERE id = $1 AND ($8::bigint IS NULL OR version = $8) RETURNING seq, thread_seq, last_message_seq`;

/** Applies one step's writes atomically (see the file comment); the stored messages' records. */
export async function commitStep(db: PostgresConnection, operationId: string, commit: StepCommit, now: string): Promise<MessageRecord[]> {
  if (commit.compact) return db.transaction((c) => commitWithCompaction(c, operationId, commit, now));
  const e = encode(commit);
  const messages = commit.messages ?? [];
  const n = messages.length;
  const prepared = prepareMessages(operationId, 0, 0, messages, now);
  const params: unknown[] = [operationId, e.state, commit.status ?? null, commit.reason ?? null, e.error, n, now, commit.expectedVersion ?? null];
  const ctes = [`op AS (${UPDATE_OPERATION})`];
  const touchThread = n > 0 || e.threadValues !== null;
  if (touchThread) {
    params.push(e.threadValues);
    ctes.push(`th AS (UPDATE threads t SET last_position = t.last_position + $6, thread_values = COALESCE($9, t.thread_values),
      updated_at = CASE WHEN $9::text IS NULL THEN t.updated_at ELSE $7 END FROM op WHERE t.seq = op.thread_seq RETURNING t.last_position)`);
  }
  if (e.step) {
    const at = params.length;
    params.push(...e.step);
    ctes.push(`st AS (INSERT INTO steps (operation_seq, step_index, kind, started_at, finished_at, usage, summary)
      SELECT op.seq, $${at + 1}::integer, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6} FROM op)`);
  }
  if (n > 0) {
    const rows = prepared.map((p, i) => {
      const at = params.length;
      // p.values: id, seq, position (computed below, skipped), role, content, tool_calls, tool_call_id, tool_result, images.
      params.push(p.id, ...p.values.slice(3));
      return `($${at + 1}::text, ${i + 1}, $${at + 2}::text, $${at + 3}::text, $${at + 4}::text, $${at + 5}::text, $${at + 6}::text, $${at + 7}::text)`;
    });
    ctes.push(`ms AS (INSERT INTO messages (operation_seq, thread_seq, created_at, id, message_seq, position, role, content, tool_calls, tool_call_id, tool_result, images)
      SELECT op.seq, op.thread_seq, $7, v.id, op.last_message_seq - $6 + v.i, th.last_position - $6 + v.i, v.role, v.content, v.tool_calls, v.tool_call_id,
        v.tool_result, v.images
      FROM op, th, (VALUES ${rows.join(', ')}) AS v(id, i, role, content, tool_calls, tool_call_id, tool_result, images))`);
  }
  let result;
  try {
    result = await db.query<{ last_message_seq: number; last_position: string | null }>(
      `WITH ${ctes.join(',\n')} SELECT op.last_message_seq, ${touchThread ? 'th.last_position' : 'NULL AS last_position'} FROM op${touchThread ? ', th' : ''}`, params);
  } catch (err) {
    if (isUniqueViolation(err, 'messages_id_key')) throw duplicateMessage(err, prepared);
    throw err;
  }
  const row = result.rows[0];
  if (!row) throw await refusal(db, operationId, commit.expectedVersion);
  const firstSeq = row.last_message_seq - n + 1;
  const firstPosition = Number(row.last_position ?? 0) - n + 1;
  return prepared.map((p, i) => ({ ...p.record, seq: firstSeq + i, position: firstPosition + i }));
}

/** The several-statement form, for a commit that compacts: everything rolled back when a named message is not the thread's. */
async function commitWithCompaction(c: PoolClient, operationId: string, commit: StepCommit, now: string): Promise<MessageRecord[]> {
  const e = encode(commit);
  const messages = commit.messages ?? [];
  const { rows } = await c.query<{ seq: string; thread_seq: string; last_message_seq: number }>(UPDATE_OPERATION,
    [operationId, e.state, commit.status ?? null, commit.reason ?? null, e.error, messages.length, now, commit.expectedVersion ?? null]);
  if (rows.length === 0) throw await refusal(c, operationId, commit.expectedVersion);
  const opSeq = Number(rows[0]!.seq);
  const threadSeq = Number(rows[0]!.thread_seq);
  const t = await c.query<{ last_position: string }>(
    `UPDATE threads SET last_position = last_position + $2, thread_values = COALESCE($3, thread_values),
       updated_at = CASE WHEN $3::text IS NULL THEN updated_at ELSE $4 END WHERE seq = $1 RETURNING last_position`,
    [threadSeq, messages.length, e.threadValues, now],
  );
  if (e.step) await c.query('INSERT INTO steps (operation_seq, step_index, kind, started_at, finished_at, usage, summary) VALUES ($1, $2, $3, $4, $5, $6, $7)', [opSeq, ...e.step]);
  const prepared = prepareMessages(operationId, rows[0]!.last_message_seq - messages.length + 1, Number(t.rows[0]!.last_position) - messages.length + 1, messages, now);
  await insertMessages(c, opSeq, threadSeq, now, prepared);
  const ids = [...new Set(commit.compact!.messageIds)];
  // Any message of the thread: a continued thread compacts earlier operations' messages too.
  const marked = await c.query<{ id: string }>('UPDATE messages SET compacted_into = $1 WHERE thread_seq = $2 AND id = ANY($3::text[]) RETURNING id', [
    commit.compact!.summaryId, threadSeq, ids,
  ]);
  if (marked.rows.length !== ids.length) {
    const found = new Set(marked.rows.map((r) => r.id));
    throw new HookgateError('STORE_NOT_FOUND', `Message ${ids.find((id) => !found.has(id))} of operation ${operationId} does not exist`);
  }
  return prepared.map((p) => p.record);
}
