import type { DecisionFilter, DecisionRecord, MessageRecord, OperationFilter, OperationRecord, StepRecord, ThreadRecord } from '../../kernel/store.js';
import type { Queryable } from './postgres-connection.js';
import {
  DECISION_COLUMNS,
  MESSAGE_COLUMNS,
  OPERATION_COLUMNS,
  OPERATION_FROM,
  THREAD_COLUMNS,
  toDecisionRecord,
  toMessageRecord,
  toOperationRecord,
  toStepRecord,
  toThreadRecord,
  type DecisionRow,
  type MessageRow,
  type OperationRow,
  type StepRow,
  type ThreadRow,
} from './postgres-rows.js';

/*
 * The read side of store-postgres: one statement each, on any pooled
 * connection (READ COMMITTED: each read sees what was committed when it
 * began). Every filter value is a parameter, never SQL text.
 */

/** A LIMIT clause value: `ALL` for none, else a whole non-negative number. */
export function sqlLimit(limit: number | undefined): string {
  if (limit === undefined || Number.isNaN(limit) || limit === Infinity) return 'ALL';
  return String(Math.max(0, Math.floor(limit)));
}

/** A LIKE pattern matching strings that start with `prefix` exactly (`\`, `%` and `_` escaped). */
function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function getOperation(q: Queryable, id: string): Promise<OperationRecord | undefined> {
  const { rows } = await q.query<OperationRow>(`SELECT ${OPERATION_COLUMNS} FROM ${OPERATION_FROM} WHERE o.id = $1`, [id]);
  return rows[0] && toOperationRecord(rows[0]);
}

/** A range scan of the unique index on operations.id (COLLATE "C", so LIKE with a fixed prefix is an index range, in code point order). */
export async function findOperationIds(q: Queryable, prefix: string, limit: number): Promise<string[]> {
  const { rows } = await q.query<{ id: string }>(`SELECT id FROM operations WHERE id LIKE $1 ORDER BY id LIMIT ${sqlLimit(limit)}`, [prefixPattern(prefix)]);
  return rows.map((r) => r.id);
}

/** Newest first. */
export async function listOperations(q: Queryable, filter: OperationFilter): Promise<OperationRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.status !== undefined) {
    params.push(filter.status);
    where.push(`o.status = $${params.length}`);
  }
  if (filter.parentOperationId !== undefined) {
    params.push(filter.parentOperationId);
    where.push(`o.parent_operation_id = $${params.length}`);
  }
  const { rows } = await q.query<OperationRow>(
    `SELECT ${OPERATION_COLUMNS} FROM ${OPERATION_FROM}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY o.seq DESC LIMIT ${sqlLimit(filter.limit)}`, params);
  return rows.map(toOperationRecord);
}

export async function getThread(q: Queryable, id: string): Promise<ThreadRecord | undefined> {
  const { rows } = await q.query<ThreadRow>(`SELECT ${THREAD_COLUMNS} FROM threads WHERE id = $1`, [id]);
  return rows[0] && toThreadRecord(rows[0]);
}

/** In position order, on the (thread_seq, position) unique index. */
export async function listThreadMessages(q: Queryable, threadId: string, options: { fromPosition?: number; includeCompacted?: boolean }): Promise<MessageRecord[]> {
  const { rows } = await q.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages m JOIN operations o ON o.seq = m.operation_seq
     WHERE m.thread_seq = (SELECT seq FROM threads WHERE id = $1) AND m.position >= $2${options.includeCompacted ? '' : ' AND m.compacted_into IS NULL'}
     ORDER BY m.position`,
    [threadId, options.fromPosition ?? Number.MIN_SAFE_INTEGER],
  );
  return rows.map(toMessageRecord);
}

/** Oldest first; with `last`, the newest `last` read newest first on the (thread_seq, seq) index and reversed. */
export async function listThreadOperations(q: Queryable, threadId: string, options: { last?: number }): Promise<OperationRecord[]> {
  const base = `SELECT ${OPERATION_COLUMNS} FROM ${OPERATION_FROM} WHERE o.thread_seq = (SELECT seq FROM threads WHERE id = $1)`;
  if (options.last === undefined) return (await q.query<OperationRow>(`${base} ORDER BY o.seq`, [threadId])).rows.map(toOperationRecord);
  const { rows } = await q.query<OperationRow>(`${base} ORDER BY o.seq DESC LIMIT ${sqlLimit(Math.max(0, options.last))}`, [threadId]);
  return rows.map(toOperationRecord).reverse();
}

export async function listMessages(q: Queryable, operationId: string, options: { includeCompacted?: boolean }): Promise<MessageRecord[]> {
  const { rows } = await q.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM operations o JOIN messages m ON m.operation_seq = o.seq
     WHERE o.id = $1${options.includeCompacted ? '' : ' AND m.compacted_into IS NULL'} ORDER BY m.message_seq`,
    [operationId],
  );
  return rows.map(toMessageRecord);
}

/** In step order; steps sharing an index keep their commit order. */
export async function listSteps(q: Queryable, operationId: string): Promise<StepRecord[]> {
  const { rows } = await q.query<StepRow>(
    `SELECT o.id AS operation_id, s.step_index, s.kind, s.started_at, s.finished_at, s.usage, s.summary
     FROM operations o JOIN steps s ON s.operation_seq = o.seq WHERE o.id = $1 ORDER BY s.step_index, s.seq`,
    [operationId],
  );
  return rows.map(toStepRecord);
}

export async function loadHooks(q: Queryable, operationId: string): Promise<unknown[]> {
  const { rows } = await q.query<{ hook: string }>(
    'SELECT h.hook FROM operations o JOIN hook_registrations h ON h.operation_seq = o.seq WHERE o.id = $1 ORDER BY h.position', [operationId]);
  return rows.map((r) => JSON.parse(r.hook) as unknown);
}

/** Newest first (by `createdAt`, then by insertion); `since`/`until` inclusive. */
export async function listDecisions(q: Queryable, filter: DecisionFilter): Promise<DecisionRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (filter.operationId !== undefined) add((p) => `operation_id = ${p}`, filter.operationId);
  if (filter.decision !== undefined) add((p) => `decision = ${p}`, filter.decision);
  if (filter.since !== undefined) add((p) => `created_at >= ${p}`, filter.since);
  if (filter.until !== undefined) add((p) => `created_at <= ${p}`, filter.until);
  if (filter.policyId !== undefined) add((p) => `seq IN (SELECT decision_seq FROM decision_policies WHERE policy_id = ${p})`, filter.policyId);
  const { rows } = await q.query<DecisionRow>(
    `SELECT ${DECISION_COLUMNS} FROM decisions${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, seq DESC LIMIT ${sqlLimit(filter.limit)}`, params);
  return rows.map(toDecisionRecord);
}
