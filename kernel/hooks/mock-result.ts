import { HookgateError } from '../errors.js';
import type { MockResult } from './hook-types.js';

/** The largest mocked result accepted, as UTF-8 bytes of its JSON. */
export const MAX_MOCK_RESULT_BYTES = 1_048_576;
/** How deeply `data`, `args` and `state` may nest. */
export const MAX_MOCK_RESULT_DEPTH = 64;

const FIELDS = new Set(['content', 'success', 'error', 'executionTime', 'state', 'data', 'args', 'workRegistration']);

/**
 * Checks what a handler passed to `event.mock()` and returns a deep copy of it
 * (plain JSON data only), so nothing the caller changes later reaches the
 * stored result. Synchronous.
 *
 * A result is an object with `content` a string; `success` a boolean,
 * `error` a string, `executionTime` a finite number >= 0 and `state` an
 * object with a string `type`, each when given (a field set to `undefined`
 * counts as not given); `data` and `args` any JSON value; `workRegistration`
 * an object with a string `type`. Nothing else is
 * allowed, the whole value must be JSON data (no functions, bigints,
 * non-finite numbers, class instances or cycles) nesting at most 64 levels,
 * and its JSON at most 1 MiB.
 *
 * Throws `HookgateError('HOOK_MOCK_INVALID')` whose message names the field
 * (`mock(): result.content: expected a string, got 123`).
 */
export function validateMockResult(value: unknown): MockResult {
  if (!isPlainObject(value)) fail('', `expected a result object, got ${describe(value)}`);
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (!FIELDS.has(key)) fail(`.${key}`, 'unknown field; expected content, success, error, executionTime, state, data, args or workRegistration');
    if (field === undefined) continue;
    out[key] = field;
  }
  if (typeof out.content !== 'string') fail('.content', `expected a string, got ${describe(out.content)}`);
  if (out.success !== undefined && typeof out.success !== 'boolean') fail('.success', `expected a boolean, got ${describe(out.success)}`);
  if (out.error !== undefined && typeof out.error !== 'string') fail('.error', `expected a string, got ${describe(out.error)}`);
  if (out.executionTime !== undefined && !(typeof out.executionTime === 'number' && Number.isFinite(out.executionTime) && out.executionTime >= 0)) {
    fail('.executionTime', `expected a finite number >= 0, got ${describe(out.executionTime)}`);
  }
  if (out.state !== undefined) {
    if (!isPlainObject(out.state)) fail('.state', `expected an object with a string type, got ${describe(out.state)}`);
    if (typeof out.state.type !== 'string') fail('.state.type', `expected a string, got ${describe(out.state.type)}`);
    if (out.state.reason !== undefined && typeof out.state.reason !== 'string') fail('.state.reason', `expected a string, got ${describe(out.state.reason)}`);
  }
  if (out.workRegistration !== undefined) {
    if (!isPlainObject(out.workRegistration)) fail('.workRegistration', `expected an object with a string type, got ${describe(out.workRegistration)}`);
    if (typeof out.workRegistration.type !== 'string') fail('.workRegistration.type', `expected a string, got ${describe(out.workRegistration.type)}`);
  }
  const copy = copyJson(out, '', new Set(), 0) as MockResult;
  const bytes = Buffer.byteLength(JSON.stringify(copy), 'utf8');
  if (bytes > MAX_MOCK_RESULT_BYTES) fail('', `the result is ${bytes} bytes as JSON, over ${MAX_MOCK_RESULT_BYTES} bytes`);
  return copy;
}

/** A deep copy of plain JSON data; anything else fails naming its path. */
function copyJson(value: unknown, at: string, seen: Set<object>, depth: number): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail(at, `expected JSON data, got ${value}`);
    return value;
  }
  if (typeof value !== 'object') fail(at, `expected JSON data, got ${describe(value)}`);
  if (depth >= MAX_MOCK_RESULT_DEPTH) fail(at, `nested deeper than ${MAX_MOCK_RESULT_DEPTH} levels`);
  if (seen.has(value)) fail(at, 'a cycle (the value contains itself)');
  seen.add(value);
  let copy: unknown;
  if (Array.isArray(value)) {
    copy = value.map((item, i) => {
      if (item === undefined) fail(`${at}[${i}]`, 'expected JSON data, got undefined');
      return copyJson(item, `${at}[${i}]`, seen, depth + 1);
    });
  } else if (isPlainObject(value)) {
    const obj: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      // defineProperty: a "__proto__" key stays a plain own key.
      Object.defineProperty(obj, k, { value: copyJson(v, `${at}.${k}`, seen, depth + 1), enumerable: true, writable: true, configurable: true });
    }
    copy = obj;
  } else {
    fail(at, `expected JSON data, got ${describe(value)}`);
  }
  seen.delete(value);
  return copy;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return 'a bigint';
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default: {
      const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
      return name && name !== 'Object' ? `a ${name}` : 'an object';
    }
  }
}

function fail(field: string, problem: string): never {
  throw new HookgateError('HOOK_MOCK_INVALID', `mock(): ${field === '' ? '' : `result${field}: `}${problem}`, { details: { field: `result${field}` } });
}
