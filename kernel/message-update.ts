import { HookgateError } from './errors.js';
import type { MessageUpdate } from './store.js';

/** The fields of a {@link MessageUpdate}; every other key is refused. */
const UPDATABLE: ReadonlySet<string> = new Set(['content']);

/**
 * Checks a message update before a store writes it (every store calls it
 * first, so all three refuse the same input the same way) and returns it as
 * the store should apply it. Synchronous; throws MESSAGE_UPDATE_INVALID
 * naming the field and the message when the update is not an object, names a
 * field that cannot change, or gives content that is not a string.
 */
export function checkMessageUpdate(messageId: string, update: unknown): MessageUpdate {
  if (typeof update !== 'object' || update === null || Array.isArray(update)) {
    throw invalid(messageId, `expected an object of fields to change, got ${Array.isArray(update) ? 'a list' : update === null ? 'null' : typeof update}`);
  }
  const fields = Object.keys(update);
  const fixed = fields.filter((field) => !UPDATABLE.has(field));
  if (fixed.length > 0) {
    // The names are echoed cut short: a field name comes from hook code and may be anything.
    const names = fixed.slice(0, 5).map((f) => JSON.stringify(f.length > 64 ? `${f.slice(0, 64)}…` : f)).join(', ');
    throw invalid(messageId, `${names} cannot be updated (only content can)`, fixed.slice(0, 5));
  }
  const content = (update as MessageUpdate).content;
  if (content !== undefined && typeof content !== 'string') throw invalid(messageId, `content: expected a string, got ${content === null ? 'null' : typeof content}`, ['content']);
  return content === undefined ? {} : { content };
}

function invalid(messageId: string, what: string, fields?: string[]): HookgateError {
  return new HookgateError('MESSAGE_UPDATE_INVALID', `Update of message ${messageId}: ${what}`, { details: { messageId, ...(fields ? { fields } : {}) } });
}
