import type { ToolCall, ToolResult } from '../../kernel/messages.js';
import { hookToolCall } from './hook-message.js';
import type { HookToolCall, HookToolResult } from './thread-hook-types.js';

/**
 * A tool call and its result as the tool hooks of document 003 see them, and
 * back. The runtime's `ToolResult` keeps what the model reads in `content`
 * (also for errors: `error` there is a classification such as `tool_error`),
 * so a hook's `result` (success) or `error` (failure) is that text.
 */

/**
 * The frozen hook view of each call, made once per call object: the tool
 * hooks of one call (`tool_call_started`, `tool_call_done`, the result
 * hooks) share it. Checked against the call's fields, so a call object that
 * did change (the runtime never changes one) gets a fresh view.
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

/** A fresh hook view of a result: `{ status: 'success', result }` or `{ status: 'error', error }`. */
export function toHookToolResult(result: ToolResult): HookToolResult {
  return result.success ? { status: 'success', result: result.content } : { status: 'error', error: result.content };
}

/**
 * The views the result chain made itself ({@link chainToolResult}). A hook
 * never gets one of them, only its copy ({@link copyForHook}), so their
 * shape is the one made here: they are copied field by field, without the
 * generic spread (a spread of the view was the costliest part of a no-op
 * result hook in the step loop's profile).
 */
const chainViews = new WeakSet<HookToolResult>();

/** The chain's own view of a result, passed through the result hooks (each gets a copy). */
export function chainToolResult(result: ToolResult): HookToolResult {
  const view = toHookToolResult(result);
  chainViews.add(view);
  return view;
}

/** The copy a result hook gets: one that changes it and then throws leaves the last good value as it was. */
export function copyForHook(given: HookToolResult): HookToolResult {
  if (!chainViews.has(given)) return { ...given };
  return given.status === 'success' ? { status: 'success', result: given.result } : { status: 'error', error: given.error };
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
