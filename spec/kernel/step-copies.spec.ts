import assert from 'node:assert/strict';
import { jsonCopy } from '../../kernel/json-copy.js';
import { copyOperationState, copyStepSummary, copyToolCalls, copyToolResult, copyUsage } from '../../kernel/step-copies.js';
import { STATE_CASES, SUMMARY_CASES, TOOL_CALLS_CASES, TOOL_RESULT_CASES, USAGE_CASES, type OddCase } from './odd-step-records.js';

/** Every own key in order, prototypes included, all the way down: what deepEqual does not look at. */
function layout(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const proto = Object.getPrototypeOf(value) === Object.prototype ? 'Object' : Array.isArray(value) ? 'Array' : String(Object.getPrototypeOf(value));
  const keys = Reflect.ownKeys(value).filter((k) => !(Array.isArray(value) && k === 'length'));
  return [proto, keys.map((k) => [String(k), Object.getOwnPropertyDescriptor(value, k)!.enumerable, layout((value as Record<PropertyKey, unknown>)[k])])];
}

/** Every object reachable from `value`. */
function objectsOf(value: unknown, into = new Set<object>()): Set<object> {
  if (value !== null && typeof value === 'object' && !into.has(value)) {
    into.add(value);
    for (const k of Reflect.ownKeys(value)) objectsOf((value as Record<PropertyKey, unknown>)[k], into);
  }
  return into;
}

function sameAsJsonCopy<T>(label: string, cases: Array<OddCase<T>>, copy: (value: T) => T): void {
  describe(label, () => {
    for (const c of cases) {
      it(`copies ${c.name} exactly as jsonCopy does, sharing nothing`, () => {
        const source = c.make();
        const copied = copy(source);
        const expected = jsonCopy(c.make());
        assert.deepStrictEqual(copied, expected);
        assert.deepStrictEqual(layout(copied), layout(expected));
        const shared = [...objectsOf(copied)].filter((o) => objectsOf(source).has(o));
        assert.deepEqual(shared, [], 'the copy shares no object with its source');
      });
    }
  });
}

describe('kernel/step-copies: per-shape copies of the step records', () => {
  sameAsJsonCopy('copyUsage', USAGE_CASES, copyUsage);
  sameAsJsonCopy('copyToolCalls', TOOL_CALLS_CASES, copyToolCalls);
  sameAsJsonCopy('copyToolResult', TOOL_RESULT_CASES, copyToolResult);
  sameAsJsonCopy('copyOperationState', STATE_CASES, copyOperationState);
  sameAsJsonCopy('copyStepSummary', SUMMARY_CASES, copyStepSummary);

  it('leaves undefined tool calls and results undefined', () => {
    assert.equal(copyToolCalls(undefined), undefined);
    assert.equal(copyToolResult(undefined), undefined);
  });

  it('honours a toJSON defined on Object.prototype after the first copies, as jsonCopy does', () => {
    const usage = USAGE_CASES[0]!.make();
    assert.deepEqual(copyUsage(usage), usage);
    const proto = Object.prototype as { toJSON?: () => unknown };
    proto.toJSON = () => 'patched';
    try {
      assert.equal(copyUsage(usage), jsonCopy(usage));
      assert.equal(copyUsage(usage), 'patched');
    } finally {
      delete proto.toJSON;
    }
  });

  it('throws what jsonCopy throws: a BigInt and a cycle in the arguments', () => {
    const big = [{ id: 'c', identifier: 'x', apiName: 'y', args: { n: 1n } }];
    assert.throws(() => copyToolCalls(big as never), /BigInt/);
    const args: Record<string, unknown> = {};
    args.self = args;
    assert.throws(() => copyToolCalls([{ id: 'c', identifier: 'x', apiName: 'y', args }]), /circular/);
  });
});
