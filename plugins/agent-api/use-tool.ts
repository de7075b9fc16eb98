import type * as v from 'valibot';
import { ToolNameConflictError } from './agent-errors.js';
import { defineTool, type AgentTool, type ToolOptions } from './define-tool.js';
import { requireRenderFrame } from './render-slot.js';

/**
 * Mounts a model-callable tool for this render: a `defineTool` value or an
 * inline definition (validated the same way). The model sees it as
 * `agent/<name>`, and every call of it passes the gate (allow-list,
 * approval, policies, webhook controls) like any tool. Synchronous;
 * ToolNameConflictError for a second tool of the same name in one render,
 * AgentRenderError outside a render or for a bad definition,
 * ToolLegacyDefinitionError for the legacy `parameters` / `execute` fields.
 */
export function useTool(tool: AgentTool): void;
export function useTool<TInput extends v.GenericSchema | undefined = undefined, TOutput extends v.GenericSchema | undefined = undefined, TDurable extends boolean | undefined = undefined>(
  tool: ToolOptions<TInput, TOutput, TDurable>,
): void;
export function useTool<TInput extends v.GenericSchema | undefined = undefined, TOutput extends v.GenericSchema | undefined = undefined, TDurable extends boolean | undefined = undefined>(
  tool: AgentTool | ToolOptions<TInput, TOutput, TDurable>,
): void {
  const frame = requireRenderFrame('useTool');
  const defined = defineTool(tool as ToolOptions<TInput, TOutput, TDurable>);
  if (frame.tools.some((t) => t.name === defined.name)) throw new ToolNameConflictError(defined.name);
  frame.tools.push(defined);
}
