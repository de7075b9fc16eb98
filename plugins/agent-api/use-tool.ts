import type * as v from 'valibot';
import { ToolNameConflictError } from './agent-errors.js';
import { defineTool, type AgentTool, type ToolOptions } from './define-tool.js';
import { requireRenderFrame } from './render-slot.js';
import { mcpAgentToolFor, type MountableMcpTool } from './mcp-agent-tool.js';

/**
 * Mounts a model-callable tool for this render: a `defineTool` value, an
 * inline definition (validated the same way), or a tool of
 * `connectMcpServer` as it is (called through its server, under its own
 * `mcp__<server>/<tool>` identity). The model sees the others as
 * `agent/<name>`, and every call passes the gate (allow-list,
 * approval, policies, webhook controls) like any tool. Synchronous;
 * ToolNameConflictError for a second tool of the same name in one render,
 * AgentRenderError outside a render or for a bad definition,
 * ToolLegacyDefinitionError for the legacy `parameters` / `execute` fields.
 */
export function useTool(tool: AgentTool | MountableMcpTool): void;
export function useTool<TInput extends v.GenericSchema | undefined = undefined, TOutput extends v.GenericSchema | undefined = undefined, TDurable extends boolean | undefined = undefined>(
  tool: ToolOptions<TInput, TOutput, TDurable>,
): void;
export function useTool<TInput extends v.GenericSchema | undefined = undefined, TOutput extends v.GenericSchema | undefined = undefined, TDurable extends boolean | undefined = undefined>(
  tool: AgentTool | ToolOptions<TInput, TOutput, TDurable> | MountableMcpTool,
): void {
  const frame = requireRenderFrame('useTool');
  // An MCP tool of connectMcpServer mounts as it is (mcp-agent-tool.ts); anything else is a defineTool definition.
  const defined = mcpAgentToolFor(tool) ?? defineTool(tool as ToolOptions<TInput, TOutput, TDurable>);
  if (frame.tools.some((t) => t.name === defined.name)) throw new ToolNameConflictError(defined.name);
  frame.tools.push(defined);
}
