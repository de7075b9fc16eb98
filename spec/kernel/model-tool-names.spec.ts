import assert from 'node:assert/strict';
import { HookgateError } from '../../kernel/errors.js';
import type { ToolSpec } from '../../kernel/model.js';
import { FUNCTION_NAME_PATTERN, toFunctionName, ToolNameMap } from '../../kernel/model-tool-names.js';

function tool(identifier: string, apiName: string): ToolSpec {
  return { identifier, apiName, description: '', parameters: { type: 'object' } };
}

describe('kernel/model-tool-names', () => {
  it('names a tool identifier__apiName when that is a valid OpenAI function name', () => {
    assert.equal(toFunctionName('fs', 'readFile'), 'fs__readFile');
  });

  it('gives valid, distinct names to tools with characters OpenAI refuses', () => {
    const a = toFunctionName('mcp:github.com', 'list issues');
    const b = toFunctionName('mcp:github_com', 'list issues');
    assert.match(a, FUNCTION_NAME_PATTERN);
    assert.match(b, FUNCTION_NAME_PATTERN);
    assert.notEqual(a, b);
  });

  it('keeps over-long names within 64 characters and distinct', () => {
    const a = toFunctionName('server', 'x'.repeat(80) + 'a');
    const b = toFunctionName('server', 'x'.repeat(80) + 'b');
    assert.match(a, FUNCTION_NAME_PATTERN);
    assert.equal(a.length <= 64, true);
    assert.notEqual(a, b);
  });

  it('does not confuse a__b + c with a + b__c', () => {
    assert.notEqual(toFunctionName('a__b', 'c'), toFunctionName('a', 'b__c'));
  });

  it('maps every offered name back to its tool, hashed names included', () => {
    const tools = [tool('fs', 'readFile'), tool('mcp:github.com', 'list issues'), tool('a', 'b__c'), tool('a__b', 'c')];
    const map = new ToolNameMap(tools);
    for (const t of tools) {
      assert.deepEqual(map.fromName(map.toName(t)), { identifier: t.identifier, apiName: t.apiName });
    }
  });

  it('maps a name it did not offer by splitting at the first "__", or to an empty identifier', () => {
    const map = new ToolNameMap([]);
    assert.deepEqual(map.fromName('http__get__json'), { identifier: 'http', apiName: 'get__json' });
    assert.deepEqual(map.fromName('search'), { identifier: '', apiName: 'search' });
  });

  it('throws MODEL_FAILED naming both tools when two offered tools would share one name', () => {
    const hashed = toFunctionName('mcp:x', 'y'); // mcp_x__y_<hash>
    const lookalike = tool('mcp_x', hashed.slice('mcp_x__'.length));
    assert.equal(toFunctionName(lookalike.identifier, lookalike.apiName), hashed);
    assert.throws(
      () => new ToolNameMap([tool('mcp:x', 'y'), lookalike]),
      (err: unknown) => err instanceof HookgateError && err.code === 'MODEL_FAILED' && err.message.includes('mcp:x/y') && err.message.includes('mcp_x/'),
    );
  });
});
