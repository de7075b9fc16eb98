import * as v from 'valibot';
import { MAX_RESULT_DATA_DEPTH, nestsDeeperThan } from '../../kernel/json-depth.js';
import type { ToolLog } from '../../kernel/tools.js';
import { AgentRenderError, ToolInputValidationError, ToolLegacyDefinitionError, ToolOutputSerializationError, ToolOutputValidationError, type ToolValidationIssue } from './agent-errors.js';
import { isValibotSchema } from './agent-identity.js';
import { toJsonSchema } from './tool-input-schema.js';
import { isMcpToolShape } from './mcp-agent-tool.js';
import { openToolStep, type ToolStep, type ToolStepJournal } from './tool-step.js';
import { toJsonValue } from './use-persistent-state.js';
import { deepFreeze } from '../../kernel/agent-definition.js';
import type { Harness } from './harness.js';

export type { ToolStep } from './tool-step.js';

/** Progress logging of a tool call (document 001 `FlueLogger`): lines reach event listeners as `tool_log` events, never the model. */
export interface ToolLogger {
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}

/**
 * What a tool's `run` gets (document 001 `ToolContext`): the call's id, its
 * abort signal, its progress log and, with an `input` schema, the parsed
 * arguments (`data`); `durable: true` tools also get `step`. New capabilities
 * are added as optional members, present only for the tools that ask for them.
 */
export interface ToolContext<TData = unknown> {
  /** The call's id (the one its `tool_started` / `tool_finished` / `tool_log` events and its stored tool message carry). */
  readonly toolCallId: string;
  /** Aborted when the operation is. */
  readonly signal: AbortSignal;
  /** Progress lines for event listeners (`tool_log` events); never part of the result, never stored. */
  readonly log: ToolLogger;
  /** The arguments parsed by `input` (the property is absent without an `input` schema). */
  readonly data: TData;
  /** The durable-step surface; present only for `durable: true` tools. */
  readonly step?: ToolStep;
  /** The agent's runtime surface (`harness.prompt()`, `harness.sandbox`): present only for `harness: true` tools, scoped to this call. */
  readonly harness?: Harness;
}

/** The context `run` is typed with: `data` only with an `input` schema, `step` only for `durable: true` tools. */
export type ToolRunContext<TInput extends v.GenericSchema | undefined, TDurable extends boolean | undefined> = Omit<ToolContext, 'data' | 'step'> &
  (TInput extends v.GenericSchema ? { readonly data: v.InferOutput<TInput> } : unknown) &
  (TDurable extends true ? { readonly step: ToolStep } : unknown);

/** What `run` may return: with an `output` schema, what the schema takes; without, any JSON value (or undefined, reaching the model as `null`). */
export type ToolRunResult<TOutput extends v.GenericSchema | undefined> = TOutput extends v.GenericSchema ? v.InferInput<TOutput> : unknown;

/** What `defineTool` takes (document 001 "defineTool()"). */
export interface ToolOptions<
  TInput extends v.GenericSchema | undefined = v.GenericSchema | undefined,
  TOutput extends v.GenericSchema | undefined = v.GenericSchema | undefined,
  TDurable extends boolean | undefined = boolean | undefined,
> {
  /** The name the model calls it by: letters, digits, `_` and `-`, at most 64. */
  name: string;
  /** The model-facing catalogue line. */
  description: string;
  /** A valibot object schema for the arguments (the model gets it as JSON Schema). */
  input?: TInput;
  /** A valibot schema the returned value is parsed through before it is recorded. */
  output?: TOutput;
  /** The tool gets the agent's harness (`context.harness`). */
  harness?: boolean;
  /** The tool gets `context.step` and is re-executed after a crash, its recorded steps replayed. */
  durable?: TDurable;
  /** The implementation; may be async. Its value is recorded as JSON and JSON-stringified for the model (undefined: `null`); a throw is a tool error the model sees. */
  run(context: ToolRunContext<TInput, TDurable>): ToolRunResult<TOutput> | Promise<ToolRunResult<TOutput>>;
}

/** A validated, frozen tool definition, as `useTool` mounts it. Members beyond `run` may be added; they stay optional. */
export interface AgentTool<TData = unknown, TResult = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: v.GenericSchema | undefined;
  /** The input schema as the model sees it (JSON Schema of a top-level object). */
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly run: (context: ToolContext<never>) => unknown;
  /** The valibot schema results are parsed through. */
  readonly output?: v.GenericSchema;
  /** `harness: true`: the tool needs the agent's harness. */
  readonly harness?: boolean;
  /** `durable: true`: the tool gets `context.step` (tool-step.ts). */
  readonly durable?: boolean;
  /** Type-level only (never set): the argument and output types `ToolInput` / `ToolOutput` read. */
  readonly '~types'?: { readonly input: TData; readonly output: TResult };
  /** Set for a tool called elsewhere (an MCP tool mounted as it is, mcp-agent-tool.ts): its own gate identity and call, used instead of `run`. */
  readonly remote?: RemoteToolBinding;
}

/** A tool's own identity (what the gate, policies and webhooks see) and the call that makes its result. */
export interface RemoteToolBinding {
  readonly identifier: string;
  readonly apiName: string;
  readonly toolSource: string;
  /** Validates the raw arguments and calls the tool; a rejection is a tool error the model sees. */
  call(args: Record<string, unknown>, context: { toolCallId: string; signal: AbortSignal }): Promise<{ content: string; data?: unknown }>;
}

/** A tool's parsed argument type (`v.InferOutput` of its `input`). */
export type ToolInput<TTool> = TTool extends AgentTool<infer TData, unknown> ? TData : never;
/** A tool's output type (`v.InferOutput` of its `output`, else unknown). */
export type ToolOutput<TTool> = TTool extends AgentTool<unknown, infer TResult> ? TResult : never;

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const OBJECT_TYPES = new Set(['object', 'strict_object', 'loose_object']);
// Without an input schema the call's arguments are ignored (document 001), so none are refused either.
const NO_INPUT = Object.freeze({ type: 'object', properties: {} });
const FIELDS: ReadonlySet<string> = new Set(['name', 'description', 'input', 'output', 'harness', 'durable', 'run']);
const defined = new WeakSet<object>();

/**
 * Validates a tool definition and returns it frozen, so a bad definition
 * fails where it is written. Synchronous. The legacy `parameters` /
 * `execute` fields throw ToolLegacyDefinitionError; anything else wrong is
 * AgentRenderError naming the tool and the field (`details.field`): a name
 * models cannot call, an empty description, an input that is not a valibot
 * object schema (or cannot be described as JSON Schema), an output that is
 * not a valibot schema, `harness` / `durable` that are not booleans, a `run`
 * that is not a function, a field the definition does not have.
 */
export function defineTool<TInput extends v.GenericSchema | undefined = undefined, TOutput extends v.GenericSchema | undefined = undefined, TDurable extends boolean | undefined = undefined>(
  options: ToolOptions<TInput, TOutput, TDurable>,
): AgentTool<TInput extends v.GenericSchema ? v.InferOutput<TInput> : undefined, TOutput extends v.GenericSchema ? v.InferOutput<TOutput> : unknown> {
  type Defined = AgentTool<TInput extends v.GenericSchema ? v.InferOutput<TInput> : undefined, TOutput extends v.GenericSchema ? v.InferOutput<TOutput> : unknown>;
  if (options !== null && typeof options === 'object' && defined.has(options)) return options as unknown as Defined;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new AgentRenderError(`defineTool: expected { name, description, input?, output?, run }, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
  if (isMcpToolShape(options)) throw new AgentRenderError(`tool "${String((options as { name?: unknown }).name).slice(0, 80)}": the tools of connectMcpServer are complete definitions; mount them with useTool(tool), without defineTool()`, { field: 'name' });
  const { name, description, input, output, harness, durable, run } = options as ToolOptions;
  const named = typeof name === 'string' && TOOL_NAME.test(name);
  const where = `tool ${typeof name === 'string' ? `"${JSON.stringify(name).slice(1, -1).slice(0, 64)}"` : '(unnamed)'}`;
  for (const legacy of ['parameters', 'execute'] as const) {
    if (legacy in options) throw new ToolLegacyDefinitionError(named ? name : undefined, where, legacy);
  }
  if (!named) throw new AgentRenderError(`${where}: name must be 1-64 letters, digits, "_" or "-"`, { field: 'name' });
  for (const key of Object.keys(options)) {
    if (!FIELDS.has(key)) throw new AgentRenderError(`${where}: unknown field "${JSON.stringify(key).slice(1, -1).slice(0, 64)}" (a tool has ${[...FIELDS].join(', ')})`, { field: key.slice(0, 64) });
  }
  if (typeof description !== 'string' || description.trim() === '') throw new AgentRenderError(`${where}: description must be a non-empty string`, { field: 'description' });
  if (typeof run !== 'function') throw new AgentRenderError(`${where}: run must be a function`, { field: 'run' });
  for (const [field, flag] of [['harness', harness], ['durable', durable]] as const) {
    if (flag !== undefined && typeof flag !== 'boolean') throw new AgentRenderError(`${where}: ${field} must be a boolean when present`, { field });
  }
  if (output !== undefined && !isValibotSchema(output)) throw new AgentRenderError(`${where}: output must be a valibot schema`, { field: 'output' });
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
  const tool: AgentTool = Object.freeze({
    name,
    description,
    input,
    parameters: deepFreeze(parameters),
    run: run as AgentTool['run'],
    ...(output !== undefined ? { output } : {}),
    ...(harness !== undefined ? { harness } : {}),
    ...(durable !== undefined ? { durable } : {}),
  });
  defined.add(tool);
  return tool as Defined;
}

/** What the runtime gives one execution of a tool besides its arguments; each member optional (a standalone run has none). */
export interface ToolRunFacilities {
  /** Where `context.log` lines go (the kernel's `ToolExecutionContext.log`); without it they are dropped. */
  log?: ToolLog;
  /** Where a durable tool's steps are recorded and replayed from; without it steps run with the same rules and record nothing. */
  steps?: ToolStepJournal;
  /** The agent's harness, for `harness: true` tools (scoped to this call); without it such a tool fails. */
  harness?: Harness;
}

/**
 * Runs a tool for one call: parses the arguments with its `input` schema
 * (ToolInputValidationError naming the paths: the model sees it as a tool
 * error and may retry), then `run` with its context, then makes its value
 * the result: parsed by `output` (ToolOutputValidationError with the issues;
 * a schema producing undefined is ToolOutputSerializationError), checked as
 * JSON (ToolOutputSerializationError for functions, cycles, class
 * instances, non-finite numbers, nesting past 64) and JSON-stringified;
 * `undefined` without an `output` schema is `null`. Every error rejects:
 * the runtime records it as the call's tool error and the submission goes
 * on. A durable tool's `step` is closed when `run` settles.
 */
export async function runAgentTool(tool: AgentTool, args: Record<string, unknown>, toolCallId: string, signal: AbortSignal, facilities: ToolRunFacilities = {}): Promise<{ content: string; data: unknown }> {
  if (tool.remote !== undefined) return tool.remote.call(args, { toolCallId, signal }) as Promise<{ content: string; data: unknown }>;
  if (tool.harness === true && facilities.harness === undefined) throw new Error(`tool "${tool.name}" is a harness tool: it runs only inside an agent session, where it gets the harness`);
  const context: Record<string, unknown> = { toolCallId, signal, log: loggerOf(facilities.log) };
  if (tool.harness === true) context.harness = facilities.harness;
  if (tool.input !== undefined) {
    const parsed = await v.safeParseAsync(tool.input, args);
    if (!parsed.success) throw new ToolInputValidationError(tool.name, issuesOf(parsed.issues, '(input)'));
    context.data = parsed.output;
  }
  const step = tool.durable === true ? openToolStep(tool.name, facilities.steps) : undefined;
  if (step !== undefined) context.step = step.step;
  let value: unknown;
  try {
    value = await tool.run(Object.freeze(context) as unknown as ToolContext<never>);
  } finally {
    step?.close();
  }
  const json = await resultOf(tool, value);
  return { content: JSON.stringify(json), data: json };
}

/** The recorded form of `run`'s value (see runAgentTool). */
async function resultOf(tool: AgentTool, value: unknown): Promise<unknown> {
  let result = value;
  if (tool.output !== undefined) {
    const parsed = await v.safeParseAsync(tool.output, value);
    if (!parsed.success) throw new ToolOutputValidationError(tool.name, issuesOf(parsed.issues, '(output)'));
    result = parsed.output;
    if (result === undefined) throw new ToolOutputSerializationError(tool.name, 'its output schema produced undefined');
  }
  if (result === undefined) return null;
  try {
    return toJsonValue(result, 'output', 0, new Set(), 'tool output');
  } catch (err) {
    // Past the depth limit the path would be 64 segments long: say what it is instead.
    if (/nested deeper than/.test((err as Error).message) && nestsDeeperThan(result, MAX_RESULT_DATA_DEPTH)) throw new ToolOutputSerializationError(tool.name, `it nests deeper than ${MAX_RESULT_DATA_DEPTH} levels`, err);
    throw new ToolOutputSerializationError(tool.name, (err as Error).message.replace(/^tool output /, 'the value at '), err);
  }
}

function issuesOf(issues: readonly v.BaseIssue<unknown>[], whole: string): ToolValidationIssue[] {
  return issues.map((i) => ({ path: v.getDotPath(i) ?? whole, message: i.message }));
}

const SILENT: ToolLogger = Object.freeze({ info: () => undefined, warn: () => undefined, error: () => undefined });

function loggerOf(log: ToolLog | undefined): ToolLogger {
  if (log === undefined) return SILENT;
  return Object.freeze({
    info: (message: string, attributes?: Record<string, unknown>) => log('info', message, attributes),
    warn: (message: string, attributes?: Record<string, unknown>) => log('warn', message, attributes),
    error: (message: string, attributes?: Record<string, unknown>) => log('error', message, attributes),
  });
}
