import type { ToolDefinition, ToolExecutionContext } from '../../kernel/tools.js';
import type { ResolveMode } from './sandbox-path.js';

/** What a builtin tool returns: the text the model sees, plus structured data for hooks and the store. */
export interface BuiltinToolOutput {
  content: string;
  data?: unknown;
}

/** An argument that names a sandbox path, and how the tool resolves it. */
export interface BuiltinPathArg {
  name: string;
  /** `follow` resolves a final symlink (read, write, list, stat); `entry` names the link itself (delete). */
  mode: ResolveMode;
  /** What the tool uses when the argument is missing or empty. */
  default?: string;
}

/** One builtin tool: its definition as offered to models, and the code that runs it. */
export interface BuiltinTool {
  readonly definition: ToolDefinition;
  /** The arguments that are sandbox paths (what `canonicalArgs` resolves). */
  readonly pathArgs?: readonly BuiltinPathArg[];
  /** Validates `args` and runs; throws `HookgateError` on bad arguments or failure. */
  run(args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<BuiltinToolOutput>;
}

/** `toolSource` of every tool this plugin offers. */
export const BUILTIN_TOOL_SOURCE = 'builtin';
