import { Ajv, type ValidateFunction } from 'ajv';

/**
 * Validates tool-call arguments against a tool's input schema (JSON Schema,
 * the `parameters` a tool offers the model). Unknown keywords and formats are
 * tolerated, as tool sources write schemas for many validators; a schema that
 * cannot be compiled at all fails every call of that tool (fail closed).
 */
const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: false });

/** Compiled once per schema object (tool definitions are built once at start). */
const compiled = new WeakMap<object, ValidateFunction | { broken: string }>();

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
      validate = ajv.compile(schema);
    } catch (err) {
      validate = { broken: (err as Error).message };
    }
    compiled.set(schema, validate);
  }
  const toolName = () => `${tool.identifier}/${tool.apiName}`;
  if ('broken' in validate) return `the input schema of ${toolName()} cannot be used (${validate.broken}), so no call of it can run`;
  if (validate(args)) return undefined;
  return `the arguments do not match the input schema of ${toolName()}: ${ajv.errorsText(validate.errors, { dataVar: 'args' })}`;
}
