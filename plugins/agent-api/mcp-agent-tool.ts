import { errorMessage } from '../../kernel/errors.js';
import { compileJsonSchema, type JsonSchemaCheck } from '../../kernel/json-schema-validator.js';
import { mcpIdentifier, mcpToolName, sanitizeMcpNamePart } from '../../kernel/mcp-tool-name.js';
import { AgentRenderError } from './agent-errors.js';
import type { AgentTool, RemoteToolBinding } from './define-tool.js';

/**
 * An MCP tool as `connectMcpServer` adapts it (plugins/mcp/mcp-tool.ts
 * `McpTool`), read by shape so the agent API does not depend on the MCP
 * plugin: document 001's `name`, `description`, `inputSchema`,
 * `outputSchema` and `run`, with the kernel identity it already carries.
 */
export interface MountableMcpTool {
  readonly name: string;
  readonly server: string;
  readonly mcpName: string;
  readonly identifier: string;
  readonly apiName: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly toolSource: string;
  run(args: Record<string, unknown>, context?: { signal?: AbortSignal; toolCallId?: string }): Promise<{ content: string; data?: unknown }>;
}

/** The agent tools made from MCP tools (and the MCP tool each came from), so a render reuses them. */
const adapted = new WeakMap<object, AgentTool>();
const made = new WeakSet<object>();

/** Whether `value` has the shape of a `connectMcpServer` tool (it may still be refused as inconsistent). */
export function isMcpToolShape(value: unknown): value is MountableMcpTool {
  if (value === null || typeof value !== 'object') return false;
  const t = value as Partial<MountableMcpTool>;
  return typeof t.server === 'string' && typeof t.mcpName === 'string' && typeof t.identifier === 'string' && typeof t.run === 'function' && t.inputSchema !== null && typeof t.inputSchema === 'object';
}

/**
 * What `useTool(tool)` mounts for an MCP tool of `connectMcpServer`: an
 * agent tool with the MCP tool's own identity (`mcp__<server>/<tool>` to
 * the gate, policies and webhooks, `mcp__<server>__<tool>` to the model),
 * whose call validates the arguments against the tool's JSON Schema (2020-12
 * unless it names its dialect; a mismatch is a tool error the model can
 * retry) and then calls the server (content flattened, `isError` and output
 * schema mismatches tool errors, the result size capped: the MCP plugin's
 * `run`). The same object for the same MCP tool. Undefined when `tool` is
 * neither an MCP tool nor one made here; AgentRenderError for an MCP-shaped
 * object whose names do not agree with its server and tool name.
 */
export function mcpAgentToolFor(tool: unknown): AgentTool | undefined {
  if (tool === null || typeof tool !== 'object') return undefined;
  if (made.has(tool)) return tool as AgentTool;
  const known = adapted.get(tool);
  if (known !== undefined) return known;
  if (!isMcpToolShape(tool)) return undefined;
  const where = `MCP tool ${JSON.stringify(String(tool.name).slice(0, 80))}`;
  if (tool.identifier !== mcpIdentifier(tool.server) || tool.apiName !== sanitizeMcpNamePart(tool.mcpName) || tool.name !== mcpToolName(tool.server, tool.mcpName)) {
    throw new AgentRenderError(`${where}: its name, identifier and apiName do not agree with server ${JSON.stringify(tool.server)} and tool ${JSON.stringify(tool.mcpName)}; mount the tools connectMcpServer returns as they are`, { field: 'name' });
  }
  if (typeof tool.description !== 'string' || tool.description.trim() === '') throw new AgentRenderError(`${where}: description must be a non-empty string`, { field: 'description' });
  const checkArgs = argumentCheck(tool.inputSchema);
  const remote: RemoteToolBinding = Object.freeze({
    identifier: tool.identifier,
    apiName: tool.apiName,
    toolSource: tool.toolSource,
    call: async (args: Record<string, unknown>, context: { toolCallId: string; signal: AbortSignal }) => {
      const problem = 'broken' in checkArgs ? `its input schema cannot be used (${checkArgs.broken}), so no call of it can run` : checkArgs(args);
      if (problem !== undefined) throw new Error(`invalid arguments for tool "${tool.name}": ${problem}`);
      const result = await tool.run(args, { signal: context.signal, toolCallId: context.toolCallId });
      return result.data === undefined ? { content: result.content } : { content: result.content, data: result.data };
    },
  });
  const agentTool: AgentTool = Object.freeze({
    name: tool.name,
    description: tool.description,
    input: undefined,
    parameters: tool.inputSchema,
    run: () => {
      throw new Error(`tool "${tool.name}" is an MCP tool: it runs through its server (runAgentTool calls it with its arguments)`);
    },
    remote,
  });
  adapted.set(tool, agentTool);
  made.add(agentTool);
  return agentTool;
}

/** The argument check of an MCP input schema, compiled once; a schema that cannot compile fails every call (closed). */
function argumentCheck(schema: Readonly<Record<string, unknown>>): JsonSchemaCheck | { broken: string } {
  try {
    return compileJsonSchema(schema as Record<string, unknown>, { fallback: '2020-12', dataVar: 'args' });
  } catch (err) {
    return { broken: errorMessage(err) };
  }
}
