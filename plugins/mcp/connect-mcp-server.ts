import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, HookgateError } from '../../kernel/errors.js';
import { SecretScrubber } from '../../kernel/logger.js';
import { watchBrokenStreams, type BrokenStream } from './broken-stream-watch.js';
import { describeRequestFailure, streamBrokenResponse } from './mcp-call-errors.js';
import { displayUrl, resolveMcpServerOptions, type McpServerOptions, type ResolvedMcpServerOptions } from './mcp-server-options.js';
import { adaptMcpTool, type McpTool } from './mcp-tool.js';
import { listAllTools, requiresTask } from './mcp-tool-discovery.js';
import { createMcpTransport, mergedRequestInit } from './mcp-transport.js';

/** What `connectMcpServer` resolves to (document 001's `McpServerConnection`). */
export interface McpServerConnection {
  /** The server name given to `connectMcpServer`. */
  readonly name: string;
  /** The server's tools, adapted (task-only tools left out), in the order the server listed them. */
  readonly tools: readonly McpTool[];
  /**
   * Ends the session (streamable HTTP: a DELETE, bounded by a few seconds;
   * SSE: the stream is closed) and closes the client; calls still running
   * reject. Idempotent; never rejects.
   */
  close(): Promise<void>;
}

/** How the mcp plugin adjusts a connection: its scrubber and its logger. */
export interface McpConnectionEnvironment {
  /** Removes secrets from text the server sent; default: the values of credential-like headers. */
  scrub?: (text: string) => string;
  /** Where "task-only tool skipped" goes; default console.warn (document 001). */
  warn?: (message: string, fields: Record<string, unknown>) => void;
  /** Protocol noise the SDK reports (a stream it reconnects, a late response); default: ignored. */
  debug?: (message: string, fields: Record<string, unknown>) => void;
}

/** How long close() waits for the server to acknowledge the end of a streamable HTTP session. */
const SESSION_END_WAIT_MS = 5_000;

/**
 * Connects to a remote MCP server and adapts its tools (document 001's
 * `connectMcpServer`). Asynchronous: call it at startup, not per request.
 *
 * - Transport: `streamable-http` (default) or `sse`; `headers` are merged
 *   over `requestInit.headers` into every request; `fetch` replaces the
 *   global one. Redirects are followed within the server's origin only.
 * - Discovery follows `tools/list` pagination page by page; a repeated
 *   cursor throws. Tools with `execution.taskSupport: 'required'` are skipped
 *   with a warning. Names are `mcp__<server>__<tool>` with characters outside
 *   `[A-Za-z0-9_-]` replaced by `_`; two tools with one adapted name reject
 *   the connection.
 * - Each tool is an ordinary tool (see {@link McpTool}): content flattened
 *   to text, `isError` a tool error, a declared output schema enforced,
 *   `timeoutMs` per request, `resetTimeoutOnProgress` with a progress token.
 *   A call whose event stream breaks (the server died) fails at once.
 *
 * Rejects with MCP_OPTIONS_INVALID (bad arguments, before any I/O),
 * MCP_CONNECT_FAILED (unreachable, refused, handshake failed or timed out)
 * or MCP_DISCOVERY_FAILED (tools/list failed, a repeated cursor, duplicate
 * names); in the last two cases the client is closed before the error
 * propagates. Messages name the server and its URL without credentials or
 * query, and never carry header values.
 */
export function connectMcpServer(name: string, options: McpServerOptions): Promise<McpServerConnection> {
  return openMcpConnection(name, options, {});
}

/** {@link connectMcpServer} with the plugin's scrubber and logger. */
export async function openMcpConnection(name: string, options: McpServerOptions, env: McpConnectionEnvironment): Promise<McpServerConnection> {
  const resolved = resolveMcpServerOptions(name, options);
  const scrub = secretScrubber(resolved, env.scrub);
  const where = `MCP server "${name}" (${displayUrl(resolved.url)})`;
  let transport: Transport | undefined;
  const client = new Client({ name: 'hookgate', version: '0.1.0' }, { capabilities: {} });
  client.onerror = (err) => env.debug?.('MCP client error', { server: name, error: scrub(errorMessage(err)) });
  const onBroken = (stream: BrokenStream) => {
    if (stream.kind === 'post') for (const id of stream.requestIds) transport?.onmessage?.(streamBrokenResponse(id));
    // The legacy transport answers every request on its one GET stream: once it breaks the session is gone.
    else if (resolved.transport === 'sse') void client.close().catch(() => undefined);
  };
  try {
    transport = createMcpTransport(resolved, watchBrokenStreams(resolved.fetch, onBroken));
  } catch (err) {
    throw new HookgateError('MCP_OPTIONS_INVALID', `${where}: headers: ${errorMessage(err)}`, { details: { server: name, field: 'headers' } });
  }
  const connection = closer(client, transport);
  try {
    await withTimeout(client.connect(transport, { timeout: resolved.timeoutMs }), resolved.timeoutMs);
  } catch (err) {
    await connection.close();
    throw new HookgateError('MCP_CONNECT_FAILED', `${where}: cannot connect: ${describeRequestFailure(err, resolved.timeoutMs, scrub)}`, { details: { server: name } });
  }
  try {
    const tools = client.getServerCapabilities()?.tools ? await listAllTools(client, { name, where }, resolved.timeoutMs) : [];
    const deps = { client, server: name, timeoutMs: resolved.timeoutMs, resetTimeoutOnProgress: resolved.resetTimeoutOnProgress ?? false, scrub };
    const adapted: McpTool[] = [];
    const byName = new Map<string, string>();
    for (const tool of tools) {
      if (requiresTask(tool)) {
        const message = `MCP server "${name}": tool "${tool.name}" skipped: it requires task-based execution (execution.taskSupport: required), which hookgate does not use`;
        (env.warn ?? ((m: string) => console.warn(m)))(message, { server: name, tool: tool.name });
        continue;
      }
      if (tool.name === '') throw new HookgateError('MCP_DISCOVERY_FAILED', `${where}: tools/list listed a tool with an empty name`, { details: { server: name } });
      const tool_ = adaptMcpTool(deps, tool);
      const taken = byName.get(tool_.name);
      if (taken !== undefined) {
        throw new HookgateError('MCP_DISCOVERY_FAILED', `${where}: tools ${JSON.stringify(taken)} and ${JSON.stringify(tool.name)} both become "${tool_.name}"; the connection is refused`, {
          details: { server: name, tools: [taken, tool.name], name: tool_.name },
        });
      }
      byName.set(tool_.name, tool.name);
      adapted.push(tool_);
    }
    return Object.freeze({ name, tools: Object.freeze(adapted), close: connection.close });
  } catch (err) {
    await connection.close();
    if (err instanceof HookgateError && err.code === 'MCP_DISCOVERY_FAILED') throw err;
    throw new HookgateError('MCP_DISCOVERY_FAILED', `${where}: tools/list failed: ${describeRequestFailure(err, resolved.timeoutMs, scrub)}`, { details: { server: name } });
  }
}

/** close(): end the session, then close the client; once, whatever happens. */
function closer(client: Client, transport: Transport): { close(): Promise<void> } {
  let closing: Promise<void> | undefined;
  return {
    close: () =>
      (closing ??= (async () => {
        if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
          await withTimeout(transport.terminateSession(), SESSION_END_WAIT_MS).catch(() => undefined);
        }
        await client.close().catch(() => undefined);
      })()),
  };
}

/** `promise`, or the SDK's RequestTimeout error after `ms` (the SSE transport's first GET has no timeout of its own). */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new McpError(ErrorCode.RequestTimeout, 'timed out')), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Header names whose values are credentials: scrubbed from whatever the server sends back. */
const CREDENTIAL_HEADER = /auth|token|key|secret|cookie|session|password|credential|signature/i;

/**
 * A connection's scrubber: the URL's query values (a token in `?key=`), then
 * `outer` (the plugin's: the kernel's secrets) or, without one, the values of
 * the credential-like headers.
 */
function secretScrubber(options: ResolvedMcpServerOptions, outer: ((text: string) => string) | undefined): (text: string) => string {
  const scrubber = new SecretScrubber();
  for (const value of options.url.searchParams.values()) scrubber.add(value);
  if (outer) return scrubber.size === 0 ? outer : (text) => outer(scrubber.scrub(text));
  let headers: Record<string, string> = {};
  try {
    headers = mergedRequestInit(options.requestInit, options.headers).headers as Record<string, string>;
  } catch {
    // Invalid headers are refused when the transport is built.
  }
  for (const [header, value] of Object.entries(headers)) if (CREDENTIAL_HEADER.test(header)) scrubber.add(value);
  return scrubber.size === 0 ? (text) => text : (text) => scrubber.scrub(text);
}
