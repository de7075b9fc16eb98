import { HookgateError } from '../../kernel/errors.js';
import { mcpServerNameProblem } from '../../kernel/mcp-tool-name.js';

/** How hookgate talks to an MCP server: streamable HTTP (the default) or the legacy HTTP+SSE transport. */
export type McpTransport = 'streamable-http' | 'sse';

/** The transports `transport` accepts. */
export const MCP_TRANSPORTS: readonly McpTransport[] = ['streamable-http', 'sse'];

/** Headers as `new Headers(init)` takes them: a `Headers`, a record, or name/value pairs. */
export type McpHeadersInit = NonNullable<ConstructorParameters<typeof Headers>[0]>;

/** What `connectMcpServer(name, options)` takes (document 001's `McpServerOptions`). */
export interface McpServerOptions {
  /** The MCP endpoint (http or https). */
  url: string | URL;
  /** Default `streamable-http`; `sse` for legacy servers. */
  transport?: McpTransport;
  /** Merged into every transport request, over `requestInit.headers` (a name set here wins, in any letter case). */
  headers?: McpHeadersInit;
  /** More request configuration for every transport request (its `headers` lose to `headers`). */
  requestInit?: RequestInit;
  /** The fetch the transport uses; default the global one. */
  fetch?: typeof fetch;
  /** Per-request timeout in ms (connection handshake, each tools/list page, each tool call); default the SDK's 60,000. */
  timeoutMs?: number;
  /**
   * Restart a call's timeout whenever the server reports progress. Each call then carries a progress token (the
   * server sends progress only for a request that has one), so the option can take effect. Default false.
   */
  resetTimeoutOnProgress?: boolean;
}

/** The SDK's own default request timeout (`DEFAULT_REQUEST_TIMEOUT_MSEC`). */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;
/** The longest timeout accepted: a day. */
export const MAX_MCP_TIMEOUT_MS = 86_400_000;

/** Options after validation: a parsed URL, a transport, a timeout. */
export interface ResolvedMcpServerOptions extends Omit<McpServerOptions, 'url' | 'transport' | 'timeoutMs'> {
  url: URL;
  transport: McpTransport;
  timeoutMs: number;
}

function invalid(name: string, problem: string, field: string): never {
  throw new HookgateError('MCP_OPTIONS_INVALID', `MCP server "${name}": ${field}: ${problem}`, { details: { server: name, field } });
}

/**
 * Checks `connectMcpServer`'s arguments before any connection is made.
 * Throws MCP_OPTIONS_INVALID naming the server and the field; the URL's
 * credentials and query are never echoed (they may hold secrets).
 */
export function resolveMcpServerOptions(name: string, options: McpServerOptions): ResolvedMcpServerOptions {
  const nameProblem = mcpServerNameProblem(name);
  if (nameProblem) invalid(String(name), nameProblem, 'name');
  if (options === null || typeof options !== 'object') invalid(name, 'expected an options object with a url', 'options');
  let url: URL;
  try {
    url = options.url instanceof URL ? new URL(options.url.href) : new URL(String(options.url));
  } catch {
    invalid(name, 'expected an absolute http(s) URL', 'url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') invalid(name, `expected an http(s) URL, got the scheme "${url.protocol.slice(0, -1)}"`, 'url');
  if (url.username !== '' || url.password !== '') invalid(name, 'credentials in the URL are never sent (fetch refuses them); put them in headers', 'url');
  const transport = options.transport ?? 'streamable-http';
  if (!MCP_TRANSPORTS.includes(transport)) invalid(name, `expected one of ${MCP_TRANSPORTS.join(', ')}`, 'transport');
  const timeoutMs = options.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_MCP_TIMEOUT_MS) invalid(name, `expected a whole number of milliseconds from 1 to ${MAX_MCP_TIMEOUT_MS.toLocaleString('en-US')}`, 'timeoutMs');
  if (options.resetTimeoutOnProgress !== undefined && typeof options.resetTimeoutOnProgress !== 'boolean') invalid(name, 'expected true or false', 'resetTimeoutOnProgress');
  if (options.fetch !== undefined && typeof options.fetch !== 'function') invalid(name, 'expected a fetch function', 'fetch');
  return { ...options, url, transport, timeoutMs };
}

/** The URL as it may appear in messages and logs: no user, password, query or fragment. */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}
