import { toJsonSchema as valibotToJsonSchema } from '@valibot/to-json-schema';
import { HookgateError } from '../../kernel/errors.js';
import type { HookToolResult, ThreadState } from './thread-hook-types.js';
import { deepFreeze } from '../../kernel/agent-definition.js';

/** The part of the Standard Schema interface (valibot and zod implement it) this file relies on. */
export interface StandardSchemaV1<Output = unknown> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => unknown;
    readonly types?: { readonly input: unknown; readonly output: Output } | undefined;
  };
}

type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];

/** What the thread-hooks `defineTool` takes: a description, an `args` object schema (valibot or zod), an optional `progressArgument`, and `execute`. */
export interface ThreadToolOptions<Args extends StandardSchemaV1 = StandardSchemaV1> {
  description: string;
  /** A valibot or zod object schema of the arguments (any Standard Schema that can be described as JSON Schema). */
  args: Args;
  /** The name of a short string argument whose value `tool_call_started` hooks get as `progress` (put it first in `args`). */
  progressArgument?: string;
  execute(state: ThreadState, args: InferOutput<Args>): Promise<HookToolResult> | HookToolResult;
}

/** A validated, frozen thread tool. */
export interface ThreadToolDefinition {
  readonly description: string;
  readonly args: StandardSchemaV1;
  /** The arguments' JSON Schema (draft-07 shape, no `$schema`), as the model sees it. */
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly progressArgument: string | undefined;
  readonly execute: (state: ThreadState, args: never) => Promise<HookToolResult> | HookToolResult;
}

const KEYS = new Set(['description', 'args', 'progressArgument', 'execute']);

/**
 * Validates a tool of the thread-hooks vocabulary and returns it frozen
 * (THREAD_HOOK_INVALID naming the field): a non-empty description; `args` a
 * valibot or zod object schema whose JSON Schema can be written; a
 * `progressArgument` naming a string property of `args`; `execute` a
 * function; no other keys.
 */
export function defineTool<Args extends StandardSchemaV1>(options: ThreadToolOptions<Args>): ThreadToolDefinition {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalid('', `expected { description, args, progressArgument?, execute }, got ${options === null ? 'null' : typeof options}`);
  const o = options as unknown as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KEYS.has(key)) throw invalid(` "${JSON.stringify(key).slice(1, -1).slice(0, 64)}"`, 'unknown field (a thread tool is { description, args, progressArgument?, execute })', key);
  if (typeof o.description !== 'string' || o.description.trim() === '') throw invalid(' description', 'must be a non-empty string', 'description');
  if (typeof o.execute !== 'function') throw invalid(' execute', 'must be a function', 'execute');
  const parameters = argsJsonSchema(o.args);
  const progress = o.progressArgument;
  if (progress !== undefined) {
    const property = typeof progress === 'string' ? (parameters.properties as Record<string, { type?: unknown }> | undefined)?.[progress] : undefined;
    if (typeof progress !== 'string' || property === undefined) throw invalid(' progressArgument', `${JSON.stringify(progress)} is not a property of args`, 'progressArgument');
    if (property.type !== 'string') throw invalid(' progressArgument', `"${progress}" must be a string argument (it is ${JSON.stringify(property.type ?? 'untyped')})`, 'progressArgument');
  }
  return Object.freeze({
    description: o.description,
    args: o.args as StandardSchemaV1,
    parameters: deepFreeze(parameters),
    progressArgument: progress as string | undefined,
    execute: o.execute as ThreadToolDefinition['execute'],
  });
}

function argsJsonSchema(args: unknown): Record<string, unknown> {
  const standard = typeof args === 'object' && args !== null ? (args as { '~standard'?: { vendor?: unknown; jsonSchema?: { input?: (o: { target: string }) => unknown } } })['~standard'] : undefined;
  if (standard === undefined || typeof standard !== 'object') throw invalid(' args', 'must be a valibot or zod object schema', 'args');
  let schema: Record<string, unknown>;
  try {
    if (typeof standard.jsonSchema?.input === 'function') schema = standard.jsonSchema.input({ target: 'draft-07' }) as Record<string, unknown>;
    else if (standard.vendor === 'valibot') schema = valibotToJsonSchema(args as never, { target: 'draft-07', typeMode: 'input', errorMode: 'throw' }) as Record<string, unknown>;
    else throw new Error(`a ${String(standard.vendor)} schema cannot be described as JSON Schema here (valibot and zod can)`);
  } catch (err) {
    throw invalid(' args', (err as Error).message, 'args');
  }
  const { $schema: _dialect, ...rest } = schema;
  if (rest.type !== 'object') throw invalid(' args', 'must be an object schema (the model sends a JSON object)', 'args');
  return rest;
}

function invalid(where: string, what: string, field?: string): HookgateError {
  return new HookgateError('THREAD_HOOK_INVALID', `defineTool${where}: ${what}`, { details: field !== undefined ? { field } : {} });
}
