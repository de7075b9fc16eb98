import * as v from 'valibot';
import { AgentRenderError } from './agent-errors.js';
import { agentPrefix, isRendering, requireRootFrame } from './render-slot.js';
import { printable, toJsonValue } from './use-persistent-state.js';

/** The longest data part name (a part name is a key of `AgentReply.data`, not a payload). */
export const MAX_DATA_PART_NAME_LENGTH = 256;

/** Writes one value to a data part: appended to the part's writes in order. */
export type DataWriter<T = unknown> = (data: T) => void;

/**
 * A named, client-facing data part of the response in progress: returns the
 * writer that appends a value to it. The model never sees the parts; they
 * are durable (committed with the step or event hook commit that wrote them,
 * so a reply read after a restart has them) and a completed send's
 * `AgentReply.data[name]` is the array of the response's writes, in order.
 * Names are part of the render's structure: a name is a non-empty string of
 * at most 256 characters, and declaring it twice in one render throws
 * (never declare a writer conditionally). The writer throws during a render,
 * on a bare render (no response behind it), for a value that is not JSON
 * (undefined, a function, a class instance, a cycle, a non-finite number,
 * nesting past 64), and, with `schema` (valibot), for a value the schema
 * refuses, naming the part; the schema's output is what is stored.
 * Synchronous; the hook throws outside a render and in a subagent render.
 */
export function useDataWriter<TSchema extends v.GenericSchema>(name: string, options: { schema: TSchema }): DataWriter<v.InferInput<TSchema>>;
export function useDataWriter(name: string, options?: { schema?: undefined }): DataWriter<unknown>;
export function useDataWriter(name: string, options?: { schema?: v.GenericSchema }): DataWriter<unknown> {
  const frame = requireRootFrame('useDataWriter', 'data parts belong to the response of the agent instance.');
  if (typeof name !== 'string' || name === '' || name.length > MAX_DATA_PART_NAME_LENGTH) {
    throw new AgentRenderError(`${agentPrefix(frame)}useDataWriter(name, { schema? }) takes the part name, a non-empty string of at most ${MAX_DATA_PART_NAME_LENGTH} characters, first; got ${typeof name === 'string' ? `"${printable(name)}" (${name.length} characters)` : typeof name}`, { hook: 'useDataWriter' });
  }
  if (options !== undefined && (options === null || typeof options !== 'object')) throw new AgentRenderError(`${agentPrefix(frame)}useDataWriter("${printable(name)}", options): options is an object ({ schema? })`, { hook: 'useDataWriter' });
  const schema = options?.schema;
  if (schema !== undefined && (schema === null || typeof schema !== 'object' || (schema as { kind?: unknown }).kind !== 'schema')) {
    throw new AgentRenderError(`${agentPrefix(frame)}useDataWriter("${printable(name)}"): schema must be a valibot schema`, { hook: 'useDataWriter', name: printable(name) });
  }
  if (frame.dataNames.has(name)) {
    throw new AgentRenderError(`${agentPrefix(frame)}two useDataWriter declarations named "${printable(name)}" in one render: a part name identifies one part`, { hook: 'useDataWriter', name: printable(name) });
  }
  frame.dataNames.add(name);
  const writeData = frame.input.state?.writeData;
  return (data: unknown) => {
    if (isRendering()) throw new AgentRenderError(`data part "${printable(name)}" was written during a render: write data parts from a tool's run or an event hook callback`, { hook: 'useDataWriter', name: printable(name) });
    if (writeData === undefined) throw new AgentRenderError(`data part "${printable(name)}" has no response behind this render, so it cannot be written`, { hook: 'useDataWriter', name: printable(name) });
    let value = data;
    if (schema !== undefined) {
      const parsed = v.safeParse(schema, data);
      if (!parsed.success) {
        const issue = parsed.issues[0];
        const at = issue.path?.map((item) => String(item.key)).join('.');
        throw new AgentRenderError(`data part "${printable(name)}" was written a value its schema refuses${at ? ` at ${at}` : ''}: ${issue.message}`, { hook: 'useDataWriter', name: printable(name) });
      }
      value = parsed.output;
    }
    if (value === undefined) throw new AgentRenderError(`data part "${printable(name)}" cannot be written undefined: data parts are JSON`, { hook: 'useDataWriter', name: printable(name) });
    writeData(name, toJsonValue(value, printable(name), 0, new Set(), 'data part'));
  };
}
