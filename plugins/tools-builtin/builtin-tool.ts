import type { ToolDefinition, ToolExecutionContext } from '../../kernel/tools.js';

/** What a builtin tool returns: the text the model sees, plus structured data for hooks and the store. */
export interface BuiltinToolOutput {
  content: string;
  data?: unknown;
}

/** One builtin tool: its definition as offered to models, and the code that runs it. */
export interface BuiltinTool {
  readonly definition: ToolDefinition;
  /** Validates `args` and runs; throws `HookgateError` on bad arguments or failure. */
  run(args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<BuiltinToolOutput>;
}

/** `toolSource` of every tool this plugin offers. */
export const BUILTIN_TOOL_SOURCE = 'builtin';
