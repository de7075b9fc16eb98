import type { ToolCall, ToolResult } from '../../kernel/messages.js';
import { frozenToolCall } from './hook-message.js';
import type { HookToolCall, HookToolResult } from './thread-hook-types.js';

/**
 * A tool call and its result as the tool hooks of document 003 see them, and
 * back. The runtime's `ToolResult` keeps what the model reads in `content`
 * (also for errors: `error` there is a classification such as `tool_error`),
 * so a hook's `result` (success) or `error` (failure) is that text.
 */

/** The call as hooks see it, frozen and made once per call (hook-message.ts, which shares it with `tool_calls`). */
export { frozenToolCall };

/** A fresh hook view of a result: `{ status: 'success', result }` or `{ status: 'error', error }`. */
export function toHookToolResult(result: ToolResult): HookToolResult {
  return result.success ? { status: 'success', result: result.content } : { status: 'error', error: result.content };
}

/**
 * The view the result chain passes through the result hooks. A hook never
 * gets it, only its copy ({@link copyForHook}): so it can be of its own
 * class (told apart with one `instanceof`, no side table) and copied field
 * by field, without the generic spread (a spread of the view was the
 * costliest part of a no-op result hook in the step loop's profile).
 */
class ChainToolResult {
  constructor(
    readonly status: 'success' | 'error',
    readonly result: string | undefined,
    readonly error: string | undefined,
  ) {}
}

/** The chain's own view of a result, passed through the result hooks (each gets a copy). */
export function chainToolResult(result: ToolResult): HookToolResult {
  return (result.success ? new ChainToolResult('success', result.content, undefined) : new ChainToolResult('error', undefined, result.content)) as unknown as HookToolResult;
}

/** The copy a result hook gets (what toHookToolResult makes): one that changes it and then throws leaves the last good value as it was. */
export function copyForHook(given: HookToolResult): HookToolResult {
  if (!(given instanceof ChainToolResult)) return { ...given };
  return given.status === 'success' ? { status: 'success', result: given.result! } : { status: 'error', error: given.error! };
}

/**
 * The result to store after the hooks: the original with the hooks' text
 * (a left-out text keeps the original's). When the text changed, the
 * original's structured `data` is left out: it could still hold what a hook
 * took out of the text (a sanitized value), and nothing of the original
 * reaches the store, the stream or the model past the hook. The status is
 * the original's (the chain refuses a hook that changes it).
 */
export function fromHookToolResult(original: ToolResult, value: HookToolResult): ToolResult {
  const text = value.status === 'success' ? value.result : value.error;
  if (text === undefined || text === original.content) return original;
  const { data: _data, ...rest } = original;
  return { ...rest, content: text };
}
