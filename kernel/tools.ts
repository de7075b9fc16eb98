import type { ToolSpec } from './model.js';

export interface ToolDefinition extends ToolSpec {
  /** Where the tool comes from: `builtin`, `sandbox`, `mcp:<server>`... */
  toolSource: string;
}

export interface ToolExecutionContext {
  operationId: string;
  agentId: string;
  userId?: string;
  signal: AbortSignal;
}

/**
 * A source of tools (builtin, sandbox, MCP). `execute` returns the text the
 * model sees, or a structured result; throwing becomes `onToolCallError` and
 * an error result the model sees.
 */
export interface ToolSource {
  readonly id: string;
  list(): ToolDefinition[];
  execute(
    call: { identifier: string; apiName: string; args: Record<string, unknown> },
    ctx: ToolExecutionContext,
  ): Promise<string | { content: string; data?: unknown; success?: boolean }>;
}
