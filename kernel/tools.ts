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
  /**
   * Optional: the canonical form of the arguments that name sandbox paths,
   * URLs or shell commands, computed the way `execute` would use them. Called
   * by the gate after the arguments passed the input schema and before any
   * policy; policies see the result as `canonical`. Must not have side effects;
   * may be async; a throw denies the call (fail closed).
   */
  canonicalArgs?(call: { identifier: string; apiName: string; args: Readonly<Record<string, unknown>> }): CanonicalArgs | Promise<CanonicalArgs>;
}

/**
 * What one argument of a tool call really names, as the tool will use it:
 * policies match on this, not on the model's spelling (`app//.env/.` and
 * `app/.env` are one file). Produced by `ToolSource.canonicalArgs`.
 * Fields beyond `kind` and `raw` are present only when they could be derived.
 */
export interface CanonicalArg {
  kind: 'path' | 'url' | 'command';
  /** The argument as the model sent it. */
  raw: unknown;
  [field: string]: unknown;
}

/** Canonical forms by argument name (only the arguments a source declares as paths, URLs or commands). */
export type CanonicalArgs = Readonly<Record<string, CanonicalArg>>;
