import { HookgateError } from '../../kernel/errors.js';
import { declaresHook, unknownHookMessage } from '../../kernel/hooks/vocabulary.js';
import type { ThreadHookSignatures } from './thread-hook-types.js';
import { THREAD_HOOK_VOCABULARY, type ThreadHookName } from './thread-hook-vocabulary.js';

/** What `defineHook` takes: the hook, a snake_case id, and `execute` typed for that hook. */
export interface ThreadHookOptions<H extends ThreadHookName> {
  hook: H;
  id: string;
  execute: ThreadHookSignatures[H];
}

/** A validated, frozen thread hook. */
export interface ThreadHookDefinition<H extends ThreadHookName = ThreadHookName> {
  readonly hook: H;
  readonly id: string;
  readonly execute: ThreadHookSignatures[H];
}

/** A hook id: snake_case (lowercase letters and digits in words joined by single `_`, starting with a letter), at most 128 characters. */
export const THREAD_HOOK_ID_PATTERN = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
const MAX_ID_LENGTH = 128;
const KEYS = new Set(['hook', 'id', 'execute']);
const defined = new WeakSet<object>();

/**
 * Validates a thread hook and returns it frozen, so a bad hook fails where it
 * is written (THREAD_HOOK_INVALID, the field named, `where` prefixed when
 * given: the file a hooks folder loaded it from). Refused: an unknown hook
 * name (with a did-you-mean and the declared names), an id that is not
 * snake_case, an `execute` that is not a function, any other key.
 */
export function defineHook<H extends ThreadHookName>(options: ThreadHookOptions<H>): ThreadHookDefinition<H>;
export function defineHook(options: unknown, where?: string): ThreadHookDefinition;
export function defineHook(options: unknown, where?: string): ThreadHookDefinition {
  if (typeof options === 'object' && options !== null && defined.has(options)) return options as ThreadHookDefinition;
  const at = (field?: string): string => `${where !== undefined ? `${where}: ` : ''}defineHook${field !== undefined ? ` ${field}` : ''}`;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(at(), `expected { hook, id, execute }, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`, where);
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KEYS.has(key)) throw invalid(at(`"${printable(key)}"`), 'unknown field (a thread hook is { hook, id, execute })', where, key);
  if (!declaresHook(THREAD_HOOK_VOCABULARY, o.hook)) throw invalid(at('hook'), unknownHookMessage(THREAD_HOOK_VOCABULARY, o.hook), where, 'hook');
  const id = o.id;
  if (typeof id !== 'string' || id.length > MAX_ID_LENGTH || !THREAD_HOOK_ID_PATTERN.test(id)) {
    const shown = typeof id === 'string' ? `"${printable(id)}"` : typeof id;
    throw invalid(at('id'), `${shown} is not a snake_case id (lowercase letters and digits in words joined by "_", starting with a letter, at most ${MAX_ID_LENGTH} characters)`, where, 'id');
  }
  if (typeof o.execute !== 'function') throw invalid(at('execute'), `hook "${id}": execute must be a function`, where, 'execute');
  const hook = Object.freeze({ hook: o.hook, id, execute: o.execute }) as ThreadHookDefinition;
  defined.add(hook);
  return hook;
}

/** Whether `value` is what `defineHook` returned. */
export function isThreadHookDefinition(value: unknown): value is ThreadHookDefinition {
  return typeof value === 'object' && value !== null && defined.has(value);
}

/** A name as it can be shown in a message: control characters escaped, at most 64 characters. */
function printable(text: string): string {
  const escaped = JSON.stringify(text).slice(1, -1);
  return escaped.length > 64 ? `${escaped.slice(0, 64)}…` : escaped;
}

function invalid(where: string, what: string, file: string | undefined, field?: string): HookgateError {
  return new HookgateError('THREAD_HOOK_INVALID', `${where}: ${what}`, { details: { ...(file !== undefined ? { file } : {}), ...(field !== undefined ? { field } : {}) } });
}
