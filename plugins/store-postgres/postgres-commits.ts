import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { HookgateError } from '../../kernel/errors.js';
import { leaseWindow } from '../../kernel/lease-window.js';
import { newMessageRecord } from '../../kernel/message-record.js';
import { defaultThreadId, UNFINISHED_STATUSES } from '../../kernel/store.js';
import type { MessageRecord, NewMessage, NewOperation, NewThread, OperationRecord, StepCommit, ToolResult } from '../../kernel/store.js';
import { isUniqueViolation } from './postgres-connection.js';
import { checkMessageUpdate } from '../../kernel/message-update.js';
import type { MessageUpdate } from '../../kernel/store.js';
import { MESSAGE_COLUMNS, toJson, toMessageRecord, type MessageRow } from './postgres-rows.js';

/*
 * The write paths of store-postgres that SQLite runs as one IMMEDIATE
 * transaction, each here one READ COMMITTED transaction on one connection
 * (the caller's `client`). Where SQLite relied on its single writer, the
 * rows a decision depends on are locked first:
 * - commitStep (postgres-step-commit.ts): its UPDATE of the operation row
 *   (with the version check in its WHERE) takes the row lock, so two
 *   committers serialize and the second sees the first's version
 *   (compare-and-swap); message positions come from an UPDATE of the thread
 *   row (its lock hands them out in order).
 * - createOperation on an existing thread: SELECT ... FOR UPDATE of the
 *   thread row before the busy check, so two starts on one thread serialize.
 * - publishToolResult: SELECT ... FOR UPDATE of the operation row, then the
 *   conditional fill of the placeholder (exactly one publisher fills it).
 * - updateMessage: SELECT ... FOR UPDATE OF the message row alone, then its
 *   UPDATE; it holds no other lock, so it cannot join a deadlock cycle.
 * Locks are always taken operation row first, then thread row, or the
 * thread row alone, so these paths cannot deadlock one another.
 */

const UNFINISHED_SQL = `(${[...UNFINISHED_STATUSES].map((s) => `'${s}'`).join(', ')})`;

export function notFound(operationId: string): HookgateError {
  return new HookgateError('STORE_NOT_FOUND', `Operation ${operationId} does not exist`);
}

/** Compare-and-swap on the state version (see StepCommit.expectedVersion). */
export function assertVersion(operationId: string, current: number, expected: number | undefined): void {
  if (expected !== undefined && current !== expected) throw versionConflict(operationId, current, expected);
}

export function versionConflict(operationId: string, current: number, expected: number): HookgateError {
  return new HookgateError('STORE_VERSION_CONFLICT', `Operation ${operationId} is at version ${current}, not ${expected}: another writer committed first`, {
    details: { operationId, expectedVersion: expected, version: current },
  });
}

/** Inserts a thread row and returns its seq; STORE_CONFLICT when the id exists. */
export async function insertThread(client: PoolClient, thread: NewThread, now: string): Promise<number> {
  try {
    const { rows } = await client.query<{ seq: string }>(
      `INSERT INTO threads (id, agent_id, instance_id, uid, initial_data, thread_values, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING seq`,
      [thread.id, thread.agentId, thread.instanceId ?? null, thread.uid ?? null, toJson(thread.initialData), JSON.stringify(thread.values ?? {}), now],
    );
    return Number(rows[0]!.seq);
  } catch (err) {
    if (isUniqueViolation(err, 'threads_id_key')) throw new HookgateError('STORE_CONFLICT', `Thread ${thread.id} already exists`, { cause: err });
    throw err;
  }
}

/** The message rows of one insert: their JSON computed first, so a value JSON cannot carry fails before anything is written. */
export interface PreparedMessage {
  id: string;
  values: unknown[];
  record: MessageRecord;
}

export function prepareMessages(operationId: string, firstSeq: number, firstPosition: number, messages: NewMessage[], now: string): PreparedMessage[] {
  return messages.map((m, i) => {
    const id = m.id ?? randomUUID();
    const record = newMessageRecord(m, id, operationId, firstSeq + i, firstPosition + i, now);
    return {
      id,
      record,
      values: [id, record.seq, record.position, m.role, JSON.stringify(m.content), toJson(record.toolCalls), m.toolCallId ?? null, toJson(record.toolResult),
        record.images === undefined ? null : JSON.stringify(record.images)],
    };
  });
}

/** One multi-row INSERT of prepared messages; STORE_CONFLICT for an id already stored (or repeated in the batch). */
export async function insertMessages(client: PoolClient, opSeq: number, threadSeq: number, now: string, prepared: PreparedMessage[]): Promise<void> {
  if (prepared.length === 0) return;
  const params: unknown[] = [opSeq, threadSeq, now];
  const rows = prepared.map((p) => {
    const start = params.length;
    params.push(...p.values);
    return `($1, $2, $3, ${p.values.map((_, i) => `$${start + i + 1}`).join(', ')})`;
  });
  try {
    await client.query(
      `INSERT INTO messages (operation_seq, thread_seq, created_at, id, message_seq, position, role, content, tool_calls, tool_call_id, tool_result, images)
       VALUES ${rows.join(', ')}`,
      params,
    );
  } catch (err) {
    if (isUniqueViolation(err, 'messages_id_key')) {
      throw duplicateMessage(err, prepared);
    }
    throw err;
  }
}

/** STORE_CONFLICT for a message insert that broke messages_id_key, naming the id PostgreSQL reports (or the one repeated in the batch). */
export function duplicateMessage(err: unknown, prepared: PreparedMessage[]): HookgateError {
  const dup = (err as { detail?: string }).detail?.match(/\(id\)=\((.*)\) already exists/)?.[1] ?? prepared.find((p, i) => prepared.findIndex((q) => q.id === p.id) !== i)?.id ?? 'id';
  return new HookgateError('STORE_CONFLICT', `Message ${dup} already exists`, { cause: err });
}

/** createOperation's transaction: thread (found or created), operation, first messages, hooks, optional lease. */
export async function createOperationTx(client: PoolClient, op: NewOperation, messages: NewMessage[], hooks: unknown[], now: string): Promise<OperationRecord> {
  const lease = op.lease && leaseWindow(op.id, op.lease);
  const agentText = JSON.stringify(op.agent ?? null);
  const contextText = JSON.stringify(op.context ?? {});
  const stateText = JSON.stringify(op.state);
  const hookTexts = hooks.map((h) => JSON.stringify(h));
  let threadSeq: number;
  let threadId: string;
  let lastPosition = 0;
  if (op.threadId !== undefined) {
    const { rows } = await client.query<{ seq: string; last_position: string }>('SELECT seq, last_position FROM threads WHERE id = $1 FOR UPDATE', [op.threadId]);
    if (rows.length === 0) throw new HookgateError('STORE_NOT_FOUND', `Thread ${op.threadId} does not exist`);
    threadSeq = Number(rows[0]!.seq);
    lastPosition = Number(rows[0]!.last_position);
    const busy = await client.query<{ id: string }>(`SELECT id FROM operations WHERE thread_seq = $1 AND status IN ${UNFINISHED_SQL} LIMIT 1`, [threadSeq]);
    if (busy.rows.length > 0) {
      const busyId = busy.rows[0]!.id;
      throw new HookgateError('THREAD_BUSY', `Thread ${op.threadId} has an unfinished operation (${busyId}); it takes a new one once that one is done, decided or aborted`, {
        details: { threadId: op.threadId, operationId: busyId },
      });
    }
    threadId = op.threadId;
  } else {
    const thread = op.thread ?? { id: defaultThreadId(op.id), agentId: op.agentId };
    threadSeq = await insertThread(client, thread, now);
    threadId = thread.id;
  }
  const prepared = prepareMessages(op.id, 1, lastPosition + 1, messages, now);
  let opSeq: number;
  try {
    const { rows } = await client.query<{ seq: string }>(
      `INSERT INTO operations (id, thread_seq, agent_id, parent_operation_id, user_id, status, agent, context, state, last_message_seq,
         lease_owner, lease_expires_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8, $9, $10, $11, $12, $12) RETURNING seq`,
      [op.id, threadSeq, op.agentId, op.parentOperationId ?? null, op.userId ?? null, agentText, contextText, stateText, messages.length,
        op.lease?.owner ?? null, lease?.expiresAt ?? null, now],
    );
    opSeq = Number(rows[0]!.seq);
  } catch (err) {
    if (isUniqueViolation(err, 'operations_id_key')) throw new HookgateError('STORE_CONFLICT', `Operation ${op.id} already exists`, { cause: err });
    throw err;
  }
  if (prepared.length > 0) await client.query('UPDATE threads SET last_position = $1 WHERE seq = $2', [lastPosition + prepared.length, threadSeq]);
  await insertMessages(client, opSeq, threadSeq, now, prepared);
  if (hookTexts.length > 0) {
    await client.query('INSERT INTO hook_registrations (operation_seq, position, hook) SELECT $1, p - 1, h FROM unnest($2::text[]) WITH ORDINALITY AS x(h, p)', [opSeq, hookTexts]);
  }
  const record: OperationRecord = {
    id: op.id,
    agentId: op.agentId,
    threadId,
    status: 'running',
    agent: JSON.parse(agentText) as unknown,
    context: JSON.parse(contextText) as OperationRecord['context'],
    state: JSON.parse(stateText) as OperationRecord['state'],
    createdAt: now,
    updatedAt: now,
    version: 0,
  };
  if (op.parentOperationId != null) record.parentOperationId = op.parentOperationId;
  if (op.userId != null) record.userId = op.userId;
  return record;
}

/** publishToolResult's transaction: false (nothing written) when the placeholder is filled or missing. */
export async function publishToolResultTx(client: PoolClient, operationId: string, toolCallId: string, result: ToolResult,
  commit: Pick<StepCommit, 'state' | 'status' | 'expectedVersion'>, now: string): Promise<boolean> {
  const resultText = JSON.stringify(result);
  const state = JSON.stringify(commit.state);
  const { rows } = await client.query<{ seq: string; version: string }>('SELECT seq, version FROM operations WHERE id = $1 FOR UPDATE', [operationId]);
  if (rows.length === 0) throw notFound(operationId);
  const opSeq = Number(rows[0]!.seq);
  const filled = await client.query(
    `UPDATE messages SET content = $1, tool_result = $2
     WHERE seq = (SELECT seq FROM messages WHERE operation_seq = $3 AND tool_call_id = $4 AND role = 'tool' AND tool_result IS NULL ORDER BY message_seq LIMIT 1)`,
    [JSON.stringify(result.content), resultText, opSeq, toolCallId],
  );
  if (filled.rowCount === 0) return false;
  // Checked after the fill on purpose: a conflict throws, which rolls the fill back.
  assertVersion(operationId, Number(rows[0]!.version), commit.expectedVersion);
  await client.query('UPDATE operations SET state = $2, version = version + 1, status = COALESCE($3, status), updated_at = $4 WHERE seq = $1', [
    opSeq, state, commit.status ?? null, now,
  ]);
  return true;
}

/** saveHooks' transaction: the operation row locked, its hooks replaced. */
export async function saveHooksTx(client: PoolClient, operationId: string, hooks: unknown[]): Promise<void> {
  const texts = hooks.map((h) => JSON.stringify(h));
  const { rows } = await client.query<{ seq: string }>('SELECT seq FROM operations WHERE id = $1 FOR UPDATE', [operationId]);
  if (rows.length === 0) throw notFound(operationId);
  await client.query('DELETE FROM hook_registrations WHERE operation_seq = $1', [rows[0]!.seq]);
  await client.query('INSERT INTO hook_registrations (operation_seq, position, hook) SELECT $1, p - 1, h FROM unnest($2::text[]) WITH ORDINALITY AS x(h, p)', [rows[0]!.seq, texts]);
}

/**
 * updateMessage's transaction: the update checked before any query, the
 * message row locked, its thread and compaction checked, its content
 * rewritten (as JSON text, like every stored content). Throws as the Store
 * contract says; a throw rolls the transaction back. The status and the
 * completion time are written as given (NULL until an update sets them).
 */
export async function updateMessageTx(client: PoolClient, threadId: string, messageId: string, update: MessageUpdate): Promise<MessageRecord> {
  const checked = checkMessageUpdate(messageId, update);
  const { rows } = await client.query<MessageRow & { seq: string; thread_id: string }>(
    `SELECT ${MESSAGE_COLUMNS}, m.seq, t.id AS thread_id FROM messages m JOIN operations o ON o.seq = m.operation_seq JOIN threads t ON t.seq = m.thread_seq
     WHERE m.id = $1 FOR UPDATE OF m`,
    [messageId],
  );
  const row = rows[0];
  if (row === undefined || row.thread_id !== threadId) throw new HookgateError('STORE_NOT_FOUND', `Thread ${threadId} has no message ${messageId}`, { details: { threadId, messageId } });
  if (row.compacted_into !== null) {
    throw new HookgateError('STORE_CONFLICT', `Message ${messageId} was compacted into ${row.compacted_into}; a compacted message cannot be updated`, { details: { threadId, messageId } });
  }
  if (checked.content === undefined && checked.status === undefined && checked.responseCompletedAt === undefined) return toMessageRecord(row);
  const content = checked.content === undefined ? row.content : JSON.stringify(checked.content);
  const status = checked.status ?? row.status;
  const completedAt = checked.responseCompletedAt ?? row.response_completed_at;
  await client.query('UPDATE messages SET content = $1, status = $2, response_completed_at = $3 WHERE seq = $4', [content, status, completedAt, row.seq]);
  return toMessageRecord({ ...row, content, status, response_completed_at: completedAt });
}
