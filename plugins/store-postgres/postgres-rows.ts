import type { DecisionRecord, MessageRecord, OperationRecord, StepRecord, ThreadRecord } from '../../kernel/store.js';

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
  version: string | number;
}

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
  defaulted: boolean;
  latency_micros: number;
  input_digest: string;
  raw_input: string | null;
}

/** JSON text for a text column; `undefined` is stored as NULL so it reads back as absent. */
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
    version: Number(row.version),
  };
  if (row.parent_operation_id !== null) record.parentOperationId = row.parent_operation_id;
  if (row.user_id !== null) record.userId = row.user_id;
  if (row.reason !== null) record.reason = row.reason as OperationRecord['reason'];
  if (row.error !== null) record.error = JSON.parse(row.error) as NonNullable<OperationRecord['error']>;
  return record;
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
  const toolCalls = fromJson<MessageRecord['toolCalls']>(row.tool_calls);
  if (toolCalls !== undefined) record.toolCalls = toolCalls;
  if (row.tool_call_id !== null) record.toolCallId = row.tool_call_id;
  const toolResult = fromJson<MessageRecord['toolResult']>(row.tool_result);
  if (toolResult !== undefined) record.toolResult = toolResult;
  if (row.compacted_into !== null) record.compactedInto = row.compacted_into;
  if (row.images !== null) record.images = JSON.parse(row.images) as MessageRecord['images'];
  if (row.status !== null) record.status = row.status;
  if (row.response_completed_at !== null) record.responseCompletedAt = Number(row.response_completed_at);
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
    defaulted: row.defaulted,
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
