import { randomBytes } from 'node:crypto';
import type { ToolCall } from '../messages.js';

/**
 * How deeply tool-call arguments may nest (objects and arrays). Deeper
 * arguments are refused at the model turn, before anything is stored: no
 * tool's input needs more, and walking them would exhaust the stack.
 */
export const MAX_ARGUMENT_DEPTH = 64;

/** How many objects and arrays one call's arguments may hold. */
export const MAX_ARGUMENT_NODES = 100_000;

/**
 * 64 random bits per process, then a counter: unique across processes and
 * restarts (2^-64 per pair of processes), and far cheaper than a UUID per
 * call. Predictability does not matter: nothing a model sends ever becomes a
 * call's identity.
 */
const PROCESS_PREFIX = `call_${randomBytes(8).toString('hex')}`;

/**
 * The character codes of the last id minted: the prefix, then the counter as
 * 16 hex digits, counted up in place. One `String.fromCharCode` makes each id
 * a single flat string (concatenating prefix and counter makes a rope of
 * three strings, which every GC that keeps the stored call copies again).
 */
const ID_CODES: number[] = Array.from(`${PROCESS_PREFIX}${'0'.repeat(16)}`, (c) => c.charCodeAt(0));
const COUNTER_START = PROCESS_PREFIX.length;

/** A call identity the runtime mints: unique, never taken from the model. 37 characters, `[a-z0-9_]`. */
export function mintCallId(): string {
  for (let i = ID_CODES.length - 1; i >= COUNTER_START; i--) {
    const c = ID_CODES[i]!;
    if (c === 0x39) {
      ID_CODES[i] = 0x61; // '9' -> 'a'
      break;
    }
    if (c !== 0x66) {
      ID_CODES[i] = c + 1;
      break;
    }
    ID_CODES[i] = 0x30; // 'f' -> '0', carry (2^64 ids would wrap)
  }
  return String.fromCharCode.apply(null, ID_CODES);
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
export function mintToolCalls(calls: readonly ToolCall[], options?: { keepIds?: boolean }): ToolCall[] {
  const keepIds = options?.keepIds === true;
  const out = new Array<ToolCall>(calls.length);
  for (let i = 0; i < calls.length; i++) out[i] = mintToolCall(calls[i]!, keepIds);
  return out;
}

/** One call of mintToolCalls. Built field by field (no spread of optional parts): this runs for every call. */
function mintToolCall(call: ToolCall, keepId: boolean): ToolCall {
  const copied = copyArguments(call.args);
  const refused = copied instanceof ArgumentRefusal;
  const minted: { -readonly [K in keyof ToolCall]: ToolCall[K] } = {
    id: keepId ? call.id : mintCallId(),
    identifier: String(call.identifier),
    apiName: String(call.apiName),
    args: refused ? FROZEN_EMPTY : copied,
  };
  if (typeof call.id === 'string' && call.id !== '') minted.nativeId = call.id;
  if (refused) minted.argumentError = copied.reason;
  return Object.freeze(minted);
}

const FROZEN_EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});

/** Why a call's arguments were refused (thrown inside the walk, caught by copyArguments). */
class ArgumentRefusal {
  constructor(readonly reason: string) {}
}

/**
 * One walk over the arguments: a deep-frozen JSON copy (as a database column
 * would keep it: `undefined` and functions dropped, non-finite numbers null,
 * `__proto__` kept as an own key), refused past MAX_ARGUMENT_DEPTH levels or
 * MAX_ARGUMENT_NODES objects (a cycle shows up as depth). Recursion is bounded
 * by the depth limit.
 */
function copyArguments(args: unknown): Record<string, unknown> | ArgumentRefusal {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return new ArgumentRefusal('the arguments must be a JSON object');
  const budget: Budget = { nodes: MAX_ARGUMENT_NODES };
  try {
    return frozenCopy(args, 1, budget) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof ArgumentRefusal) return err;
    return new ArgumentRefusal('the arguments are not JSON (a BigInt or a failing toJSON)');
  }
}

type Budget = { nodes: number };

function frozenCopy(value: unknown, depth: number, budget: Budget): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') throw new ArgumentRefusal('the arguments are not JSON (a BigInt)');
  if (typeof value !== 'object') return undefined;
  if (depth > MAX_ARGUMENT_DEPTH) throw new ArgumentRefusal(`the arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`);
  if (--budget.nodes < 0) throw new ArgumentRefusal(`the arguments hold more than ${MAX_ARGUMENT_NODES} objects and arrays`);
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === 'function') return frozenCopy(withJson.toJSON(), depth, budget);
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = frozenCopy(value[i], depth + 1, budget);
      out[i] = item === undefined ? null : item;
    }
    return Object.freeze(out);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = frozenCopy((value as Record<string, unknown>)[key], depth + 1, budget);
    if (item === undefined) continue;
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return Object.freeze(out);
}
