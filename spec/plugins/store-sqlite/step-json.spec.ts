import assert from 'node:assert/strict';
import { stateJson, summaryJson, toolCallsJson, toolResultJson, usageJson } from '../../../plugins/store-sqlite/step-json.js';
import { STATE_CASES, SUMMARY_CASES, TOOL_CALLS_CASES, TOOL_RESULT_CASES, USAGE_CASES, type OddCase } from '../../kernel/odd-step-records.js';

function sameAsStringify<T>(label: string, cases: Array<OddCase<T>>, text: (value: T) => string | undefined): void {
  describe(label, () => {
    for (const c of cases) {
      it(`writes ${c.name} exactly as JSON.stringify does`, () => {
        assert.equal(text(c.make()), JSON.stringify(c.make()));
      });
    }
  });
}

describe('store-sqlite step-json: per-shape JSON texts of the step records', () => {
  sameAsStringify('usageJson', USAGE_CASES, usageJson);
  sameAsStringify('toolCallsJson', TOOL_CALLS_CASES, toolCallsJson);
  sameAsStringify('toolResultJson', TOOL_RESULT_CASES, toolResultJson);
  sameAsStringify('stateJson', STATE_CASES, stateJson);
  sameAsStringify('summaryJson', SUMMARY_CASES, summaryJson);

  it('leaves undefined tool calls and results undefined (a NULL column)', () => {
    assert.equal(toolCallsJson(undefined), undefined);
    assert.equal(toolResultJson(undefined), undefined);
  });

  it('honours a toJSON defined on Object.prototype or Array.prototype after the first texts', () => {
    const state = STATE_CASES[0]!.make();
    assert.equal(stateJson(state), JSON.stringify(state));
    for (const proto of [Object.prototype, Array.prototype] as Array<{ toJSON?: () => unknown }>) {
      proto.toJSON = () => 'patched';
      try {
        assert.equal(stateJson(state), JSON.stringify(state));
        assert.equal(toolCallsJson(state.pendingToolCalls), JSON.stringify(state.pendingToolCalls));
      } finally {
        delete proto.toJSON;
      }
    }
  });

  it('writes a state carrying thread hook ids field by field, not through JSON.stringify (every commit of such an operation)', () => {
    const state = STATE_CASES.find((c) => c.name.startsWith('thread hook ids given in code'))!.make();
    const stringify = JSON.stringify;
    const whole: unknown[] = [];
    JSON.stringify = ((value: unknown, ...rest: never[]) => {
      if (value === state || value === state.threadHooks) whole.push(value);
      return stringify(value, ...rest);
    }) as typeof JSON.stringify;
    let text: string;
    try {
      text = stateJson(state);
    } finally {
      JSON.stringify = stringify;
    }
    assert.equal(text, stringify(state));
    assert.deepEqual(whole, [], 'neither the state nor its threadHooks went to JSON.stringify');
  });

  it('throws what JSON.stringify throws: a BigInt in the arguments', () => {
    assert.throws(() => toolCallsJson([{ id: 'c', identifier: 'x', apiName: 'y', args: { n: 1n } }]), /BigInt/);
  });
});
