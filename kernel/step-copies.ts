import { jsonCopy } from './json-copy.js';
import { hasExactKeys, isFiniteNumber, isPlainArray } from './plain-shape.js';
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
  if (typeof state === 'object' && state !== null && hasExactKeys(state, STATE_KEYS)) {
    const { stepIndex, usage, pendingToolCalls, approvedToolCallIds, modelTurns, compactions } = state;
    // A usage that is not an object would be left out by the generic copy, not written as undefined.
    if (isFiniteNumber(stepIndex) && isFiniteNumber(modelTurns) && isFiniteNumber(compactions) && typeof usage === 'object' && usage !== null) {
      const pending = callsCopy(pendingToolCalls);
      const approved = stringsCopy(approvedToolCallIds);
      if (pending !== undefined && approved !== undefined) {
        return { stepIndex, usage: copyUsage(usage), pendingToolCalls: pending, approvedToolCallIds: approved, modelTurns, compactions };
      }
    }
  }
  return jsonCopy(state);
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
