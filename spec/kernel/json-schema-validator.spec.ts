import assert from 'node:assert/strict';
import { compileJsonSchema } from '../../kernel/json-schema-validator.js';
import { argumentSchemaError } from '../../kernel/runtime/argument-schema.js';

const tool = { identifier: 'mcp__remote', apiName: 'search' };

/** Tool schemas from remote servers: their declared dialect, colliding ids, hostile patterns. */
describe('JSON Schemas of tools (kernel/json-schema-validator.ts)', () => {
  it('compiles a schema in the dialect its $schema names: a 2020-12 input schema works (prefixItems enforced)', () => {
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } } };
    assert.equal(argumentSchemaError(tool, schema, { pair: ['a', 1] }), undefined);
    assert.equal(argumentSchemaError(tool, schema, { pair: [1, 'a'] }), 'the arguments do not match the input schema of mcp__remote/search: args/pair/0 must be string');
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { n: { type: 'integer' } } };
    assert.equal(argumentSchemaError(tool, draft7, { n: 1.5 }), 'the arguments do not match the input schema of mcp__remote/search: args/n must be integer');
  });

  it('two schemas with one $id do not collide', () => {
    const a = compileJsonSchema({ $id: 'https://example.com/same.json', type: 'object', required: ['a'] }, { fallback: '2020-12', dataVar: 'x' });
    const b = compileJsonSchema({ $id: 'https://example.com/same.json', type: 'object', required: ['b'] }, { fallback: '2020-12', dataVar: 'x' });
    assert.equal(a({ a: 1 }), undefined);
    assert.equal(b({ a: 1 }), "x must have required property 'b'");
  });

  it('runs patterns on re2: a catastrophic-backtracking pattern meets a crafted value and still answers', () => {
    const schema = { type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' } } };
    assert.match(argumentSchemaError(tool, schema, { q: `${'a'.repeat(50_000)}!` }) ?? '', /args\/q must match pattern/);
    assert.equal(argumentSchemaError(tool, schema, { q: 'aaa' }), undefined);
  });

  it('a pattern re2 refuses (lookaround, backreferences) fails the tool closed, naming it', () => {
    const schema = { type: 'object', properties: { q: { type: 'string', pattern: '^(?!admin).*$' } } };
    assert.match(argumentSchemaError(tool, schema, { q: 'user' }) ?? '', /^the input schema of mcp__remote\/search cannot be used \(.*\), so no call of it can run$/);
  });
});
