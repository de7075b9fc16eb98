import { POLICY_EVENTS } from '../policy-types.js';

/** Fields a `policy eval --event` file may have besides `type`/`event`: the tool call's hook context, its result, its canonical forms. */
const EVENT_FIELDS = new Set([
  'identifier', 'apiName', 'args', 'result', 'error', 'canonical', 'toolCallId', 'nativeToolCallId', 'assistantMessageId', 'callIndex', 'stepIndex',
  'operationId', 'executor', 'agentId', 'userId', 'topicId', 'sessionId', 'threadId', 'groupId', 'taskId', 'workspaceId', 'documentId',
  'sourceMessageId', 'toolMessageId', 'parentOperationId', 'toolSource', 'executionTarget', 'activeDeviceId', 'timestamp',
]);

/**
 * Validates a `policy eval` event: the hook event in `type` (or `event`, the
 * same field under the name `--help` has always shown), `identifier` and
 * `apiName` strings, `args` and `result` objects, and no field a policy
 * would never see. Returns the event with `type` set, or the problem naming
 * the field, so a misspelt file is refused instead of evaluating nothing.
 */
export function parseEvalEvent(raw: unknown): { ok: true; event: Record<string, unknown> } | { ok: false; message: string } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, message: 'the event must be a JSON object' };
  const { type, event, ...fields } = raw as Record<string, unknown>;
  const events = POLICY_EVENTS.join(', ');
  if (type !== undefined && event !== undefined && type !== event) return { ok: false, message: `field "event" (${JSON.stringify(event)}) and field "type" (${JSON.stringify(type)}) disagree: give one` };
  const name = type ?? event;
  const field = type !== undefined ? 'type' : 'event';
  if (name === undefined) return { ok: false, message: `field "type" is missing: the hook event to decide (${events}; "event" is accepted as the same field)` };
  if (typeof name !== 'string' || !(POLICY_EVENTS as readonly string[]).includes(name)) return { ok: false, message: `field "${field}": must be one of ${events}, got ${JSON.stringify(name)}` };
  for (const key of ['identifier', 'apiName'] as const) {
    if (typeof fields[key] !== 'string' || fields[key] === '') return { ok: false, message: `field "${key}" is missing: a tool call names its tool as identifier/apiName (e.g. "fs" and "readFile")` };
  }
  for (const key of ['args', 'canonical', 'result'] as const) {
    const v = fields[key];
    if (v !== undefined && (v === null || typeof v !== 'object' || Array.isArray(v))) return { ok: false, message: `field "${key}": must be an object` };
  }
  const result = fields.result as { content?: unknown; success?: unknown } | undefined;
  if (result !== undefined && typeof result.content !== 'string') return { ok: false, message: 'field "result.content": must be a string (the text the tool returned)' };
  if (result !== undefined && result.success !== undefined && typeof result.success !== 'boolean') return { ok: false, message: 'field "result.success": must be true or false' };
  if (result !== undefined && name === 'beforeToolCall') return { ok: false, message: 'field "result": a beforeToolCall event has no result yet (use type afterToolCall)' };
  const unknown = Object.keys(fields).filter((k) => !EVENT_FIELDS.has(k));
  if (unknown.length > 0) return { ok: false, message: `field "${unknown[0]}" is not part of a tool call event (fields: type, ${[...EVENT_FIELDS].join(', ')})` };
  return { ok: true, event: { type: name, ...fields } };
}
