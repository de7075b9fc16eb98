import type { ToolCall, ToolResult, Usage } from '../../kernel/messages.js';
import type { OperationState } from '../../kernel/store.js';

/**
 * Records of the step loop's usual shape and every near miss the per-shape
 * copies and JSON texts (kernel/step-copies.ts, store-sqlite/step-json.ts)
 * must hand to the generic path: each case is built fresh by its function,
 * so a spec may mutate what it got.
 */
export interface OddCase<T> {
  name: string;
  make: () => T;
}

const usual = (): Usage => ({ promptTokens: 10, completionTokens: 5, totalTokens: 15, cost: 0.25 });

/** An object whose own key "__proto__" is data (as JSON.parse makes it), not its prototype. */
function withOwnProto(rest: Record<string, unknown>, value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...rest };
  Object.defineProperty(out, '__proto__', { value, enumerable: true, writable: true, configurable: true });
  return out;
}

class UsageWithToJson {
  promptTokens = 1;
  completionTokens = 2;
  totalTokens = 3;
  cost = 0;
  toJSON(): unknown {
    return { total: this.totalTokens };
  }
}

class UsageClass {
  promptTokens = 1;
  completionTokens = 2;
  totalTokens = 3;
  cost = 0;
}

export const USAGE_CASES: Array<OddCase<Usage>> = [
  { name: 'the usual shape', make: usual },
  { name: 'another key order', make: () => ({ completionTokens: 5, promptTokens: 10, totalTokens: 15, cost: 0 }) },
  { name: 'an extra key', make: () => ({ ...usual(), reasoningTokens: 3 }) as Usage },
  { name: 'a missing key', make: () => ({ promptTokens: 1, completionTokens: 2, totalTokens: 3 }) as Usage },
  { name: 'an undefined field', make: () => ({ ...usual(), cost: undefined }) as unknown as Usage },
  { name: 'NaN and Infinity', make: () => ({ ...usual(), cost: Number.NaN, totalTokens: Infinity }) },
  { name: 'negative zero and fractions', make: () => ({ promptTokens: -0, completionTokens: 1e-7, totalTokens: 1e21, cost: 0.1 + 0.2 }) },
  { name: 'a string where a number goes', make: () => ({ ...usual(), cost: '0.5' }) as unknown as Usage },
  { name: 'an own toJSON', make: () => ({ ...usual(), toJSON: () => ({ replaced: true }) }) as unknown as Usage },
  { name: 'a class instance', make: () => new UsageClass() },
  { name: 'a class instance with toJSON on its prototype', make: () => new UsageWithToJson() },
  { name: 'a null prototype', make: () => Object.assign(Object.create(null) as Usage, usual()) },
  { name: 'an own __proto__ key', make: () => withOwnProto({ ...usual() }, { polluted: true }) as unknown as Usage },
  {
    name: 'a getter (read once)',
    make: () => {
      let reads = 0;
      const u = { promptTokens: 1, completionTokens: 2, totalTokens: 3 } as Usage;
      Object.defineProperty(u, 'cost', { enumerable: true, get: () => ++reads });
      return u;
    },
  },
];

const call = (i: number): ToolCall => ({ id: `call_${i}`, identifier: 'bench', apiName: 'noop', args: { i }, nativeId: `n_${i}` });

export const TOOL_CALLS_CASES: Array<OddCase<ToolCall[]>> = [
  { name: 'the usual shape', make: () => [call(0), call(1)] },
  { name: 'no calls', make: () => [] },
  { name: 'without a native id', make: () => [{ id: 'c', identifier: 'fs', apiName: 'readFile', args: { path: 'a' } }] },
  { name: 'a native id set to undefined', make: () => [{ ...call(0), nativeId: undefined }] },
  { name: 'an argument error', make: () => [{ ...call(0), argumentError: 'not an object' }] },
  { name: 'another key order', make: () => [{ identifier: 'bench', id: 'c', apiName: 'noop', args: {} }] },
  { name: 'strings JSON escapes', make: () => [{ ...call(0), id: 'a"b\\c\n\u0001', apiName: 'x\u2028y', nativeId: 'lone \ud800 surrogate' }] },
  { name: 'undefined arguments', make: () => [{ ...call(0), args: undefined }] as unknown as ToolCall[] },
  { name: 'arguments with undefined, NaN and nested arrays', make: () => [{ ...call(0), args: { a: undefined, b: Number.NaN, c: [1, undefined, [{ d: null }]] } }] },
  { name: 'arguments with an own __proto__ key', make: () => [{ ...call(0), args: withOwnProto({ path: 'a' }, { admin: true }) }] },
  { name: 'arguments with toJSON', make: () => [{ ...call(0), args: { toJSON: (key: string) => ({ key }) } }] },
  { name: 'arguments that are a Date', make: () => [{ ...call(0), args: new Date(0) as unknown as Record<string, unknown> }] },
  { name: 'a hole in the list', make: () => { const calls = [call(0)]; calls[2] = call(2); return calls; } },
  { name: 'a null in the list', make: () => [call(0), null] as unknown as ToolCall[] },
  { name: 'a number id', make: () => [{ ...call(0), id: 7 }] as unknown as ToolCall[] },
  { name: 'a call with toJSON', make: () => [{ ...call(0), toJSON: () => 'replaced' }] as unknown as ToolCall[] },
];

export const TOOL_RESULT_CASES: Array<OddCase<ToolResult>> = [
  { name: 'the usual shape', make: () => ({ content: 'ok', success: true, executionTime: 3 }) },
  { name: 'without an execution time', make: () => ({ content: 'ok', success: false }) },
  { name: 'with data and an error', make: () => ({ content: 'no', success: false, executionTime: 1, error: 'tool_error', data: { a: [1, undefined] } }) },
  { name: 'a content JSON escapes', make: () => ({ content: '"quoted"\n\\', success: true, executionTime: 0 }) },
  { name: 'a non-finite execution time', make: () => ({ content: 'ok', success: true, executionTime: Number.NaN }) },
  { name: 'another key order', make: () => ({ success: true, content: 'ok', executionTime: 1 }) },
  { name: 'an own toJSON', make: () => ({ content: 'ok', success: true, executionTime: 1, toJSON: () => ({ content: 'other', success: false }) }) as unknown as ToolResult },
];

const usualState = (): OperationState => ({
  stepIndex: 3,
  usage: usual(),
  pendingToolCalls: [call(1)],
  approvedToolCallIds: ['call_0'],
  modelTurns: 2,
  compactions: 0,
});

export const STATE_CASES: Array<OddCase<OperationState>> = [
  { name: 'the usual shape', make: usualState },
  { name: 'no pending calls', make: () => ({ ...usualState(), pendingToolCalls: [], approvedToolCallIds: [] }) },
  { name: 'with lastText', make: () => ({ ...usualState(), lastText: 'done' }) },
  { name: 'with lastText undefined (as the runtime leaves it)', make: () => ({ ...usualState(), lastText: undefined }) },
  { name: 'with a lastText JSON escapes', make: () => ({ ...usualState(), lastText: 'line\n"quoted" \ud83d\ude00' }) },
  { name: 'with number and boolean fields after the usual ones', make: () => ({ ...usualState(), compactRetryAboveTokens: 900, sourceStarted: true, finishContinuations: 2.5 }) },
  { name: 'with an object after the usual ones', make: () => ({ ...usualState(), lastText: undefined, metadata: { a: 1 } }) },
  { name: 'with a non-finite number after the usual ones', make: () => ({ ...usualState(), compactRetryAboveTokens: Number.NaN }) },
  { name: 'with an own __proto__ key after the usual ones', make: () => withOwnProto({ ...usualState() }, 'text') as unknown as OperationState },
  { name: 'approval set to undefined (as finish leaves it)', make: () => ({ ...usualState(), approval: undefined }) },
  { name: 'an odd usage inside', make: () => ({ ...usualState(), usage: { ...usual(), cost: Number.NaN, extra: 1 } as Usage }) },
  { name: 'no usage', make: () => ({ ...usualState(), usage: undefined }) as unknown as OperationState },
  { name: 'a usage that is null', make: () => ({ ...usualState(), usage: null }) as unknown as OperationState },
  { name: 'odd pending calls inside', make: () => ({ ...usualState(), pendingToolCalls: [{ ...call(0), args: withOwnProto({}, 1) }, { ...call(1), nativeId: undefined }] }) },
  { name: 'a non-string approved id', make: () => ({ ...usualState(), approvedToolCallIds: ['a', 5, undefined] }) as unknown as OperationState },
  { name: 'an approved id JSON escapes', make: () => ({ ...usualState(), approvedToolCallIds: ['a"b'] }) },
  { name: 'a non-finite step index', make: () => ({ ...usualState(), stepIndex: Infinity }) },
  { name: 'another key order', make: () => { const { stepIndex, ...rest } = usualState(); return { ...rest, stepIndex }; } },
  { name: 'an own toJSON', make: () => ({ ...usualState(), toJSON: () => ({ replaced: true }) }) as unknown as OperationState },
  { name: 'an own __proto__ key', make: () => withOwnProto({ ...usualState() }, { stepIndex: 99 }) as unknown as OperationState },
  { name: 'thread hook ids given in code (as execAgent stores them)', make: () => ({ ...usualState(), threadHooks: { code: ['a_hook', 'b_hook'] } }) },
  { name: 'thread hook ids between other fields, prompt and code lists', make: () => ({ ...usualState(), lastText: 'x', threadHooks: { prompt: ['p"1'], code: [] }, sourceStarted: true }) },
  { name: 'thread hook lists in another order, one undefined', make: () => ({ ...usualState(), threadHooks: { code: ['c'], prompt: undefined } }) },
  { name: 'thread hooks set to undefined', make: () => ({ ...usualState(), threadHooks: undefined, lastText: 'y' }) },
  { name: 'thread hooks with an unknown key', make: () => ({ ...usualState(), threadHooks: { code: ['c'], extra: { a: 1 } } }) as unknown as OperationState },
  { name: 'thread hooks with a non-string id', make: () => ({ ...usualState(), threadHooks: { code: ['c', 7] } }) as unknown as OperationState },
  { name: 'thread hooks that are a list', make: () => ({ ...usualState(), threadHooks: ['c'] }) as unknown as OperationState },
  { name: 'thread hooks with an own toJSON', make: () => ({ ...usualState(), threadHooks: { code: ['c'], toJSON: () => ({ prompt: ['x'] }) } }) as unknown as OperationState },
  { name: 'thread hooks followed by an object', make: () => ({ ...usualState(), threadHooks: { code: ['c'] }, metadata: { a: 1 } }) as unknown as OperationState },
  { name: 'thread hooks with an own __proto__ key', make: () => ({ ...usualState(), threadHooks: withOwnProto({ code: ['c'] }, ['x']) }) as unknown as OperationState },
];

export const SUMMARY_CASES: Array<OddCase<Record<string, unknown>>> = [
  { name: 'an empty summary', make: () => ({}) },
  { name: 'tool call names', make: () => ({ toolCalls: ['bench/noop', 'fs/read"File'] }) },
  { name: 'content and tool call names', make: () => ({ content: 'thinking\u0007', toolCalls: ['a/b'] }) },
  { name: 'tool results with an undefined error (as summarize makes them)', make: () => ({ toolResults: [{ toolCallId: 'c1', success: true, error: undefined }] }) },
  { name: 'tool results with an error', make: () => ({ toolResults: [{ toolCallId: 'c1', success: false, error: 'tool_error' }, { toolCallId: 'c2', success: true }] }) },
  { name: 'tool results with another key order', make: () => ({ toolResults: [{ success: true, toolCallId: 'c1' }] }) },
  { name: 'tool results with a non-string error', make: () => ({ toolResults: [{ toolCallId: 'c1', success: false, error: { code: 1 } }] }) },
  { name: 'another key order', make: () => ({ toolCalls: ['a/b'], content: 'x' }) },
  { name: 'an unknown key', make: () => ({ text: 'x', toolCalls: ['a/b'] }) },
  { name: 'content that is not a string', make: () => ({ content: 5 }) },
  { name: 'content set to undefined', make: () => ({ content: undefined, toolCalls: ['a/b'] }) },
  { name: 'tool call names with a hole', make: () => { const names = ['a/b']; names[2] = 'c/d'; return { toolCalls: names }; } },
  { name: 'an own __proto__ key', make: () => withOwnProto({ toolCalls: ['a/b'] }, ['x']) },
  { name: 'an own toJSON', make: () => ({ toolCalls: ['a/b'], toJSON: () => 'replaced' }) },
];
