import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { deepFreeze } from '../../kernel/agent-definition.js';
import { errorMessage, HookgateError } from '../../kernel/errors.js';
import { MAX_RESULT_DATA_DEPTH, nestsDeeperThan } from '../../kernel/json-depth.js';
import { compileJsonSchema, type JsonSchemaCheck } from '../../kernel/json-schema-validator.js';
import { mcpIdentifier, mcpToolName, sanitizeMcpNamePart } from '../../kernel/mcp-tool-name.js';
import type { ToolDefinition } from '../../kernel/tools.js';
import { callFailed } from './mcp-call-errors.js';
import { resultText } from './mcp-result-text.js';

/** What an MCP tool's `run` resolves to: the text the model reads and the structured content, if any. */
export interface McpToolResult {
  /** The result's content flattened to text (mcp-result-text.ts). */
  content: string;
  /** The server's `structuredContent`, validated against the tool's output schema when it declared one. */
  data?: Record<string, unknown>;
}

/** What `run` gets besides the arguments. */
export interface McpToolRunContext {
  /** Aborts the call (the SDK sends the server a cancellation). */
  signal?: AbortSignal;
  /** The id of the tool call this run serves (not sent to the server). */
  toolCallId?: string;
}

/**
 * One tool of an MCP server, adapted: a plain object with document 001's
 * `name` (`mcp__<server>__<tool>`), `description`, `inputSchema`,
 * `outputSchema` and `run`, and also a complete kernel `ToolDefinition`
 * (`identifier` `mcp__<server>`, `apiName` the sanitized tool name,
 * `parameters` the input schema, `toolSource` `mcp:<server>`), so a tool
 * source can list it as it is and the gate sees an ordinary tool. Frozen.
 */
export interface McpTool extends ToolDefinition {
  readonly name: string;
  /** The server's name (as given to connectMcpServer / the config). */
  readonly server: string;
  /** The tool's own name on the server (what tools/call sends). */
  readonly mcpName: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  /**
   * Calls the tool (`tools/call`) with the connection's timeout. Resolves to
   * the flattened content and structured content. Rejects with a
   * HookgateError: MCP_TOOL_ERROR for a result with `isError` (its text is
   * the message), MCP_OUTPUT_INVALID when a declared output schema is not met
   * (or no structured content came), MCP_RESULT_TOO_LARGE for a result over
   * MAX_MCP_RESULT_BYTES, MCP_CALL_FAILED for a timeout, a broken
   * or closed connection or a protocol error. Never retries.
   */
  run(args: Record<string, unknown>, context?: McpToolRunContext): Promise<McpToolResult>;
}

/**
 * The most an MCP tool's result may hold, in UTF-8 bytes: its flattened
 * text plus its structured content as JSON (1 MiB, the limit of a mocked
 * result). Beyond it the call is a tool error (MCP_RESULT_TOO_LARGE) naming
 * the size, and nothing of the result is kept: the runtime stores results
 * and the model would read all of it.
 */
export const MAX_MCP_RESULT_BYTES = 1_048_576;

/** What every tool of one connection shares. */
export interface McpToolDeps {
  client: Client;
  server: string;
  timeoutMs: number;
  resetTimeoutOnProgress: boolean;
  /** Removes secrets (header values) from text the server sent before it becomes an error or a result. */
  scrub: (text: string) => string;
}

/** Adapts one listed tool (not a task-only one: the caller skips those). */
export function adaptMcpTool(deps: McpToolDeps, tool: Tool): McpTool {
  const apiName = sanitizeMcpNamePart(tool.name);
  const inputSchema = deepFreeze(structuredClone(tool.inputSchema)) as Record<string, unknown>;
  const outputSchema = tool.outputSchema ? (deepFreeze(structuredClone(tool.outputSchema)) as Record<string, unknown>) : undefined;
  const checkOutput = outputSchema ? outputCheck(outputSchema) : undefined;
  const description = tool.description?.trim() || tool.title || `MCP tool "${tool.name}" of server "${deps.server}"`;
  const adapted: McpTool = {
    name: mcpToolName(deps.server, tool.name),
    server: deps.server,
    mcpName: tool.name,
    identifier: mcpIdentifier(deps.server),
    apiName,
    description,
    parameters: inputSchema,
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    toolSource: `mcp:${deps.server}`,
    run: (args, context) => runMcpTool(deps, tool.name, checkOutput, args, context),
  };
  return Object.freeze(adapted);
}

/** The output schema compiled once (2020-12 unless it says otherwise); a schema that cannot compile fails every call. */
function outputCheck(schema: Record<string, unknown>): JsonSchemaCheck | { broken: string } {
  try {
    return compileJsonSchema(schema, { fallback: '2020-12', dataVar: 'structuredContent' });
  } catch (err) {
    return { broken: errorMessage(err) };
  }
}

async function runMcpTool(
  deps: McpToolDeps,
  name: string,
  checkOutput: JsonSchemaCheck | { broken: string } | undefined,
  args: Record<string, unknown>,
  context: McpToolRunContext = {},
) {
  const { server, scrub } = deps;
  const controller = new AbortController();
  const outer = context.signal;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  const options: RequestOptions = { timeout: deps.timeoutMs, signal: controller.signal };
  if (deps.resetTimeoutOnProgress) {
    // A progress handler makes the SDK send a progress token; without one the server sends no progress to reset on.
    options.resetTimeoutOnProgress = true;
    options.onprogress = () => undefined;
  }
  let result;
  try {
    result = await deps.client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, options);
  } catch (err) {
    if (outer?.aborted) throw new HookgateError('MCP_CALL_FAILED', `MCP server "${server}": tool "${name}": the call was aborted`, { details: { server, tool: name } });
    throw callFailed(server, name, err, deps.timeoutMs, scrub);
  } finally {
    outer?.removeEventListener('abort', onAbort);
  }
  const content = scrub(resultText(result));
  const size = Buffer.byteLength(content) + (result.structuredContent === undefined ? 0 : Buffer.byteLength(JSON.stringify(result.structuredContent)));
  if (size > MAX_MCP_RESULT_BYTES) {
    throw new HookgateError(
      'MCP_RESULT_TOO_LARGE',
      `MCP server "${server}": tool "${name}": its result is ${size.toLocaleString('en-US')} bytes (text plus structured content), over the limit of ${MAX_MCP_RESULT_BYTES.toLocaleString('en-US')} bytes; ask the tool for less`,
      { details: { server, tool: name, bytes: size, max: MAX_MCP_RESULT_BYTES } },
    );
  }
  if (result.isError === true) {
    throw new HookgateError('MCP_TOOL_ERROR', content, { details: { server, tool: name } });
  }
  const data = result.structuredContent;
  if (data !== undefined && nestsDeeperThan(data, MAX_RESULT_DATA_DEPTH)) {
    // The runtime stores and copies results; one nested past its limits would end the whole operation, not this call.
    throw new HookgateError('MCP_OUTPUT_INVALID', `MCP server "${server}": tool "${name}": its structured content nests deeper than ${MAX_RESULT_DATA_DEPTH} levels`, { details: { server, tool: name } });
  }
  if (checkOutput) {
    const problem =
      'broken' in checkOutput
        ? `its output schema cannot be used (${checkOutput.broken})`
        : data === undefined
          ? 'it declares an output schema but sent no structured content'
          : checkOutput(data);
    if (problem !== undefined) {
      throw new HookgateError('MCP_OUTPUT_INVALID', `MCP server "${server}": tool "${name}": ${scrub(problem)}`, { details: { server, tool: name } });
    }
  }
  return data === undefined ? { content } : { content, data: scrubbedData(data, scrub) };
}

/** Structured content with secrets replaced in its strings (unchanged, and not copied, when it holds none). */
function scrubbedData(data: Record<string, unknown>, scrub: (text: string) => string): Record<string, unknown> {
  const json = JSON.stringify(data);
  const scrubbed = scrub(json);
  if (scrubbed === json) return data;
  try {
    return JSON.parse(scrubbed) as Record<string, unknown>;
  } catch {
    return { redacted: 'the structured content held a secret and was withheld' };
  }
}
