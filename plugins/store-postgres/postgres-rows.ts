import type { MessageRecord } from '../../kernel/store.js';
import { withMessageColumns } from '../../kernel/store-rows.js';

/** The rows every SQL store shares (kernel/store-rows.ts); message rows are this engine's own. */
export { toDecisionRecord, toJson, toOperationRecord, toStepRecord, toThreadRecord } from '../../kernel/store-rows.js';
export type { DecisionRow, OperationRow, StepRow, ThreadRow } from '../../kernel/store-rows.js';

/*
 * Row shapes as node-postgres returns them and their records. JSON columns
 * are text (postgres-migrations.ts says why), message content too (as a
 * JSON string: PostgreSQL text cannot hold NUL, JSON escapes it, and a
 * binary tool output may carry one); bigint columns arrive as
 * strings and are read back as numbers (positions and versions stay far
 * below 2^53).
 */

/** An operation with its thread's id. */
export const OPERATION_COLUMNS = `o.id, o.agent_id, t.id AS thread_id, o.parent_operation_id, o.user_id, o.status, o.reason, o.agent, o.context, o.state,
  o.error, o.created_at, o.updated_at, o.version`;
export const OPERATION_FROM = 'operations o JOIN threads t ON t.seq = o.thread_seq';
export const MESSAGE_COLUMNS = `m.id, o.id AS operation_id, m.message_seq, m.position, m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_result, m.images,
  m.compacted_into, m.created_at, m.status, m.response_completed_at`;
export const THREAD_COLUMNS = 'id, agent_id, instance_id, uid, initial_data, thread_values, created_at, updated_at';
export const DECISION_COLUMNS =
  'id, created_at, operation_id, tool_call_id, agent_id, event, identifier, api_name, policies, decision, reason, defaulted, latency_micros, input_digest, raw_input';

export interface MessageRow {
  id: string;
  operation_id: string;
  message_seq: number;
  position: string | number;
  role: MessageRecord['role'];
  content: string;
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_result: string | null;
  images: string | null;
  compacted_into: string | null;
  created_at: string;
  status: MessageRecord['status'] | null;
  /** bigint: read back as a string. */
  response_completed_at: string | number | null;
}

export function toMessageRecord(row: MessageRow): MessageRecord {
  const record: MessageRecord = {
    id: row.id,
    operationId: row.operation_id,
    seq: row.message_seq,
    position: Number(row.position),
    role: row.role,
    content: JSON.parse(row.content) as string,
    createdAt: row.created_at,
  };
  return withMessageColumns(record, row);
}

