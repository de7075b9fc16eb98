import { HookgateError } from '../../kernel/errors.js';
import { mcpIdentifier } from '../../kernel/mcp-tool-name.js';
import type { ToolDefinition, ToolExecutionContext, ToolSource } from '../../kernel/tools.js';
import type { McpServerConnection } from './connect-mcp-server.js';
import type { McpTool } from './mcp-tool.js';

/**
 * The tools of MCP connections as one ordinary `ToolSource` (id `mcp`): each
 * tool is `mcp__<server>/<tool>` to the runtime, so it passes the same gate
 * as every other tool (allow-list, approval, policies, webhook controls)
 * before `execute` runs it. `list()` is empty until connections are added
 * (the plugin adds them in `start`, before the kernel reads its catalogue).
 * `execute` resolves to the flattened text and the structured content as
 * `data`; an `isError` result, an output schema mismatch or a failed call
 * rejects, which the runtime turns into a tool error the model sees.
 */
export class McpToolSource implements ToolSource {
  readonly id = 'mcp';
  private readonly tools = new Map<string, McpTool>();
  /** The server each `mcp__<server>` identifier belongs to. */
  private readonly servers = new Map<string, string>();
  private listed: ToolDefinition[] = [];
  private awaiting: readonly string[] = [];

  /**
   * Servers whose tools will come with a connection: until {@link add} brings
   * them, `list()` throws, so a reader of the catalogue that never starts the
   * kernel (`hookgate policy check`) says the MCP tools are unknown rather
   * than absent.
   */
  expect(servers: readonly string[]): void {
    this.awaiting = [...servers];
  }

  /**
   * Adds a connection's tools; a name another connection already gave is refused (MCP_DISCOVERY_FAILED), and so is
   * a server whose name sanitizes like another's (`team.a`, `team_a`): both would be `mcp__team_a`, so allowing or
   * policing one server would cover the other's tools too.
   */
  add(connection: McpServerConnection): void {
    const identifier = mcpIdentifier(connection.name);
    const sharing = this.servers.get(identifier);
    if (sharing !== undefined && sharing !== connection.name) {
      throw new HookgateError('MCP_DISCOVERY_FAILED', `MCP servers "${sharing}" and "${connection.name}" both name their tools ${identifier}__<tool>: an allow-list or policy for one would cover the other; rename one of them`, {
        details: { servers: [sharing, connection.name], identifier },
      });
    }
    this.servers.set(identifier, connection.name);
    for (const tool of connection.tools) {
      const key = `${tool.identifier}/${tool.apiName}`;
      if (this.tools.has(key)) {
        throw new HookgateError('MCP_DISCOVERY_FAILED', `MCP server "${connection.name}": tool "${tool.name}" is also listed by server "${this.tools.get(key)!.server}"`, {
          details: { server: connection.name, name: tool.name },
        });
      }
      this.tools.set(key, tool);
    }
    this.listed = [...this.tools.values()];
    this.awaiting = this.awaiting.filter((name) => name !== connection.name);
  }

  list(): ToolDefinition[] {
    if (this.awaiting.length > 0) {
      throw new HookgateError('MCP_CONNECT_FAILED', `the tools of MCP server${this.awaiting.length > 1 ? 's' : ''} ${this.awaiting.map((n) => `"${n}"`).join(', ')} are known once connected (when the kernel starts)`, {
        details: { servers: this.awaiting },
      });
    }
    return this.listed;
  }

  async execute(call: { identifier: string; apiName: string; args: Record<string, unknown> }, ctx: ToolExecutionContext): Promise<{ content: string; data?: unknown }> {
    const tool = this.tools.get(`${call.identifier}/${call.apiName}`);
    if (!tool) throw new HookgateError('TOOL_NOT_FOUND', `no MCP tool ${call.identifier}/${call.apiName}`, { details: { identifier: call.identifier, apiName: call.apiName } });
    return tool.run(call.args, { signal: ctx.signal, toolCallId: ctx.toolCallId });
  }
}
