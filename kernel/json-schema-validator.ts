import { Ajv, type ErrorObject, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import RE2 from 're2';

/** The JSON Schema dialects a schema can declare with `$schema`. */
export type JsonSchemaDialect = 'draft-07' | '2019-09' | '2020-12';

/** A compiled schema: `undefined` when the value is valid, else why not (`data/x must be string`). */
export type JsonSchemaCheck = (value: unknown) => string | undefined;

/**
 * `pattern` and `patternProperties` run on re2 (linear time): tool schemas come
 * from tool sources such as remote MCP servers, and a backtracking pattern
 * would let one stall the process on a crafted value. A pattern re2 refuses
 * (backreferences, lookaround) makes the schema fail to compile.
 */
const re2Engine = Object.assign((pattern: string, flags: string) => new RE2(pattern, flags), { code: 'new RE2' });

/**
 * Unknown keywords and formats are tolerated: tool sources write schemas for many validators. `addUsedSchema: false`:
 * a schema's `$id` is not registered, so two tools declaring one `$id` (or one schema compiled twice) do not collide.
 */
const OPTIONS: Options = { strict: false, validateFormats: false, allErrors: false, addUsedSchema: false, code: { regExp: re2Engine } };

const engines = {
  'draft-07': new Ajv(OPTIONS),
  '2019-09': new Ajv2019(OPTIONS),
  '2020-12': new Ajv2020(OPTIONS),
} as const;

/** The dialect a schema's `$schema` names, else `fallback`. An unknown `$schema` is refused by the engine at compile. */
export function schemaDialect(schema: Record<string, unknown>, fallback: JsonSchemaDialect): JsonSchemaDialect {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (/draft-0[4-7]\b/.test(declared)) return 'draft-07';
  if (declared.includes('2019-09')) return '2019-09';
  if (declared.includes('2020-12')) return '2020-12';
  return fallback;
}

/**
 * Compiles a JSON Schema with the engine of the dialect its `$schema` names
 * (`fallback` when it names none: draft-07 for hookgate's own tools, 2020-12
 * for MCP schemas, the MCP default). Throws when the schema cannot be compiled
 * (an invalid schema, a `$ref` it cannot resolve, a pattern re2 refuses);
 * callers fail closed on that. Synchronous; compile once and keep the result.
 * `dataVar` names the value in messages (`args`, `structuredContent`).
 */
export function compileJsonSchema(schema: Record<string, unknown>, options: { fallback: JsonSchemaDialect; dataVar: string }): JsonSchemaCheck {
  const dialect = schemaDialect(schema, options.fallback);
  const engine = engines[dialect];
  const validate = engine.compile(schema);
  return (value) => (validate(value) ? undefined : errorsText(engine, validate.errors, options.dataVar));
}

function errorsText(engine: Ajv, errors: ErrorObject[] | null | undefined, dataVar: string): string {
  return engine.errorsText(errors, { dataVar });
}
