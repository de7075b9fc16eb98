import { hasExactKeys, isFiniteNumber, isPlainArray, plainKeys, startsWithKeys } from '../../kernel/plain-shape.js';
import type { OperationState } from '../../kernel/store.js';
import type { ToolCall, ToolResult, Usage } from '../../kernel/messages.js';

/**
 * JSON texts of the step loop's usual records, written field by field: on
 * Node 20, JSON.stringify looks `toJSON` up on every object and walks each
 * one generically (~7 k instructions per call, four calls per step commit).
 * Every function returns exactly what JSON.stringify returns for the same
 * value: a value of another shape (other or more keys, another key order, a
 * `toJSON`, a non-finite number, a string JSON must escape) is handed to
 * JSON.stringify itself. Synchronous; throws what JSON.stringify throws.
 */

const USAGE_KEYS = ['promptTokens', 'completionTokens', 'totalTokens', 'cost'] as const;
const STATE_KEYS = ['stepIndex', 'usage', 'pendingToolCalls', 'approvedToolCallIds', 'modelTurns', 'compactions'] as const;
const CALL_KEYS = ['id', 'identifier', 'apiName', 'args', 'nativeId'] as const;
const CALL_KEYS_NO_NATIVE = ['id', 'identifier', 'apiName', 'args'] as const;
const RESULT_KEYS = ['content', 'success', 'executionTime'] as const;
const SUMMARY_RESULT_KEYS = ['toolCallId', 'success', 'error'] as const;
const SUMMARY_RESULT_KEYS_NO_ERROR = ['toolCallId', 'success'] as const;
/** Characters JSON escapes (and lone surrogates, which it writes as \u escapes): such strings go to JSON.stringify. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function stringJson(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** `Usage` as JSON.stringify writes it. */
export function usageJson(usage: Usage): string {
  const u = usage as unknown;
  if (typeof u === 'object' && u !== null && hasExactKeys(u, USAGE_KEYS)) {
    const { promptTokens, completionTokens, totalTokens, cost } = usage;
    if (isFiniteNumber(promptTokens) && isFiniteNumber(completionTokens) && isFiniteNumber(totalTokens) && isFiniteNumber(cost)) {
      return '{"promptTokens":' + promptTokens + ',"completionTokens":' + completionTokens + ',"totalTokens":' + totalTokens + ',"cost":' + cost + '}';
    }
  }
  return JSON.stringify(usage);
}

/** A message's or a state's tool calls as JSON.stringify writes them; undefined for undefined. */
export function toolCallsJson(calls: readonly ToolCall[] | undefined): string | undefined {
  if (calls === undefined) return undefined;
  const text = callsText(calls);
  return text ?? JSON.stringify(calls);
}

/** A tool result as JSON.stringify writes it; undefined for undefined. */
export function toolResultJson(result: ToolResult | undefined): string | undefined {
  if (result === undefined) return undefined;
  if (typeof result === 'object' && result !== null && hasExactKeys(result, RESULT_KEYS)) {
    const { content, success, executionTime } = result;
    if (typeof content === 'string' && typeof success === 'boolean' && isFiniteNumber(executionTime)) {
      return '{"content":' + stringJson(content) + ',"success":' + success + ',"executionTime":' + executionTime + '}';
    }
  }
  return JSON.stringify(result);
}

/** An operation state as JSON.stringify writes it. */
export function stateJson(state: OperationState): string {
  const keys = typeof state === 'object' && state !== null ? plainKeys(state) : undefined;
  if (keys !== undefined && startsWithKeys(keys, STATE_KEYS)) {
    // Each field read once, as JSON.stringify reads it (a getter runs once).
    const { stepIndex, usage, pendingToolCalls, approvedToolCallIds, modelTurns, compactions } = state;
    // A usage that is not an object would be left out or written as null by JSON.stringify: its path, not this one.
    if (isFiniteNumber(stepIndex) && isFiniteNumber(modelTurns) && isFiniteNumber(compactions) && typeof usage === 'object' && usage !== null) {
      const calls = callsText(pendingToolCalls);
      const approved = stringsText(approvedToolCallIds);
      // The runtime's state carries `lastText` (often undefined) and, when it finishes, `approval: undefined`.
      const tail = keys.length === STATE_KEYS.length ? '' : primitiveTailText(state, keys, STATE_KEYS.length);
      if (calls !== undefined && approved !== undefined && tail !== undefined) {
        return '{"stepIndex":' + stepIndex + ',"usage":' + usageJson(usage) + ',"pendingToolCalls":' + calls +
          ',"approvedToolCallIds":' + approved + ',"modelTurns":' + modelTurns + ',"compactions":' + compactions + tail + '}';
      }
    }
  }
  return JSON.stringify(state);
}

/** A step's summary (what the runtime's `summarize` makes: content, tool call names, tool results) as JSON.stringify writes it. */
export function summaryJson(summary: Record<string, unknown>): string {
  const keys = typeof summary === 'object' && summary !== null ? plainKeys(summary) : undefined;
  if (keys !== undefined) {
    let text = '{';
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      let value: string | undefined;
      if (key === 'content') {
        const content = summary.content;
        value = typeof content === 'string' ? stringJson(content) : undefined;
      } else if (key === 'toolCalls') value = stringsText(summary.toolCalls);
      else if (key === 'toolResults') value = resultsText(summary.toolResults);
      if (value === undefined) return JSON.stringify(summary);
      text += (i > 0 ? ',"' : '"') + key + '":' + value;
    }
    return text + '}';
  }
  return JSON.stringify(summary);
}

/**
 * The keys of `source` from `keys[from]` on, each `,"key":value`, when each is
 * undefined (left out, as JSON.stringify leaves it out) or a string, boolean
 * or finite number; undefined for anything else.
 */
function primitiveTailText(source: object, keys: readonly string[], from: number): string | undefined {
  let text = '';
  for (let i = from; i < keys.length; i++) {
    const key = keys[i]!;
    const value = (source as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (key === 'threadHooks' && typeof value === 'object' && value !== null) {
      // An operation with thread hooks stores their ids: without this every commit's state text went generic.
      const selection = threadHooksText(value);
      if (selection === undefined) return undefined;
      text += ',"threadHooks":' + selection;
    } else if (typeof value === 'string') text += ',' + stringJson(key) + ':' + stringJson(value);
    else if (typeof value === 'boolean' || isFiniteNumber(value)) text += ',' + stringJson(key) + ':' + value;
    else return undefined;
  }
  return text;
}

/** A state's `threadHooks` ({ prompt?, code? } lists of ids, keys in any order) as JSON.stringify writes it, else undefined. */
function threadHooksText(value: object): string | undefined {
  const keys = plainKeys(value);
  if (keys === undefined) return undefined;
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key !== 'prompt' && key !== 'code') return undefined;
    const list = (value as Record<string, unknown>)[key];
    if (list === undefined) continue;
    const ids = stringsText(list);
    if (ids === undefined) return undefined;
    text += (text.length > 1 ? ',"' : '"') + key + '":' + ids;
  }
  return text + '}';
}

/** Summary tool results ({ toolCallId, success, error }), else undefined. */
function resultsText(items: unknown): string | undefined {
  if (!isPlainArray(items)) return undefined;
  let text = '[';
  for (let i = 0; i < items.length; i++) {
    const r = items[i] as { toolCallId?: unknown; success?: unknown; error?: unknown } | undefined;
    if (typeof r !== 'object' || r === null || !(hasExactKeys(r, SUMMARY_RESULT_KEYS) || hasExactKeys(r, SUMMARY_RESULT_KEYS_NO_ERROR))) return undefined;
    const { toolCallId, success, error } = r;
    if (typeof toolCallId !== 'string' || typeof success !== 'boolean' || (error !== undefined && typeof error !== 'string')) return undefined;
    if (i > 0) text += ',';
    text += '{"toolCallId":' + stringJson(toolCallId) + ',"success":' + success + (error === undefined ? '}' : ',"error":' + stringJson(error) + '}');
  }
  return text + ']';
}

/** The array's text when every call has the usual shape, else undefined (the caller then uses JSON.stringify). */
function callsText(calls: unknown): string | undefined {
  if (!isPlainArray(calls)) return undefined;
  let text = '[';
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i] as ToolCall | undefined;
    if (typeof c !== 'object' || c === null) return undefined;
    if (!hasExactKeys(c, CALL_KEYS) && !hasExactKeys(c, CALL_KEYS_NO_NATIVE)) return undefined;
    const { id, identifier, apiName, nativeId } = c;
    if (typeof id !== 'string' || typeof identifier !== 'string' || typeof apiName !== 'string' || (nativeId !== undefined && typeof nativeId !== 'string')) return undefined;
    // The arguments are the model's: any JSON, so JSON.stringify writes them (undefined args would drop the key).
    // A toJSON of the arguments would be called with the key "args" inside the call's JSON, with "" here: its path, not this one.
    const rawArgs = c.args as unknown;
    if (typeof rawArgs !== 'object' || rawArgs === null || typeof (rawArgs as { toJSON?: unknown }).toJSON === 'function') return undefined;
    const args = JSON.stringify(rawArgs);
    if (i > 0) text += ',';
    text += '{"id":' + stringJson(id) + ',"identifier":' + stringJson(identifier) + ',"apiName":' + stringJson(apiName) + ',"args":' + args;
    text += nativeId !== undefined ? ',"nativeId":' + stringJson(nativeId) + '}' : '}';
  }
  return text + ']';
}

function stringsText(items: unknown): string | undefined {
  if (!isPlainArray(items)) return undefined;
  let text = '[';
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== 'string') return undefined;
    if (i > 0) text += ',';
    text += stringJson(item);
  }
  return text + ']';
}
