import { HookgateError } from './errors.js';
import { nestsDeeperThan } from './json-depth.js';

/**
 * Per-user values (document 003's `UserState.getValue` / `setValue`): JSON
 * values a user keeps across threads and agents, one row per user and key.
 * User ids and keys are opaque strings: compared exactly, never used as a
 * path or in SQL text. Every store checks what it is given with the rules
 * below (USER_VALUE_INVALID, nothing written), so a caller that skipped the
 * checks cannot store what another store would refuse.
 */

/** The longest user id and value key, in UTF-16 code units. */
export const MAX_USER_ID_LENGTH = 256;
export const MAX_USER_VALUE_KEY_LENGTH = 256;
/** The largest value, as the UTF-8 bytes of its JSON text. */
export const MAX_USER_VALUE_BYTES = 65_536;
/** How deep a value may nest (objects and arrays). */
export const MAX_USER_VALUE_DEPTH = 64;

/** The user-value part of the Store contract (kernel/store.ts). */
export interface UserValueStore {
  /** The user's value under `key` (a fresh copy), or undefined when there is none. USER_VALUE_INVALID for a bad user id or key. */
  getUserValue(userId: string, key: string): Promise<unknown>;
  /**
   * Sets the value under `key` (`undefined` removes it) in one transaction
   * and resolves to the value it replaced (`undefined`: there was none).
   * Concurrent writes of one key are serialized: each sees the value the
   * previous one stored. USER_VALUE_INVALID (nothing written) for a bad user
   * id, key or value (not JSON, nested too deep, over MAX_USER_VALUE_BYTES).
   */
  setUserValue(userId: string, key: string, value: unknown): Promise<{ previous: unknown }>;
  /** The user's keys in code-point order (none for an unknown user). USER_VALUE_INVALID for a bad user id. */
  listUserValueKeys(userId: string): Promise<string[]>;
}

// C0 and C1 control characters and DEL: NUL cannot be stored by PostgreSQL, and none belongs in an id or a key.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Throws USER_VALUE_INVALID unless `userId` is a non-empty string of at most 256 characters without control characters. */
export function checkUserId(userId: unknown, where = 'user id'): asserts userId is string {
  if (typeof userId !== 'string') throw invalid(`${where} must be a string, got ${userId === null ? 'null' : typeof userId}`, 'userId');
  if (userId === '' || userId.length > MAX_USER_ID_LENGTH) throw invalid(`${where} must be 1 to ${MAX_USER_ID_LENGTH} characters long (got ${userId.length})`, 'userId');
  if (CONTROL.test(userId)) throw invalid(`${where} must not contain control characters`, 'userId');
}

/** Throws USER_VALUE_INVALID unless `key` is a non-empty string of at most 256 characters without control characters. */
export function checkUserValueKey(key: unknown, where = 'user value key'): asserts key is string {
  if (typeof key !== 'string') throw invalid(`${where} must be a string, got ${key === null ? 'null' : typeof key}`, 'key');
  if (key === '' || key.length > MAX_USER_VALUE_KEY_LENGTH) throw invalid(`${where} must be 1 to ${MAX_USER_VALUE_KEY_LENGTH} characters long (got ${key.length})`, 'key');
  if (CONTROL.test(key)) throw invalid(`${where} must not contain control characters`, 'key');
}

/**
 * The JSON text a value is stored as, or USER_VALUE_INVALID naming the key:
 * not JSON (a function, a symbol, a BigInt, a cycle, a non-finite number, a
 * class instance), nested deeper than MAX_USER_VALUE_DEPTH, or larger than
 * MAX_USER_VALUE_BYTES. Own keys such as `__proto__` stay ordinary keys.
 */
export function userValueText(key: string, value: unknown): string {
  const shown = printable(key);
  const wrong = notJson(value, new Set());
  if (wrong !== undefined) throw invalid(`the value of "${shown}" is not JSON: it holds ${wrong}`, 'value');
  if (nestsDeeperThan(value, MAX_USER_VALUE_DEPTH)) throw invalid(`the value of "${shown}" nests deeper than ${MAX_USER_VALUE_DEPTH} levels`, 'value');
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_USER_VALUE_BYTES) throw invalid(`the value of "${shown}" is ${bytes} bytes of JSON; a user value is at most ${MAX_USER_VALUE_BYTES} bytes`, 'value');
  return text;
}

/** Parses stored JSON text; `__proto__` keys come back as own keys (JSON.parse makes them own properties). */
export function parseUserValue(text: string): unknown {
  return JSON.parse(text) as unknown;
}

/** What JSON cannot carry in `value`, or undefined. Stops descending past MAX_USER_VALUE_DEPTH (then reported as too deep), so hostile nesting cannot overflow the stack. */
function notJson(value: unknown, seen: Set<object>, depth = 0): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `the number ${String(value)}`;
  if (typeof value !== 'object') return `a ${typeof value}`;
  if (depth > MAX_USER_VALUE_DEPTH) return undefined; // reported as too deep
  if (seen.has(value)) return 'a cycle';
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return `a ${(value as object).constructor?.name ?? 'class'} instance`;
  seen.add(value);
  try {
    for (const inner of Object.values(value)) {
      // undefined inside objects is dropped by JSON (inside arrays it becomes null): as a column would keep it.
      if (inner === undefined) continue;
      const found = notJson(inner, seen, depth + 1);
      if (found !== undefined) return found;
    }
  } finally {
    seen.delete(value);
  }
  return undefined;
}

/** `text` escaped and cut to 64 characters, for error messages. */
function printable(text: string): string {
  const escaped = JSON.stringify(text).slice(1, -1);
  return escaped.length > 64 ? `${escaped.slice(0, 61)}...` : escaped;
}

function invalid(message: string, field: string): HookgateError {
  return new HookgateError('USER_VALUE_INVALID', message, { details: { field } });
}
