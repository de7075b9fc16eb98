import { compileJsonSchema, type JsonSchemaCheck } from '../json-schema-validator.js';

/**
 * Validates tool-call arguments against a tool's input schema (JSON Schema,
 * the `parameters` a tool offers the model), in the dialect its `$schema`
 * names (draft-07 when none; kernel/json-schema-validator.ts: unknown keywords
 * and formats tolerated, patterns on re2). A schema that cannot be compiled
 * at all fails every call of that tool (fail closed).
 */

/** Compiled once per schema object (tool definitions are built once at start). */
const compiled = new WeakMap<object, JsonSchemaCheck | { broken: string }>();

/**
 * Why `args` do not satisfy `schema`, as a message the model can act on
 * (`args/key must be string`), or undefined when they do. `tool` names the
 * tool in the message. Synchronous.
 */
export function argumentSchemaError(
  tool: { readonly identifier: string; readonly apiName: string },
  schema: Record<string, unknown> | undefined,
  args: Readonly<Record<string, unknown>>,
): string | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  let validate = compiled.get(schema);
  if (!validate) {
    try {
      validate = compileJsonSchema(schema, { fallback: 'draft-07', dataVar: 'args' });
    } catch (err) {
      validate = { broken: (err as Error).message };
    }
    compiled.set(schema, validate);
  }
  const toolName = () => `${tool.identifier}/${tool.apiName}`;
  if ('broken' in validate) return `the input schema of ${toolName()} cannot be used (${validate.broken}), so no call of it can run`;
  const problem = validate(args);
  if (problem === undefined) return undefined;
  return `the arguments do not match the input schema of ${toolName()}: ${problem}`;
}
