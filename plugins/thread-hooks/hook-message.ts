import { HookgateError } from '../../kernel/errors.js';
import type { Message, MessageRole, ToolCall } from '../../kernel/messages.js';
import { toFunctionName } from '../../kernel/model-tool-names.js';
import type { MessageRecord, NewMessage } from '../../kernel/store.js';
import type { HookMessage, HookToolCall, LLMMessage } from './thread-hook-types.js';

/**
 * The `tool_calls` JSON of a message's calls, made once per message: keyed by
 * its first call, since a stored copy of the message shares the call objects
 * (the runtime never changes a call once the model made it) in a new array.
 */
const toolCallsJson = new WeakMap<ToolCall, { count: number; json: string }>();

function toolCallsOf(calls: readonly ToolCall[]): string {
  const known = toolCallsJson.get(calls[0]!);
  if (known !== undefined && known.count === calls.length) return known.json;
  // The frozen views the tool hooks of these calls get, made here once (their JSON is the same).
  const json = JSON.stringify(calls.map(frozenToolCall));
  toolCallsJson.set(calls[0]!, { count: calls.length, json });
  return json;
}

/**
 * Lets a stored copy of a message's calls (the store copies them as a JSON
 * column keeps them, so their JSON is the same) use the `tool_calls` JSON
 * made for the calls it was stored from: `after_create_message` then builds
 * no JSON of its own. Only when the lists are of one length and the calls
 * have the same ids in order.
 */
export function shareToolCallsJson(from: readonly ToolCall[], to: readonly ToolCall[]): void {
  if (from.length === 0 || from.length !== to.length || toolCallsJson.has(to[0]!)) return;
  const known = toolCallsJson.get(from[0]!);
  if (known === undefined || known.count !== from.length) return;
  for (let i = 0; i < from.length; i++) if (from[i]!.id !== to[i]!.id || from[i]!.identifier !== to[i]!.identifier || from[i]!.apiName !== to[i]!.apiName) return;
  toolCallsJson.set(to[0]!, known);
}

/**
 * `created_at` of a row: a stored message's `createdAt` in microseconds, or
 * now for a message not stored yet. The stores write `createdAt` as
 * `YYYY-MM-DDTHH:MM:SS.sssZ`; consecutive messages share the minute, so
 * once one time of a minute was parsed, the others of that minute are its
 * start plus their seconds and milliseconds (Date.parse on every message
 * showed in the step loop's profile). Anything else is Date.parse's.
 */
let minutePrefix = '';
let minuteMs = Number.NaN;

function createdMicros(createdAt: string | undefined): number {
  if (createdAt === undefined) return Date.now() * 1000;
  const within = secondsOfMinute(createdAt);
  if (within >= 0 && minutePrefix !== '' && createdAt.startsWith(minutePrefix)) return (minuteMs + within) * 1000;
  const ms = Date.parse(createdAt);
  if (within >= 0 && Number.isFinite(ms)) {
    minutePrefix = createdAt.slice(0, 17);
    minuteMs = ms - within;
  }
  return ms * 1000;
}

/** The `SS.sss` of a `....-..-..T..:..:SS.sssZ` time in milliseconds, or -1 for any other form. */
function secondsOfMinute(iso: string): number {
  if (iso.length !== 24 || iso.charCodeAt(23) !== 90 || iso.charCodeAt(19) !== 46 || iso.charCodeAt(16) !== 58 || iso.charCodeAt(10) !== 84) return -1;
  const s1 = iso.charCodeAt(17) - 48;
  const s2 = iso.charCodeAt(18) - 48;
  const m1 = iso.charCodeAt(20) - 48;
  const m2 = iso.charCodeAt(21) - 48;
  const m3 = iso.charCodeAt(22) - 48;
  if (s1 < 0 || s1 > 5 || s2 < 0 || s2 > 9 || m1 < 0 || m1 > 9 || m2 < 0 || m2 > 9 || m3 < 0 || m3 > 9) return -1;
  return (s1 * 10 + s2) * 1000 + m1 * 100 + m2 * 10 + m3;
}

/**
 * The frozen hook view of each call, made once per call object: the
 * message's `tool_calls` and the tool hooks of the call (`tool_call_started`,
 * `tool_call_done`, the result hooks) share it. Checked against the call's
 * fields, so a call object that did change (the runtime never changes one)
 * gets a fresh view.
 */
const frozenCalls = new WeakMap<ToolCall, { identifier: string; apiName: string; args: unknown; hooked: HookToolCall }>();

/** The call as hooks see it, frozen: hooks share it and cannot change the call they were told about. */
export function frozenToolCall(call: ToolCall): HookToolCall {
  const known = frozenCalls.get(call);
  if (known !== undefined && known.args === call.args && known.identifier === call.identifier && known.apiName === call.apiName && known.hooked.id === call.id) return known.hooked;
  const hooked = hookToolCall(call);
  Object.freeze(hooked.function);
  Object.freeze(hooked);
  frozenCalls.set(call, { identifier: call.identifier, apiName: call.apiName, args: call.args, hooked });
  return hooked;
}

/** A tool call as thread hooks see it: OpenAI's shape, the function name as providers get it. */
export function hookToolCall(call: ToolCall): HookToolCall {
  return { id: call.id, type: 'function', function: { name: toFunctionName(call.identifier, call.apiName), arguments: JSON.stringify(call.args) } };
}

/**
 * A stored (or about to be stored) message as the snake_case row hooks see.
 * A fresh object each time: hooks may change it freely (the reference's
 * examples assign to `message.content`) without touching the runtime's copy.
 */
export function toHookMessage(message: RowSource, id: string): HookMessage {
  // The fields are read by a reader per role: each sees only the few shapes of its role's messages (new and stored),
  // where one reader of every shape had megamorphic reads missing V8's stub cache (the costliest part of a no-op
  // message hook in the step loop's profile). The three readers are alike on purpose: each has its own feedback.
  const role = message.role;
  return role === 'assistant' ? assistantRow(message, id) : role === 'tool' ? toolRow(message, id) : otherRow(message, id);
}

type RowSource = Message & { id?: string; createdAt?: string; status?: MessageRecord['status']; responseCompletedAt?: number };

function assistantRow(m: RowSource, id: string): HookMessage {
  return hookRow(id, m.role, m.content, m.toolCalls, m.toolCallId, m.toolResult, m.createdAt, m.images, m.status, m.responseCompletedAt);
}

function toolRow(m: RowSource, id: string): HookMessage {
  return hookRow(id, m.role, m.content, m.toolCalls, m.toolCallId, m.toolResult, m.createdAt, m.images, m.status, m.responseCompletedAt);
}

function otherRow(m: RowSource, id: string): HookMessage {
  return hookRow(id, m.role, m.content, m.toolCalls, m.toolCallId, m.toolResult, m.createdAt, m.images, m.status, m.responseCompletedAt);
}

function hookRow(id: string, role: RowSource['role'], content: string, toolCalls: RowSource['toolCalls'], toolCallId: string | undefined, toolResult: RowSource['toolResult'], createdAt: string | undefined, images: RowSource['images'], status: RowSource['status'], responseCompletedAt: number | undefined): HookMessage {
  const row: HookMessage = {
    id,
    role: role as HookMessage['role'],
    content,
    tool_calls: toolCalls && toolCalls.length > 0 ? toolCallsOf(toolCalls) : null,
    tool_call_id: toolCallId ?? null,
    tool_status: toolResult === undefined ? null : toolResult.success ? 'success' : 'error',
    name: null,
    status: status ?? null,
    response_completed_at: responseCompletedAt ?? null,
    created_at: createdMicros(createdAt),
  };
  if (images !== undefined) row.images = images.map((image) => ({ ...image }));
  return row;
}

const WRITABLE_ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool', 'summary']);

/**
 * The message to store after `before_create_message`: the hook's `role` and
 * `content` over the original. The tool calls, the answered call and the
 * result stay the runtime's (their ids bind approvals and results; a hook
 * cannot rewire them). Throws THREAD_HOOK_INVALID naming the field when the
 * hook's row is not storable, which the caller's error rule then applies to.
 */
export function fromHookMessage(original: NewMessage, row: HookMessage, hookName: string): NewMessage {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) throw invalidReturn(hookName, 'expected a message object');
  if (!WRITABLE_ROLES.has(row.role as string)) throw invalidReturn(hookName, `role: expected system, user, assistant or tool, got ${JSON.stringify(row.role)}`);
  if (row.content !== null && typeof row.content !== 'string') throw invalidReturn(hookName, 'content: expected a string or null');
  return { ...original, role: row.role as MessageRole, content: row.content ?? '' };
}

/** A stored message as `filter_messages` gets it, remembering its record by row. */
export function hookRows(records: readonly MessageRecord[]): { rows: HookMessage[]; byRow: Map<HookMessage, MessageRecord> } {
  const byRow = new Map<HookMessage, MessageRecord>();
  const rows = records.map((record) => {
    const row = toHookMessage(record, record.id);
    byRow.set(row, record);
    return row;
  });
  return { rows, byRow };
}

/**
 * The records `filter_messages` kept, in the order it returned them. A row it
 * changed is its record with the row's content; a row it made up (no id of
 * the snapshot) is a message of the request only.
 */
export function recordsOfRows(returned: readonly HookMessage[], byRow: ReadonlyMap<HookMessage, MessageRecord>, byId: ReadonlyMap<string, MessageRecord>): MessageRecord[] {
  return returned.map((row, index) => {
    if (typeof row !== 'object' || row === null) throw invalidReturn('filter_messages', `[${index}]: expected a message row`);
    const record = byRow.get(row) ?? (typeof row.id === 'string' ? byId.get(row.id) : undefined);
    const content = typeof row.content === 'string' ? row.content : row.content === null ? '' : undefined;
    if (content === undefined) throw invalidReturn('filter_messages', `[${index}].content: expected a string or null`);
    if (record !== undefined) return record.content === content ? record : { ...record, content };
    if (!WRITABLE_ROLES.has(row.role as string)) throw invalidReturn('filter_messages', `[${index}].role: expected system, user, assistant or tool`);
    return { id: String(row.id ?? `filtered_${index}`), operationId: '', seq: 0, position: 0, createdAt: new Date().toISOString(), role: row.role as MessageRole, content };
  });
}

/** The provider messages as `prefilter_llm_history` gets them, remembering each one's message. */
export function llmMessages(messages: readonly Message[]): { list: LLMMessage[]; byItem: Map<LLMMessage, Message> } {
  const byItem = new Map<LLMMessage, Message>();
  const list = messages.map((m) => {
    const item: LLMMessage = { role: m.role === 'summary' ? 'system' : m.role, content: m.content };
    if (m.toolCalls && m.toolCalls.length > 0) item.tool_calls = m.toolCalls.map(hookToolCall);
    if (m.toolCallId !== undefined) item.tool_call_id = m.toolCallId;
    byItem.set(item, m);
    return item;
  });
  return { list, byItem };
}

/**
 * The messages to send after `prefilter_llm_history`: each item's message
 * with the item's text content; an item the hook made up becomes a plain
 * message of its role (array content is sent as its text parts).
 */
export function messagesOfItems(returned: readonly LLMMessage[], byItem: ReadonlyMap<LLMMessage, Message>, toolCallsById: ReadonlyMap<string, Message>): Message[] {
  return returned.map((item, index) => {
    if (typeof item !== 'object' || item === null) throw invalidReturn('prefilter_llm_history', `[${index}]: expected a message`);
    const content = textOf(item.content, index);
    const original = byItem.get(item);
    if (original !== undefined) return original.content === content ? original : { ...original, content };
    const role = item.role;
    if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') throw invalidReturn('prefilter_llm_history', `[${index}].role: expected system, user, assistant or tool`);
    if (role === 'tool') {
      const answered = typeof item.tool_call_id === 'string' ? toolCallsById.get(item.tool_call_id) : undefined;
      return { role, content, ...(typeof item.tool_call_id === 'string' ? { toolCallId: item.tool_call_id } : {}), ...(answered?.toolResult ? { toolResult: { ...answered.toolResult, content } } : {}) };
    }
    return { role, content };
  });
}

function textOf(content: LLMMessage['content'], index: number): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('');
  }
  throw invalidReturn('prefilter_llm_history', `[${index}].content: expected a string, null or an array of parts`);
}

function invalidReturn(hookName: string, what: string): HookgateError {
  return new HookgateError('THREAD_HOOK_INVALID', `${hookName} returned a value the runtime cannot use: ${what}`, { details: { hook: hookName } });
}
