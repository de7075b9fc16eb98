import { jsonCopy } from './json-copy.js';
import { hasExactKeys, isFiniteNumber, isPlainArray, plainKeys, startsWithKeys } from './plain-shape.js';
import type { ToolCall, ToolResult, Usage } from './messages.js';
import type { OperationState } from './store.js';

/**
 * Copies of the step loop's usual records for the stores, built as object
 * literals: the generic {@link jsonCopy} adds every key through a
 * megamorphic keyed store, the costliest part of an in-memory step commit.
 * Each returns exactly what jsonCopy returns (same keys, same order, no shared
 * references); a value of another shape (other or more keys, another order,
 * a `toJSON`, a non-finite number, an own `__proto__` key) is handed to
 * jsonCopy itself. Synchronous; throws what jsonCopy throws.
 */

const USAGE_KEYS = ['promptTokens', 'completionTokens', 'totalTokens', 'cost'] as const;
const STATE_KEYS = ['stepIndex', 'usage', 'pendingToolCalls', 'approvedToolCallIds', 'modelTurns', 'compactions'] as const;
const CALL_KEYS = ['id', 'identifier', 'apiName', 'args', 'nativeId'] as const;
const CALL_KEYS_NO_NATIVE = ['id', 'identifier', 'apiName', 'args'] as const;
const RESULT_KEYS = ['content', 'success', 'executionTime'] as const;
const SUMMARY_RESULT_KEYS = ['toolCallId', 'success', 'error'] as const;
const SUMMARY_RESULT_KEYS_NO_ERROR = ['toolCallId', 'success'] as const;

/** A copy of a usage record. */
export function copyUsage(usage: Usage): Usage {
  const u = usage as unknown;
  if (typeof u === 'object' && u !== null && hasExactKeys(u, USAGE_KEYS)) {
    // Each field read once, as the generic copy reads it (a getter runs once).
    const { promptTokens, completionTokens, totalTokens, cost } = usage;
    if (isFiniteNumber(promptTokens) && isFiniteNumber(completionTokens) && isFiniteNumber(totalTokens) && isFiniteNumber(cost)) {
      return { promptTokens, completionTokens, totalTokens, cost };
    }
  }
  return jsonCopy(usage);
}

/** A copy of a list of tool calls (undefined stays undefined). */
export function copyToolCalls<T extends readonly ToolCall[] | undefined>(calls: T): T {
  if (calls === undefined) return calls;
  return (callsCopy(calls) ?? jsonCopy(calls)) as T;
}

/** A copy of a tool result (undefined stays undefined). */
export function copyToolResult<T extends ToolResult | undefined>(result: T): T {
  if (result === undefined) return result;
  const r = result as ToolResult;
  if (typeof r === 'object' && r !== null && hasExactKeys(r, RESULT_KEYS)) {
    const { content, success, executionTime } = r;
    if (typeof content === 'string' && typeof success === 'boolean' && isFiniteNumber(executionTime)) return { content, success, executionTime } as T;
  }
  return jsonCopy(result);
}

/** A copy of an operation state. */
export function copyOperationState(state: OperationState): OperationState {
  const keys = typeof state === 'object' && state !== null ? plainKeys(state) : undefined;
  if (keys !== undefined && startsWithKeys(keys, STATE_KEYS)) {
    const { stepIndex, usage, pendingToolCalls, approvedToolCallIds, modelTurns, compactions } = state;
    // A usage that is not an object would be left out by the generic copy, not written as undefined.
    if (isFiniteNumber(stepIndex) && isFiniteNumber(modelTurns) && isFiniteNumber(compactions) && typeof usage === 'object' && usage !== null) {
      const pending = callsCopy(pendingToolCalls);
      const approved = stringsCopy(approvedToolCallIds);
      if (pending !== undefined && approved !== undefined) {
        const out: OperationState = { stepIndex, usage: copyUsage(usage), pendingToolCalls: pending, approvedToolCallIds: approved, modelTurns, compactions };
        // The runtime's state carries `lastText` (often undefined) and, when it finishes, `approval: undefined`; an
        // operation with thread hooks carries `threadHooks` (their ids), which would otherwise make every commit's copy generic.
        if (keys.length === STATE_KEYS.length || copyStateTail(state, keys, STATE_KEYS.length, out)) return out;
      }
    }
  }
  return jsonCopy(state);
}

/** A copy of a step's summary (what the runtime's `summarize` makes: content, tool call names, tool results). */
export function copyStepSummary(summary: Record<string, unknown>): Record<string, unknown> {
  const keys = typeof summary === 'object' && summary !== null ? plainKeys(summary) : undefined;
  if (keys !== undefined) {
    const out: Record<string, unknown> = {};
    let usual = true;
    for (let i = 0; i < keys.length && usual; i++) {
      const key = keys[i]!;
      if (key === 'content') {
        const content = summary.content;
        if (typeof content === 'string') out.content = content;
        else usual = false;
      } else if (key === 'toolCalls') {
        const names = stringsCopy(summary.toolCalls);
        if (names !== undefined) out.toolCalls = names;
        else usual = false;
      } else if (key === 'toolResults') {
        const results = resultsCopy(summary.toolResults);
        if (results !== undefined) out.toolResults = results;
        else usual = false;
      } else usual = false;
    }
    if (usual) return out;
  }
  return jsonCopy(summary);
}

/**
 * Copies the keys of `source` from `keys[from]` on into `out` when each is
 * undefined (left out, as JSON leaves it out) or a string, boolean or finite
 * number; false, with `out` to be dropped, for anything else.
 */
function copyPrimitiveTail(source: object, keys: readonly string[], from: number, out: object): boolean {
  for (let i = from; i < keys.length; i++) {
    const key = keys[i]!;
    const value = (source as Record<string, unknown>)[key];
    if (value === undefined) continue;
    // An own "__proto__" would set the copy's prototype here: the generic copy defines it as data.
    if (key === '__proto__' || !(typeof value === 'string' || typeof value === 'boolean' || isFiniteNumber(value))) return false;
    (out as Record<string, unknown>)[key] = value;
  }
  return true;
}

/** {@link copyPrimitiveTail} for an operation state: its `threadHooks` selection ({ prompt?, code? } lists of ids) too. */
function copyStateTail(state: OperationState, keys: readonly string[], from: number, out: OperationState): boolean {
  const at = keys.indexOf('threadHooks', from);
  if (at < 0 || state.threadHooks === undefined) return copyPrimitiveTail(state, keys, from, out);
  const selection = threadHooksCopy(state.threadHooks);
  // Copied in the source's key order: the keys before it, it, the keys after it.
  if (selection === undefined || !copyPrimitiveTail(state, keys.slice(0, at), from, out)) return false;
  out.threadHooks = selection;
  return copyPrimitiveTail(state, keys, at + 1, out);
}

/** A copy of a state's `threadHooks` when it is { prompt?, code? } with string lists (keys in any order), else undefined. */
function threadHooksCopy(value: unknown): Record<string, string[]> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const keys = plainKeys(value);
  if (keys === undefined) return undefined;
  const out: Record<string, string[]> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key !== 'prompt' && key !== 'code') return undefined;
    const list = (value as Record<string, unknown>)[key];
    if (list === undefined) continue;
    const ids = stringsCopy(list);
    if (ids === undefined) return undefined;
    out[key] = ids;
  }
  return out;
}

/** Summary tool results ({ toolCallId, success, error }), else undefined. */
function resultsCopy(items: unknown): Array<Record<string, unknown>> | undefined {
  if (!isPlainArray(items)) return undefined;
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < items.length; i++) {
    const r = items[i] as { toolCallId?: unknown; success?: unknown; error?: unknown } | undefined;
    if (typeof r !== 'object' || r === null || !(hasExactKeys(r, SUMMARY_RESULT_KEYS) || hasExactKeys(r, SUMMARY_RESULT_KEYS_NO_ERROR))) return undefined;
    const { toolCallId, success, error } = r;
    if (typeof toolCallId !== 'string' || typeof success !== 'boolean') return undefined;
    if (error === undefined) out.push({ toolCallId, success });
    else if (typeof error === 'string') out.push({ toolCallId, success, error });
    else return undefined;
  }
  return out;
}

/** The copy when every call has the usual shape, else undefined (the caller then uses jsonCopy). */
function callsCopy(calls: unknown): ToolCall[] | undefined {
  if (!isPlainArray(calls)) return undefined;
  const out: ToolCall[] = [];
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i] as ToolCall | undefined;
    if (typeof c !== 'object' || c === null) return undefined;
    if (!hasExactKeys(c, CALL_KEYS) && !hasExactKeys(c, CALL_KEYS_NO_NATIVE)) return undefined;
    const { id, identifier, apiName, nativeId } = c;
    if (typeof id !== 'string' || typeof identifier !== 'string' || typeof apiName !== 'string' || (nativeId !== undefined && typeof nativeId !== 'string')) return undefined;
    // The arguments are the model's: any JSON, so the generic copy (undefined args would drop the key).
    const args = jsonCopy(c.args) as Record<string, unknown> | undefined;
    if (args === undefined) return undefined;
    out.push(nativeId !== undefined ? { id, identifier, apiName, args, nativeId } : { id, identifier, apiName, args });
  }
  return out;
}

function stringsCopy(items: unknown): string[] | undefined {
  if (!isPlainArray(items)) return undefined;
  for (let i = 0; i < items.length; i++) if (typeof items[i] !== 'string') return undefined;
  return (items as string[]).slice();
}
