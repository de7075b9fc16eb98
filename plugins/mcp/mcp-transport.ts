import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpHeadersInit, ResolvedMcpServerOptions } from './mcp-server-options.js';

/**
 * `requestInit` with `headers` merged over its own headers: a header set in
 * `headers` wins whatever its letter case (`authorization` replaces
 * `Authorization`), as document 001 says. The result's headers are a plain
 * object with lower-case names, which is what the SDK spreads into each
 * request. Throws (Headers' own TypeError) for a header name or value HTTP
 * cannot carry.
 */
export function mergedRequestInit(requestInit: RequestInit | undefined, headers: McpHeadersInit | undefined): RequestInit {
  const merged = new Headers(requestInit?.headers);
  for (const [name, value] of new Headers(headers)) merged.set(name, value);
  return { ...requestInit, headers: Object.fromEntries(merged.entries()) };
}

/**
 * The SDK transport for a server: `StreamableHTTPClientTransport` (default) or
 * the legacy `SSEClientTransport`, both with the merged request init and
 * `fetch` (the caller's, already wrapped to watch for broken streams).
 * Redirects are followed only within the server's origin (the SDK default),
 * so headers never reach another host. No I/O until the client connects.
 */
export function createMcpTransport(options: ResolvedMcpServerOptions, fetchImpl: typeof fetch): Transport {
  const requestInit = mergedRequestInit(options.requestInit, options.headers);
  if (options.transport === 'sse') {
    return new SSEClientTransport(options.url, { requestInit, fetch: fetchImpl });
  }
  return new StreamableHTTPClientTransport(options.url, { requestInit, fetch: fetchImpl });
}
