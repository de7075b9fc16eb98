import { randomUUID } from 'node:crypto';
import { deepFreeze } from '../agent-definition.js';
import { jsonCopy } from '../json-copy.js';
import type { ToolCall } from '../messages.js';

/**
 * How deeply tool-call arguments may nest (objects and arrays). Deeper
 * arguments are refused at the model turn, before anything is stored: no
 * tool's input needs more, and walking them would exhaust the stack.
 */
export const MAX_ARGUMENT_DEPTH = 64;

/** How many objects and arrays one call's arguments may hold. */
export const MAX_ARGUMENT_NODES = 100_000;

/** The prefix of the call identities the runtime mints. */
const CALL_ID_PREFIX = 'call_';

/** A call identity the runtime mints: unique, never taken from the model. 37 characters, `[a-z0-9_]`. */
export function mintCallId(): string {
  return CALL_ID_PREFIX + randomUUID().replaceAll('-', '');
}

const MINTED = /^call_[0-9a-f]{32}$/;

/** Whether an id has the shape of one the runtime minted (ids stored before minting existed do not). */
export function isMintedCallId(id: string): boolean {
  return MINTED.test(id);
}

/**
 * The tool calls of one model turn as the runtime keeps them: each gets a
 * fresh identity (`id`) that every approval, `ask`, deferred completion and
 * stored result is bound to; the model's own id, which a model may omit or
 * reuse, is kept only as `nativeId`. Arguments become a deep-frozen JSON copy
 * that gates, handlers and the store all see, so nothing can change them after
 * a gate approved them. Arguments that are not a JSON object or nest deeper
 * than MAX_ARGUMENT_DEPTH are replaced by `{}` with `argumentError` set: the
 * gate answers such a call with a tool error the model sees. Pure apart from
 * the random ids; never throws. `keepIds` re-admits calls stored before
 * ids were minted (their id stays, as the stored conversation names it).
 */
export function mintToolCalls(calls: readonly ToolCall[], options: { keepIds?: boolean } = {}): ToolCall[] {
  return calls.map((call) => {
    const problem = argumentProblem(call.args);
    const args = problem === undefined ? copyArguments(call.args) : undefined;
    const error = problem ?? (args === undefined ? 'the arguments are not JSON (a cycle or a BigInt)' : undefined);
    const minted: ToolCall = {
      id: options.keepIds ? call.id : mintCallId(),
      identifier: String(call.identifier),
      apiName: String(call.apiName),
      args: args ?? Object.freeze({}),
      ...(typeof call.id === 'string' && call.id !== '' ? { nativeId: call.id } : {}),
      ...(error !== undefined ? { argumentError: error } : {}),
    };
    return Object.freeze(minted);
  });
}

function copyArguments(args: Record<string, unknown>): Record<string, unknown> | undefined {
  try {
    return deepFreeze(jsonCopy(args));
  } catch {
    return undefined;
  }
}

/** Why arguments cannot be accepted at all, or undefined. Iterative: safe for any depth. */
function argumentProblem(args: unknown): string | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return 'the arguments must be a JSON object';
  // A cycle shows up as nesting past the limit; shared references (YAML aliases) are walked once per use, within a budget.
  const stack: Array<[object, number]> = [[args, 1]];
  let budget = MAX_ARGUMENT_NODES;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (depth > MAX_ARGUMENT_DEPTH) return `the arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`;
    if (--budget < 0) return `the arguments hold more than ${MAX_ARGUMENT_NODES} objects and arrays`;
    for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return undefined;
}
