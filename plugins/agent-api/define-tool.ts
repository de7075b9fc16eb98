import * as v from 'valibot';
import { AgentRenderError } from './agent-errors.js';
import { isValibotSchema } from './agent-identity.js';
import { toJsonSchema } from './tool-input-schema.js';
import type { Harness } from './harness.js';

/** What a tool's `run` gets (document 001 `ToolContext`): the call's id, its abort signal and, with an `input` schema, the parsed arguments. */
export interface ToolContext<TData = unknown> {
  /** The call's id (the one its stored tool message answers). */
  readonly toolCallId: string;
  /** Aborted when the operation is. */
  readonly signal: AbortSignal;
  /** The arguments parsed by `input` (an empty object without one). */
  readonly data: TData;
  /** The agent's runtime surface (`harness.prompt()`, `harness.sandbox`): present only for `harness: true` tools, scoped to this call. */
  readonly harness?: Harness;
}

/** What `defineTool` takes (document 001 "defineTool()", the part `useTool` needs; issue 14 completes it). */
export interface ToolOptions<TInput extends v.GenericSchema | undefined = v.GenericSchema | undefined> {
  /** The name the model calls it by: letters, digits, `_` and `-`, at most 64. */
  name: string;
  /** The model-facing catalogue line. */
  description: string;
  /** A valibot object schema for the arguments (the model gets it as JSON Schema). */
  input?: TInput;
  /** `true`: `run` gets `context.harness` (such a tool runs only inside an agent session). */
  harness?: boolean;
  /** The implementation; may be async. Its value is recorded as JSON and JSON-stringified for the model (undefined: `null`); a throw is a tool error the model sees. */
  run(context: ToolContext<TInput extends v.GenericSchema ? v.InferOutput<TInput> : Record<string, never>>): unknown;
}

/** A validated, frozen tool definition, as `useTool` mounts it. */
export interface AgentTool {
  readonly name: string;
  readonly description: string;
  readonly input: v.GenericSchema | undefined;
  /** The input schema as the model sees it (JSON Schema of a top-level object). */
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly run: (context: ToolContext<never>) => unknown;
  /** Whether `run` gets the harness. */
  readonly harness: boolean;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const OBJECT_TYPES = new Set(['object', 'strict_object', 'loose_object']);
const NO_INPUT = Object.freeze({ type: 'object', properties: {}, additionalProperties: false });
const defined = new WeakSet<object>();

/**
 * Validates a tool definition and returns it frozen, so a bad definition
 * fails where it is written. Synchronous; AgentRenderError naming the tool
 * and the field: a name models cannot call, an empty description, an input
 * that is not a valibot object schema (or cannot be described as JSON
 * Schema), a `run` that is not a function, the legacy `parameters` /
 * `execute` fields.
 */
export function defineTool<TInput extends v.GenericSchema | undefined = undefined>(options: ToolOptions<TInput>): AgentTool {
  if (options !== null && typeof options === 'object' && defined.has(options)) return options as unknown as AgentTool;
  if (options === null || typeof options !== 'object') throw new AgentRenderError(`defineTool: expected { name, description, input?, run }, got ${options === null ? 'null' : typeof options}`);
  const { name, description, input, run } = options as ToolOptions;
  const where = `tool ${typeof name === 'string' ? `"${JSON.stringify(name).slice(1, -1).slice(0, 64)}"` : '(unnamed)'}`;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) throw new AgentRenderError(`${where}: name must be 1-64 letters, digits, "_" or "-"`, { field: 'name' });
  for (const legacy of ['parameters', 'execute'] as const) {
    if (legacy in options) throw new AgentRenderError(`${where}: "${legacy}" is the legacy shape; a tool is { name, description, input, run }`, { field: legacy });
  }
  if (typeof description !== 'string' || description.trim() === '') throw new AgentRenderError(`${where}: description must be a non-empty string`, { field: 'description' });
  if (typeof run !== 'function') throw new AgentRenderError(`${where}: run must be a function`, { field: 'run' });
  const wantsHarness = (options as { harness?: unknown }).harness;
  if (wantsHarness !== undefined && typeof wantsHarness !== 'boolean') throw new AgentRenderError(`${where}: harness must be a boolean when present`, { field: 'harness' });
  let parameters: Record<string, unknown> = NO_INPUT;
  if (input !== undefined) {
    if (!isValibotSchema(input) || !OBJECT_TYPES.has((input as { type: string }).type)) {
      throw new AgentRenderError(`${where}: input must be a valibot object schema (the model sends a JSON object)`, { field: 'input' });
    }
    try {
      parameters = toJsonSchema(input);
    } catch (err) {
      throw new AgentRenderError(`${where}: ${(err as Error).message}`, { field: 'input' });
    }
  }
  const tool: AgentTool = Object.freeze({ name, description, input, parameters: deepFreeze(parameters), run: run as AgentTool['run'], harness: wantsHarness === true });
  defined.add(tool);
  return tool;
}

/**
 * Runs a tool for one call: parses the arguments with its `input` schema
 * (a mismatch throws, which the model sees as a tool error), then `run`,
 * and makes its value JSON (a value JSON cannot carry throws).
 */
export async function runAgentTool(tool: AgentTool, args: Record<string, unknown>, toolCallId: string, signal: AbortSignal, scope?: { harness?: Harness }): Promise<{ content: string; data: unknown }> {
  if (tool.harness && scope?.harness === undefined) throw new Error(`tool "${tool.name}" is a harness tool: it runs only inside an agent session, where it gets the harness`);
  let data: unknown = {};
  if (tool.input !== undefined) {
    const parsed = v.safeParse(tool.input, args);
    if (!parsed.success) {
      throw new Error(`invalid arguments for tool "${tool.name}": ${parsed.issues.map((i) => `${v.getDotPath(i) ?? '(input)'}: ${i.message}`).join('; ')}`);
    }
    data = parsed.output;
  }
  const value = await tool.run({ toolCallId, signal, data, ...(tool.harness ? { harness: scope!.harness } : {}) } as ToolContext<never>);
  let content: string | undefined;
  try {
    content = JSON.stringify(value === undefined ? null : value);
  } catch (err) {
    throw new Error(`tool "${tool.name}" returned a value JSON cannot carry: ${(err as Error).message}`);
  }
  if (content === undefined) throw new Error(`tool "${tool.name}" returned a value JSON cannot carry (${typeof value})`);
  return { content, data: JSON.parse(content) as unknown };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
