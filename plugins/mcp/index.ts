import { HookgateConfigToken } from '../../config/config-token.js';
import { errorMessage, HookgateError } from '../../kernel/errors.js';
import { definePlugin } from '../../kernel/plugin.js';
import { Config, Environment, Logger, Secrets, ToolSources } from '../../kernel/tokens.js';
import { resolveConfiguredHeaders } from './configured-headers.js';
import type { McpServerConnection } from './connect-mcp-server.js';
import type { McpServerOptions } from './mcp-server-options.js';
import { McpToolSource } from './mcp-tool-source.js';

export type { McpServerConnection } from './connect-mcp-server.js';
export { McpToolSource } from './mcp-tool-source.js';
export type { McpServerOptions, McpTransport } from './mcp-server-options.js';

/**
 * The MCP SDK's modules (and zod's, ~8 MB of heap) are imported at the first
 * connection, not with the plugin: every kernel loads the bundled plugins,
 * and most configure no MCP server.
 */
function connectionModule(): Promise<typeof import('./connect-mcp-server.js')> {
  return import('./connect-mcp-server.js');
}

/** connect-mcp-server.ts's `connectMcpServer` (same contract), loaded at the first call. */
export async function connectMcpServer(name: string, options: McpServerOptions): Promise<McpServerConnection> {
  return (await connectionModule()).connectMcpServer(name, options);
}
export type { McpTool, McpToolResult, McpToolRunContext } from './mcp-tool.js';
export { MAX_MCP_RESULT_BYTES } from './mcp-tool.js';

interface McpPluginState {
  source: McpToolSource;
  connections: McpServerConnection[];
}

/**
 * `mcp`: the MCP servers of the config's `mcp.servers` as one tool source.
 * `register` binds the source when servers are configured (no I/O: until
 * start its `list()` says the tools are not known yet); `start` connects to every
 * server at once (headers' `${VAR}` read from the kernel's environment and
 * registered as secrets) and adds their tools, `mcp__<server>/<tool>` to the
 * runtime, `mcp__<server>__<tool>` to models and agent files. A server that
 * cannot be reached, fails discovery or lacks a header's variable fails the
 * start (PLUGIN_START_FAILED naming this plugin, the message naming the
 * server): an agent that allows a server's tools never runs silently
 * without them. The servers that did connect are closed first. `stop`
 * closes every client.
 */
export default definePlugin({
  id: 'mcp',
  description: 'Tools of the MCP servers listed in the config (mcp.servers), as mcp__<server>__<tool>',
  requires: [Config, Logger, Secrets, Environment],
  provides: [ToolSources],
  drivers: [{ kind: 'tool-source', name: 'mcp' }],
  state: (): McpPluginState => ({ source: new McpToolSource(), connections: [] }),
  register(ctx) {
    // No servers, no tool source: the catalogue lists nothing empty for it.
    const servers = Object.keys(ctx.resolve(HookgateConfigToken).mcp?.servers ?? {});
    if (servers.length === 0) return;
    ctx.state.source.expect(servers);
    ctx.bindValue(ToolSources, ctx.state.source);
  },
  async start(ctx) {
    const servers = Object.entries(ctx.resolve(HookgateConfigToken).mcp?.servers ?? {});
    if (servers.length === 0) return;
    const secrets = ctx.resolve(Secrets);
    const env = ctx.resolve(Environment);
    const logger = ctx.resolve(Logger).child({ plugin: 'mcp' });
    const scrub = (text: string) => secrets.scrub(text);
    const { openMcpConnection } = await connectionModule();
    const outcomes = await Promise.allSettled(
      servers.map(async ([name, server]) =>
        openMcpConnection(
          name,
          {
            url: server.url,
            transport: server.transport,
            headers: resolveConfiguredHeaders(name, server.headers, env, secrets),
            ...(server.timeoutMs !== undefined ? { timeoutMs: server.timeoutMs } : {}),
            resetTimeoutOnProgress: server.resetTimeoutOnProgress,
          },
          {
            scrub,
            warn: (message, fields) => logger.warn(message, fields),
            debug: (message, fields) => logger.debug(message, fields),
          },
        ),
      ),
    );
    const connected = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    try {
      if (failures.length > 0) {
        const first = failures[0];
        const message = failures.map((f) => scrub(errorMessage(f))).join('; ');
        throw first instanceof HookgateError ? new HookgateError(first.code, message, { details: first.details }) : new Error(message);
      }
      for (const connection of connected) ctx.state.source.add(connection);
    } catch (err) {
      await Promise.all(connected.map((c) => c.close()));
      throw err;
    }
    ctx.state.connections = connected;
    logger.debug('MCP servers connected', { servers: connected.map((c) => ({ server: c.name, tools: c.tools.length })) });
  },
  async stop(ctx) {
    const connections = ctx.state.connections;
    ctx.state.connections = [];
    await Promise.all(connections.map((c) => c.close()));
  },
});
