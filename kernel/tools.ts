import type { ToolSpec } from './model.js';

export interface ToolDefinition extends ToolSpec {
  /** Where the tool comes from: `builtin`, `sandbox`, `mcp:<server>`... */
  toolSource: string;
}

export interface ToolExecutionContext {
  operationId: string;
  /** The native tool call id: what a deferred tool passes to `kernel.completeToolCall()`. */
  toolCallId: string;
  agentId: string;
  userId?: string;
  signal: AbortSignal;
}

/**
 * A tool whose result arrives later (an async job, a callback): the runtime
 * stores an empty placeholder, parks the operation (`waiting_tool`) and
 * publishes the result when `kernel.completeToolCall()` brings it, once,
 * through the same result control as any tool result.
 */
export interface DeferredToolResult {
  deferred: true;
}

/**
 * A source of tools (builtin, sandbox, MCP). `execute` returns the text the
 * model sees, a structured result, or `{ deferred: true }`; throwing becomes
 * `onToolCallError` and an error result the model sees.
 */
export interface ToolSource {
  readonly id: string;
  list(): ToolDefinition[];
  execute(
    call: { identifier: string; apiName: string; args: Record<string, unknown> },
    ctx: ToolExecutionContext,
  ): Promise<string | { content: string; data?: unknown; success?: boolean } | DeferredToolResult>;
}
