import type { DecisionRecord, MessageRecord, OperationRecord, StepRecord, ThreadRecord } from './store.js';
import type { SubmissionRecord } from './submissions.js';

/*
 * The rows a SQL store reads back (snake_case columns, JSON in text columns)
 * and the records they make, shared by store-sqlite and store-postgres so the
 * two engines cannot drift apart on what a record holds. Where the engines'
 * drivers differ the row type admits both: node-postgres returns BIGINT as a
 * string and BOOLEAN as a boolean, better-sqlite3 returns numbers. A message
 * row's id, position and content are stored differently by each engine (see
 * each store's rows module); the columns after them are shared here.
 */

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
  /** INTEGER 0/1 in SQLite, BOOLEAN in PostgreSQL. */
  defaulted: number | boolean;
  latency_micros: number;
  input_digest: string;
  raw_input: string | null;
}

export interface SubmissionRow {
  seq: string | number;
  id: string;
  dispatch_id: string;
  thread_id: string;
  agent_id: string;
  instance_id: string;
  status: SubmissionRecord['status'];
  message: string;
  attempts: number;
  first_started_at: string | null;
  operation_id: string | null;
  joined_into: string | null;
  abort_requested_at: string | null;
  result: string | null;
  error: string | null;
  accepted_at: string;
  updated_at: string;
  settled_at: string | null;
}

/** The columns of a submission joined to its thread's id (`FROM SUBMISSION_FROM`). */
export const SUBMISSION_COLUMNS = `s.seq, s.id, s.dispatch_id, t.id AS thread_id, s.agent_id, s.instance_id, s.status, s.message, s.attempts, s.first_started_at,
  s.operation_id, s.joined_into, s.abort_requested_at, s.result, s.error, s.accepted_at, s.updated_at, s.settled_at`;
export const SUBMISSION_FROM = 'submissions s JOIN threads t ON t.seq = s.thread_seq';

/** JSON text for a text column; `undefined` is stored as NULL so it reads back as absent. */
export function toJson(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

export function fromJson<T>(text: string | null): T | undefined {
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
    defaulted: row.defaulted === true || row.defaulted === 1,
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

export function toSubmissionRecord(row: SubmissionRow): SubmissionRecord {
  const record: SubmissionRecord = {
    id: row.id,
    dispatchId: row.dispatch_id,
    threadId: row.thread_id,
    agentId: row.agent_id,
    instanceId: row.instance_id,
    seq: Number(row.seq),
    status: row.status,
    message: JSON.parse(row.message) as unknown,
    attempts: row.attempts,
    acceptedAt: row.accepted_at,
    updatedAt: row.updated_at,
  };
  if (row.first_started_at !== null) record.firstStartedAt = row.first_started_at;
  if (row.operation_id !== null) record.operationId = row.operation_id;
  if (row.joined_into !== null) record.joinedInto = row.joined_into;
  if (row.abort_requested_at !== null) record.abortRequestedAt = row.abort_requested_at;
  if (row.result !== null) record.result = JSON.parse(row.result) as SubmissionRecord['result'];
  if (row.error !== null) record.error = JSON.parse(row.error) as SubmissionRecord['error'];
  if (row.settled_at !== null) record.settledAt = row.settled_at;
  return record;
}

/** The message columns both engines store alike (after id, position and content). */
export interface MessageTailColumns {
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_result: string | null;
  compacted_into: string | null;
  images: string | null;
  status: MessageRecord['status'] | null;
  /** Microseconds; PostgreSQL's bigint arrives as a string. */
  response_completed_at: string | number | null;
}

/** Adds the optional message fields of `row` to `record` (absent columns stay absent). */
export function withMessageColumns(record: MessageRecord, row: MessageTailColumns): MessageRecord {
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
