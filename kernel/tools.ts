import type { ToolSpec } from './model.js';

/** A tool a `ToolSource` lists: `identifier/apiName`, description, JSON Schema parameters, and its source. */
export interface ToolDefinition extends ToolSpec {
  /** Where the tool comes from: `builtin`, `sandbox`, `mcp:<server>`... */
  toolSource: string;
}

/** What `ToolSource.execute` gets besides the arguments: the operation, the call identity, an abort signal. */
export interface ToolExecutionContext {
  operationId: string;
  /** The native tool call id: what a deferred tool passes to `kernel.completeToolCall()`. */
  toolCallId: string;
  agentId: string;
  userId?: string;
  signal: AbortSignal;
  /**
   * Progress logging for a long-running tool: each line becomes a `tool_log`
   * operation event attributed to this call, streamed to event listeners,
   * never stored and never part of the result the model sees. Synchronous,
   * never throws; lines written after the call returned are dropped. The
   * runtime always sets it; absent when a source is called outside a run.
   */
  log?: ToolLog;
}

/** The levels of a tool's progress lines. */
export type ToolLogLevel = 'info' | 'warn' | 'error';

/** Writes one progress line of a tool call (see ToolExecutionContext.log). */
export type ToolLog = (level: ToolLogLevel, message: string, attributes?: Record<string, unknown>) => void;

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
 * A tool call that delegates: instead of answering, the tool names an agent
 * to run, and the runtime runs the call as a sub-agent (the `call_agent`
 * path, after this call already passed the whole gate): `beforeCallAgent`,
 * a child operation with `parentOperationId` that inherits the caller's
 * hooks (so its own tool calls pass the same gate), `afterCallAgent`, and
 * `onCallAgentError` when it cannot start or ends in anything but `done`.
 * The parent parks (`waiting_tool`) and the child's last text becomes the
 * call's result, through result control like any deferred result.
 */
export interface DelegatedToolResult {
  delegate: {
    /** The child's agent (the ref its agent source resolves). */
    agentId: string;
    /** The child's agent source; default: the static source. */
    agentSource?: string;
    /** The child's first user message. */
    prompt: string;
  };
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
  ): Promise<string | { content: string; data?: unknown; success?: boolean; endsOperation?: boolean } | DeferredToolResult | DelegatedToolResult>;
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
 * `app/.env` are one file). Produced by `ToolSource.canonicalArgs`, or derived
 * by the policy engine from well-known argument names when the source gives
 * none (policies/README.md, "Canonical arguments").
 * Fields beyond `kind` and `raw` are present only when they could be derived.
 */
export type CanonicalArg = CanonicalPath | CanonicalUrl | CanonicalCommand;

interface CanonicalBase {
  /** The argument as the model sent it. */
  raw: unknown;
  [field: string]: unknown;
}

/** A file path. */
export interface CanonicalPath extends CanonicalBase {
  kind: 'path';
  /**
   * `/`-separated, normalized (no `.`, `..`, `//` or trailing `/`). From a
   * source that resolves it (builtin fs tools): relative to the sandbox root
   * (`.` for the root) with symlinks resolved; derived: the argument
   * normalized lexically. Absent when the path is outside the sandbox.
   */
  path?: string;
  /** The host path, symlinks resolved; only from a source that resolves paths. */
  absolute?: string;
}

/** The parts of a URL as Node's WHATWG `URL` parser (what `fetch` uses) reads it. */
export interface CanonicalUrlParts {
  href?: string;
  /** Lowercase, without the colon: `https`. */
  scheme?: string;
  /** The host a client connects to: lowercase, no brackets, no trailing dot; IPv4 in dotted decimal. */
  host?: string;
  /** The effective port (the scheme's default when none is written). */
  port?: number;
  /**
   * When the host is an IP literal: the IPv4 address it reaches (also for
   * IPv4-mapped, -compatible and NAT64 IPv6 forms such as `::ffff:a9fe:a9fe`),
   * else the IPv6 address.
   */
  ip?: string;
}

/** A URL; no `href` means Node cannot parse it (a fetch of it fails too). */
export interface CanonicalUrl extends CanonicalBase, CanonicalUrlParts {
  kind: 'url';
}

/** A shell command line. */
export interface CanonicalCommand extends CanonicalBase {
  kind: 'command';
  /** Shell words with quotes and escapes removed; operators (`|`, `&&`, `;`, `<(`...) are words of their own. */
  words?: string[];
  /** `words` joined by single spaces: what pack regexes match on. */
  text?: string;
  /** Every `scheme://...` found in the words, parsed as `CanonicalUrl` is. */
  urls?: CanonicalUrlParts[];
}

/** Canonical forms by argument name (only the arguments a source declares as paths, URLs or commands). */
export type CanonicalArgs = Readonly<Record<string, CanonicalArg>>;
