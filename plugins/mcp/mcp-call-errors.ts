import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, HookgateError } from '../../kernel/errors.js';

/** Marks the error response hookgate feeds the client when a request's event stream broke (broken-stream-watch.ts). */
export const STREAM_BROKEN_MARK = 'hookgate:stream-broken';

/** The JSON-RPC error hookgate delivers for a request whose stream broke, so the SDK rejects it at once. */
export function streamBrokenResponse(id: string | number): { jsonrpc: '2.0'; id: string | number; error: { code: number; message: string; data: string } } {
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.ConnectionClosed, message: 'the event stream of the request broke', data: STREAM_BROKEN_MARK } };
}

/**
 * Why a request to an MCP server failed, in words: a timeout, a broken or
 * closed connection, a server that cannot be reached, a protocol error.
 * `scrub` removes secrets (header values) from anything the server or the
 * network said.
 */
export function describeRequestFailure(err: unknown, timeoutMs: number, scrub: (text: string) => string): string {
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return `timed out after ${timeoutMs.toLocaleString('en-US')} ms`;
    if (err.code === ErrorCode.ConnectionClosed && err.data === STREAM_BROKEN_MARK) return 'the connection to the server broke during the request (the server may have stopped)';
    if (err.code === ErrorCode.ConnectionClosed) return 'the connection to the server is closed';
    return `the server answered with an error: ${scrub(err.message)}`;
  }
  const message = errorMessage(err);
  if (/^Not connected$/.test(message)) return 'the connection to the server is closed';
  const cause = err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const causeCode = typeof cause?.code === 'string' ? cause.code : '';
  const causeText = cause !== undefined ? errorMessage(cause) : '';
  if (causeCode === 'ECONNREFUSED') return 'cannot reach the server (connection refused)';
  if (/^(ECONNRESET|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED)$/.test(causeCode) || /other side closed|socket hang up|terminated/i.test(`${message} ${causeText}`)) {
    return 'the connection to the server broke during the request (the server may have stopped)';
  }
  // StreamableHTTPError and SseError carry the HTTP status as a numeric code.
  const status = typeof (err as { code?: unknown })?.code === 'number' && (err as { code: number }).code > 0 ? ` (HTTP ${(err as { code: number }).code})` : '';
  return `the request failed${status}: ${scrub(`${message}${causeText ? `: ${causeText}` : ''}`)}`;
}

/** MCP_CALL_FAILED for one tool call, naming server and tool. */
export function callFailed(server: string, tool: string, err: unknown, timeoutMs: number, scrub: (text: string) => string): HookgateError {
  return new HookgateError('MCP_CALL_FAILED', `MCP server "${server}": tool "${tool}": ${describeRequestFailure(err, timeoutMs, scrub)}`, {
    details: { server, tool },
  });
}
