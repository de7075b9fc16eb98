import type { MessageRecord } from '../../kernel/store.js';
import { withMessageColumns } from '../../kernel/store-rows.js';
import type { MessageIds } from './message-ids.js';

/** The rows every SQL store shares (kernel/store-rows.ts); message rows are this engine's own. */
export { toDecisionRecord, toJson, toOperationRecord, toStepRecord, toThreadRecord } from '../../kernel/store-rows.js';
export type { DecisionRow, OperationRow, StepRow, ThreadRow } from '../../kernel/store-rows.js';

/** A message entry of the operation log; `id` is NULL for a generated id (derived from `key`, see message-ids.ts). */
export interface MessageRow {
  key: number;
  id: string | null;
  operation_id: string;
  seq: number;
  position: number;
  role: MessageRecord['role'];
  content: string;
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_result: string | null;
  compacted_into: string | null;
  created_at: string;
  images: string | null;
  status: MessageRecord['status'] | null;
  response_completed_at: number | null;
}

export function toMessageRecord(row: MessageRow, ids: MessageIds): MessageRecord {
  const record: MessageRecord = {
    id: row.id ?? ids.forKey(row.key),
    operationId: row.operation_id,
    seq: row.seq,
    position: row.position,
    role: row.role,
    content: row.content,
    createdAt: row.created_at,
  };
  return withMessageColumns(record, row);
}

