import { HookgateError } from './errors.js';
import type { MessageStatus, MessageUpdate } from './store.js';

/** The statuses a message update may set. */
export const MESSAGE_STATUSES: ReadonlySet<string> = new Set<MessageStatus>(['pending', 'completed', 'failed']);

/**
 * The fields of a {@link MessageUpdate} by the names thread hooks use
 * (document 003's snake_case message row) and the store's names. Every other
 * key is refused.
 */
const HOOK_FIELDS: ReadonlyMap<string, keyof MessageUpdate> = new Map<string, keyof MessageUpdate>([
  ['content', 'content'],
  ['status', 'status'],
  ['response_completed_at', 'responseCompletedAt'],
]);
const STORE_FIELDS: ReadonlySet<string> = new Set<string>(HOOK_FIELDS.values());

/**
 * Checks a message update before a store writes it (every store calls it
 * first, so all three refuse the same input the same way) and returns it as
 * the store should apply it (only the fields given). Synchronous; throws
 * MESSAGE_UPDATE_INVALID naming the field and the message when the update is
 * not an object, names a field that cannot change, or gives a value of the
 * wrong kind: content a string, status one of {@link MESSAGE_STATUSES},
 * responseCompletedAt a whole number of microseconds from 0 to
 * Number.MAX_SAFE_INTEGER.
 */
export function checkMessageUpdate(messageId: string, update: unknown): MessageUpdate {
  const fields = fieldsOf(messageId, update);
  refuseOthers(messageId, fields, STORE_FIELDS, 'content, status and responseCompletedAt');
  const given = update as Record<string, unknown>;
  const checked: MessageUpdate = {};
  if (given.content !== undefined) checked.content = checkContent(messageId, given.content, 'content');
  if (given.status !== undefined) checked.status = checkStatus(messageId, given.status, 'status');
  if (given.responseCompletedAt !== undefined) checked.responseCompletedAt = checkMicros(messageId, given.responseCompletedAt, 'responseCompletedAt');
  return checked;
}

/**
 * A thread hook's update (`state.updateMessage()` after `before_update_message`,
 * by the row's snake_case names: `content`, `status`, `response_completed_at`)
 * as the store's {@link MessageUpdate}. Throws MESSAGE_UPDATE_INVALID as
 * {@link checkMessageUpdate} does, naming the fields by the hook's names.
 */
export function messageUpdateOfHookFields(messageId: string, fields: unknown): MessageUpdate {
  const names = fieldsOf(messageId, fields);
  refuseOthers(messageId, names, new Set(HOOK_FIELDS.keys()), 'content, status and response_completed_at');
  const given = fields as Record<string, unknown>;
  const update: MessageUpdate = {};
  if (given.content !== undefined) update.content = checkContent(messageId, given.content, 'content');
  if (given.status !== undefined) update.status = checkStatus(messageId, given.status, 'status');
  if (given.response_completed_at !== undefined) update.responseCompletedAt = checkMicros(messageId, given.response_completed_at, 'response_completed_at');
  return update;
}

function fieldsOf(messageId: string, update: unknown): string[] {
  if (typeof update !== 'object' || update === null || Array.isArray(update)) {
    throw invalid(messageId, `expected an object of fields to change, got ${Array.isArray(update) ? 'a list' : update === null ? 'null' : typeof update}`);
  }
  return Object.keys(update);
}

function refuseOthers(messageId: string, fields: readonly string[], allowed: ReadonlySet<string>, allowedText: string): void {
  const fixed = fields.filter((field) => !allowed.has(field));
  if (fixed.length === 0) return;
  // The names are echoed cut short: a field name comes from hook code and may be anything.
  const names = fixed.slice(0, 5).map((f) => JSON.stringify(f.length > 64 ? `${f.slice(0, 64)}…` : f)).join(', ');
  throw invalid(messageId, `${names} cannot be updated (only ${allowedText} can)`, fixed.slice(0, 5));
}

function checkContent(messageId: string, value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(messageId, `${field}: expected a string, got ${kindOf(value)}`, [field]);
  return value;
}

function checkStatus(messageId: string, value: unknown, field: string): MessageStatus {
  if (typeof value !== 'string' || !MESSAGE_STATUSES.has(value)) {
    const shown = typeof value === 'string' ? JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value) : kindOf(value);
    throw invalid(messageId, `${field}: expected one of ${[...MESSAGE_STATUSES].join(', ')}, got ${shown}`, [field]);
  }
  return value as MessageStatus;
}

function checkMicros(messageId: string, value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    const shown = typeof value === 'number' ? String(value) : kindOf(value);
    throw invalid(messageId, `${field}: expected a whole number of microseconds since the epoch (0 to ${Number.MAX_SAFE_INTEGER}), got ${shown}`, [field]);
  }
  return value;
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value;
}

function invalid(messageId: string, what: string, fields?: string[]): HookgateError {
  return new HookgateError('MESSAGE_UPDATE_INVALID', `Update of message ${messageId}: ${what}`, { details: { messageId, ...(fields ? { fields } : {}) } });
}
