import type { DecisionRecord, MessageRecord, OperationRecord, StepRecord, ThreadRecord } from '../../kernel/store.js';
import type { MessageIds } from './message-ids.js';

/** Column shapes as better-sqlite3 returns them. JSON columns are TEXT. */
export interface OperationRow {
  id: string;
  agent_id: string;
  thread_id: string;
  parent_operation_id: string | null;
  user_id: string | null;
  status: OperationRecord['status'];
  reason: string | null;
  agent: string;
  context: string;
  state: string;
  error: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

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

export interface ThreadRow {
  id: string;
  agent_id: string;
  instance_id: string | null;
  uid: string | null;
  initial_data: string | null;
  thread_values: string;
  created_at: string;
  updated_at: string;
}

export interface StepRow {
  operation_id: string;
  step_index: number;
  kind: StepRecord['kind'];
  started_at: string;
  finished_at: string;
  usage: string;
  summary: string;
}

export interface DecisionRow {
  id: string;
  created_at: string;
  operation_id: string | null;
  tool_call_id: string | null;
  agent_id: string | null;
  event: string;
  identifier: string | null;
  api_name: string | null;
  policies: string;
  decision: DecisionRecord['decision'];
  reason: string | null;
  defaulted: number;
  latency_micros: number;
  input_digest: string;
  raw_input: string | null;
}

/** JSON text for a TEXT column; `undefined` is stored as SQL NULL so it reads back as absent. */
export function toJson(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

function fromJson<T>(text: string | null): T | undefined {
  return text === null ? undefined : (JSON.parse(text) as T);
}

export function toOperationRecord(row: OperationRow): OperationRecord {
  const record: OperationRecord = {
    id: row.id,
    agentId: row.agent_id,
    threadId: row.thread_id,
    status: row.status,
    agent: JSON.parse(row.agent) as unknown,
    context: JSON.parse(row.context) as Record<string, string>,
    state: JSON.parse(row.state) as OperationRecord['state'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
  if (row.parent_operation_id !== null) record.parentOperationId = row.parent_operation_id;
  if (row.user_id !== null) record.userId = row.user_id;
  if (row.reason !== null) record.reason = row.reason as OperationRecord['reason'];
  if (row.error !== null) record.error = JSON.parse(row.error) as NonNullable<OperationRecord['error']>;
  return record;
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
  const toolCalls = fromJson<MessageRecord['toolCalls']>(row.tool_calls);
  if (toolCalls !== undefined) record.toolCalls = toolCalls;
  if (row.tool_call_id !== null) record.toolCallId = row.tool_call_id;
  const toolResult = fromJson<MessageRecord['toolResult']>(row.tool_result);
  if (toolResult !== undefined) record.toolResult = toolResult;
  if (row.compacted_into !== null) record.compactedInto = row.compacted_into;
  if (row.images !== null) record.images = JSON.parse(row.images) as MessageRecord['images'];
  if (row.status !== null) record.status = row.status;
  if (row.response_completed_at !== null) record.responseCompletedAt = row.response_completed_at;
  return record;
}

export function toThreadRecord(row: ThreadRow): ThreadRecord {
  const record: ThreadRecord = {
    id: row.id,
    agentId: row.agent_id,
    values: JSON.parse(row.thread_values) as ThreadRecord['values'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.instance_id !== null) record.instanceId = row.instance_id;
  if (row.uid !== null) record.uid = row.uid;
  const initialData = fromJson<unknown>(row.initial_data);
  if (initialData !== undefined) record.initialData = initialData;
  return record;
}

export function toStepRecord(row: StepRow): StepRecord {
  return {
    operationId: row.operation_id,
    stepIndex: row.step_index,
    kind: row.kind,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    usage: JSON.parse(row.usage) as StepRecord['usage'],
    summary: JSON.parse(row.summary) as StepRecord['summary'],
  };
}

export function toDecisionRecord(row: DecisionRow): DecisionRecord {
  const record: DecisionRecord = {
    id: row.id,
    createdAt: row.created_at,
    event: row.event,
    policies: JSON.parse(row.policies) as DecisionRecord['policies'],
    decision: row.decision,
    defaulted: row.defaulted === 1,
    latencyMicros: row.latency_micros,
    inputDigest: row.input_digest,
  };
  if (row.operation_id !== null) record.operationId = row.operation_id;
  if (row.tool_call_id !== null) record.toolCallId = row.tool_call_id;
  if (row.agent_id !== null) record.agentId = row.agent_id;
  if (row.identifier !== null) record.identifier = row.identifier;
  if (row.api_name !== null) record.apiName = row.api_name;
  if (row.reason !== null) record.reason = row.reason;
  const rawInput = fromJson<unknown>(row.raw_input);
  if (rawInput !== undefined) record.rawInput = rawInput;
  return record;
}
