import type { AgentDefinition } from '../agent-definition.js';
import type { HookBus } from '../hooks/hook-bus.js';
import type { Logger } from '../logger.js';
import type { Message, ToolCall, ToolResult } from '../messages.js';
import type { MessageRecord, NewMessage, OperationRecord, Store } from '../store.js';

/**
 * The seam between the step loop and document 003's thread hooks. The kernel
 * never imports the plugin that implements them (plugins/thread-hooks): it
 * asks the `ThreadHooks` token's service to open the hooks of an operation,
 * once when the operation is started or loaded, and keeps what it answers on
 * the running operation. `undefined` means the operation selects no thread
 * hook: then the step loop does nothing more per step (one property check).
 */

/**
 * Which write of the runtime a message is, for the per-write error rules of
 * document 003 ("Error Handling"):
 * - `prompt`: the message an operation starts with (a sent message): a
 *   prevented one stores nothing, starts no turn and fails the run with
 *   `message_hook_error`;
 * - `queued`: a delivery joining a running operation at a turn boundary (a
 *   queued message): a prevented one is dropped alone;
 * - `model_step`, `tool_result`, `summary`: rows an execution cannot go on
 *   without: a failing pre-write hook is logged and the write continues with
 *   the last good value;
 * - `injected`: `state.injectMessage()`: the call rejects with the hook error;
 * - `signal`: the source's narration (resource signals) and other
 *   runtime-made notices: a prevented one is skipped, the run goes on;
 * - `held`: a message a tool-result hook injected, through
 *   `before_create_message` when it was injected, stored after the turn's
 *   tool results (its hooks do not run again at the commit).
 */
export type MessageWriteKind = 'prompt' | 'queued' | 'model_step' | 'tool_result' | 'summary' | 'injected' | 'signal' | 'held';

/** The writes that continue with the last good value when a `before_*` hook throws. */
export const CONTINUING_WRITES: ReadonlySet<MessageWriteKind> = new Set<MessageWriteKind>(['model_step', 'tool_result', 'summary']);

/** A thread hook as code hands it over (`defineHook`'s result); the plugin validates it. */
export interface ThreadHookLike {
  readonly hook: string;
  readonly id: string;
  readonly execute: (...args: never[]) => unknown;
}

/**
 * What the runtime gives the thread hooks of one operation: its identity,
 * the kernel's bus and store, and the writes hooks may make through the
 * runtime (so an injected message takes the same path, with the same hooks
 * and the same compare-and-swap, as the step loop's own writes).
 */
export interface ThreadHookHost {
  /** The operation (read-only use: the record object is the runtime's, updated in place by every commit). */
  readonly record: OperationRecord;
  /** The agent of the current step. */
  agent(): AgentDefinition;
  /** A defined agent by id (a sub-agent's definition, for the hooks its relationship requires), if any. */
  agentDefinition(agentId: string): AgentDefinition | undefined;
  /** Hooks passed in code to execAgent (live in this process only). */
  readonly codeHooks: readonly ThreadHookLike[];
  readonly bus: HookBus;
  readonly store: Store;
  readonly logger: Logger;
  /** The active conversation as the runtime holds it (summaries first). */
  messages(): readonly MessageRecord[];
  /** Whether a step of the operation runs now (`ThreadState.execution`). */
  stepIndex(): number;
  /**
   * Stores a message (after `before_create_message`, `injected` rules), then runs `after_create_message`.
   * Called from a tool-result hook, the message is held and stored right after the results of its
   * turn's tool calls (never between a tool call and its result); it resolves with its id then.
   */
  injectMessage(message: NewMessage): Promise<Message & { id: string; createdAt?: string }>;
  /** Sends a thread event to connected clients (`ThreadState.emit`). */
  emit(event: string, data: unknown): void;
  /**
   * `state.invokeTool()`: runs a tool now through the gate and result control
   * (thread-tool-invocation.ts), without tool hooks, storing nothing. A denial
   * resolves as a failed result; a malformed request rejects (THREAD_HOOK_INVALID).
   */
  invokeTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** `state.queueTool()`: queues a call to run after the current step (queued-tool-calls.ts); throws for a malformed request or an idle thread. */
  queueTool(name: string, args: Record<string, unknown>): void;
  /**
   * Updates a stored message of the thread (`ThreadState.updateMessage`):
   * `before_update_message` (a throw rejects, nothing stored), the store's
   * update, then `after_update_message` (failures logged, the update stays).
   */
  updateMessage(messageId: string, updates: Record<string, unknown>): Promise<MessageRecord>;
}

/**
 * The thread hooks of one operation, as the runtime calls them. Each method
 * runs one hook type's chain (in the documented order, `null` / `undefined`
 * keeping the value) and applies the error rule of the write it is called for.
 */
export interface ThreadHookCalls {
  /** Whether any selected hook is of this type (a caller skips building arguments otherwise). */
  has(hook: string): boolean;
  /**
   * `before_create_message` for one write: resolves to the message to store.
   * Rejects with the hook's error when the write is prevented (every kind but
   * the continuing ones, which keep the last good value). Synchronous while
   * every selected handler is (the step loop awaits only a promise).
   */
  beforeCreateMessage(message: NewMessage, kind: MessageWriteKind): NewMessage | Promise<NewMessage>;
  /** `after_create_message`: failures are logged; the stored message stays. */
  afterCreateMessage(message: MessageRecord): void | Promise<void>;
  /**
   * `before_update_message` for one update: resolves to the fields to write.
   * Rejects with the hook's error (the remaining hooks of the type do not
   * run); every update path refuses the write then.
   */
  beforeUpdateMessage(messageId: string, updates: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** `after_update_message` with the message as stored: failures are logged; the update stays. */
  afterUpdateMessage(message: MessageRecord): Promise<void>;
  /** `after_subagent_created` on this (the parent's) thread, `child` being the child thread's hook host. */
  afterSubagentCreated(child: ThreadHookHost): Promise<void>;
  /** `after_thread_created`, before the operation's first step. */
  afterThreadCreated(): Promise<void>;
  /** `after_system_message`: the rendered system message, possibly replaced. */
  afterSystemMessage(system: string): Promise<string>;
  /** `filter_messages` over one snapshot of the eligible persisted history. */
  filterMessages(rows: readonly MessageRecord[]): Promise<MessageRecord[]>;
  /** `prefilter_llm_history`; rejects with an error carrying `block: true` when a hook blocks the request. */
  prefilterLlmHistory(messages: readonly Message[]): Promise<Message[]>;
  /**
   * `tool_call_started` for one call of a model response, with its progress
   * string. Resolves when the hooks finished or the started-wait elapsed
   * (the hooks are not cancelled then); never rejects (failures are logged).
   * Returns nothing, without a promise or a timer, when every hook returned synchronously.
   */
  toolCallStarted(call: ToolCall, progress: string | undefined): void | Promise<void>;
  /** `tool_call_done` with the result the call produced (after the gate's result control); never rejects. Synchronous while every hook is. */
  toolCallDone(call: ToolCall, result: ToolResult): void | Promise<void>;
  /**
   * `after_tool_call_success` or `after_tool_call_failure` (by `result.success`),
   * then `before_store_tool_result`: the result to store. A hook changes the
   * text only (`result` of a success, `error` of a failure), never the status;
   * a failing or invalid hook is logged and the last good value kept. Never rejects.
   * Synchronous while every hook is (the caller awaits only a promise).
   */
  toolResult(call: ToolCall, result: ToolResult): ToolResult | Promise<ToolResult>;
  /** Forgets the operation's registrations on the bus (it finished or left this process). */
  close(): void;
}

/**
 * What the user scope (document 003's `user_client_attached`,
 * `user_client_detached`, `user_value_changed`) needs of the runtime: no
 * operation and no thread, only the bus, the store (the user values) and the
 * agents' definitions (which hooks an agent selects).
 */
export interface UserHookHost {
  readonly bus: HookBus;
  readonly store: Store;
  readonly logger: Logger;
  /** A defined agent by id (an agent file's `threadHooks` and `subagents`), if any. */
  agentDefinition(agentId: string): AgentDefinition | undefined;
}

/** One connection of a user's client to a conversation stream (a `UserClient` as user-scope hooks get it). */
export interface UserClientInfo {
  /** Unique per connection: a reconnect is a new client. */
  readonly clientId: string;
  /** The agent whose conversation stream the client reads. */
  readonly agentId: string;
  /** The stream's thread. */
  readonly threadId: string;
  /** When the stream opened (ISO). */
  readonly connectedAt: string;
}

/**
 * The user-scope hooks one agent selects, for one user (`openUser`). The
 * hooks are observers: they cannot veto; a failing one is logged with the
 * `[Hooks] ✗` prefix and the others run.
 */
export interface UserScopeCalls {
  readonly userId: string;
  /** Whether the agent selects any hook of this type (a caller skips its work otherwise). */
  has(hook: string): boolean;
  /** `user_client_attached`; never rejects. */
  clientAttached(client: UserClientInfo): Promise<void>;
  /** `user_client_detached`; never rejects. */
  clientDetached(client: UserClientInfo): Promise<void>;
  /** The user's value under `key` (a copy), or undefined. USER_VALUE_INVALID for a bad key. */
  getValue(key: string): Promise<unknown>;
  /**
   * Stores the value (`undefined` removes it), then, when the stored value
   * changed, runs `user_value_changed` (awaited; a failing hook does not undo
   * the write). Rejects with USER_VALUE_INVALID (nothing stored) or the
   * store's error (then no hook runs).
   */
  setValue(key: string, value: unknown): Promise<void>;
}

/** What a `ThreadHooks` provider does (plugins/thread-hooks). */
export interface ThreadHooksService {
  /**
   * Opens the hooks an operation selects (its prompt's list, its agent's
   * list and code hooks, the hooks its enabled sub-agents require), resolved
   * from the hooks this process knows. `undefined` when none is selected.
   * Throws THREAD_HOOK_MISSING when a selected id resolves to no hook here
   * (a hook passed in code before a restart), THREAD_HOOK_INVALID for a bad
   * code hook. Synchronous: nothing is read until a hook runs.
   */
  open(host: ThreadHookHost): ThreadHookCalls | undefined;
  /**
   * Adds hooks an agent has in code (an agent function's `threadHooks`
   * static): selected as that agent's hooks for every operation it runs.
   */
  addAgentHooks(agentId: string, hooks: readonly ThreadHookLike[], source: string): void;
  /**
   * The user scope of `userId` for the hooks agent `agentId` selects (its
   * file's `threadHooks`, its code hooks, the `parentThreadHooks` of its
   * sub-agents; only the user-scope ones run). Synchronous; throws
   * USER_VALUE_INVALID for a bad user id. A selected id this process knows
   * no hook for is logged and the agent's user-scope hooks do not run.
   */
  openUser(host: UserHookHost, agentId: string, userId: string): UserScopeCalls;
}
