import type { ThreadHookName } from './thread-hook-vocabulary.js';

/** A stored message as thread hooks see it: snake_case columns, as rows of the messages table. */
export interface HookMessage {
  readonly id: string;
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  /** Assistant: the tool calls it asked for, as a JSON string of {@link HookToolCall}s. */
  tool_calls?: string | null;
  /** Tool: the call this message answers. */
  tool_call_id?: string | null;
  /** Tool: how the call ended. */
  tool_status?: 'success' | 'error' | null;
  name?: string | null;
  /** `pending`, `completed` or `failed` once a message update set it; null before. */
  status?: 'pending' | 'completed' | 'failed' | null;
  /** Microseconds since the epoch, once a message update set it; null before. */
  response_completed_at?: number | null;
  /** Microseconds since the epoch. */
  created_at: number;
  [field: string]: unknown;
}

/** A message about to be sent to a model provider. */
export interface LLMMessage {
  role: string;
  /** A string for text, an array for multimodal parts. */
  content?: string | null | unknown[];
  tool_calls?: unknown;
  tool_call_id?: string;
  name?: string;
  reasoning_content?: string;
  [field: string]: unknown;
}

/** A tool call as thread hooks see it. */
export interface HookToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    /** The arguments as a JSON string (during `tool_call_started` possibly empty or an incomplete fragment). */
    readonly arguments: string;
  };
}

/** A tool's result as thread hooks see it. */
export type HookToolResult = HookToolSuccess | HookToolFailure;

export interface HookToolSuccess {
  status: 'success';
  result?: string;
  [field: string]: unknown;
}

export interface HookToolFailure {
  status: 'error';
  error?: string;
  stack?: string;
  [field: string]: unknown;
}

/** Why a thread hook is active: the prompt, the agent, or the enabled direct child relationship that selected it. */
export interface HookExecutionContext {
  readonly source:
    | { readonly kind: 'prompt'; readonly name: string }
    | { readonly kind: 'agent'; readonly name: string }
    | { readonly kind: 'child'; readonly name: string; readonly agentId: string };
}

/** What a running execution holds (null at rest). */
export interface ExecutionState {
  readonly operationId: string;
  readonly stepCount: number;
}

/** `getMessages`' options and result. */
export interface GetMessagesOptions {
  /** At most this many, the newest. */
  limit?: number;
  /** Skip this many of the newest first. */
  offset?: number;
}

export interface MessagesResult {
  messages: HookMessage[];
  total: number;
  hasMore: boolean;
}

/** A message a hook or tool adds to the thread. */
export interface InjectMessageInput {
  role: 'system' | 'user' | 'assistant';
  content: string;
  name?: string;
}

/** The execution context every thread hook gets first. */
export interface ThreadState {
  readonly threadId: string;
  readonly agentId: string;
  readonly userId: string | null;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** Null at rest. */
  readonly execution: ExecutionState | null;
  /** Storage for the current execution only. */
  readonly context: Record<string, unknown>;
  getMessages(options?: GetMessagesOptions): Promise<MessagesResult>;
  /** Stores a message (through `before_create_message`); rejects with a hook's error, storing nothing. */
  injectMessage(input: InjectMessageInput): Promise<HookMessage>;
  /** Updates a stored message (through `before_update_message`); rejects with a hook's error, storing nothing. */
  updateMessage(messageId: string, updates: Record<string, unknown>): Promise<HookMessage>;
  /** Queues a tool call to run after the current step. */
  queueTool(toolName: string, args: Record<string, unknown>): void;
  /** Runs a tool now and returns its result (no tool hooks). */
  invokeTool(toolName: string, args: Record<string, unknown>): Promise<HookToolResult>;
  /** Sends a thread event to connected clients. */
  emit(event: string, data: unknown): void;
  getValue<T = unknown>(key: string): Promise<T | undefined>;
  setValue(key: string, value: unknown): Promise<void>;
}

/**
 * What user-scope hooks get in place of a {@link ThreadState}: one user, and
 * the values kept for that user across threads and agents.
 */
export interface UserState {
  readonly userId: string;
  /** The value under `key` (a fresh copy), or undefined. Rejects with USER_VALUE_INVALID for a bad key. */
  getValue<T = unknown>(key: string): Promise<T | undefined>;
  /**
   * Stores a JSON value under `key` (`undefined` removes it); when the stored
   * value changed, the agent's `user_value_changed` hooks run before this
   * resolves. Rejects with USER_VALUE_INVALID, storing nothing, for a bad key
   * or a value that is not JSON, nests deeper than 64 levels or is over
   * 65,536 bytes of JSON.
   */
  setValue(key: string, value: unknown): Promise<void>;
}

/** A client of the user: one connection to a conversation stream (user_client_attached / user_client_detached). */
export interface UserClient {
  /** Unique per connection: a reconnect is a new client. */
  readonly clientId: string;
  /** The agent whose conversation stream the client reads. */
  readonly agentId: string;
  /** The stream's thread. */
  readonly threadId: string;
  /** When the stream opened (ISO 8601). */
  readonly connectedAt: string;
}

/** One change of a user's values (user_value_changed), named as the web's StorageEvent names them. */
export interface UserValueChange {
  readonly key: string;
  /** The value now stored; undefined when it was removed. */
  readonly newValue: unknown;
  /** The value it replaced; undefined when there was none. */
  readonly oldValue: unknown;
}

type Maybe<T> = T | null | undefined | void;
type Awaitable<T> = T | Promise<T>;

/** The `execute` signature of each hook. */
export interface ThreadHookSignatures {
  after_thread_created: (state: ThreadState, context: HookExecutionContext) => Awaitable<void>;
  after_subagent_created: (state: ThreadState, childState: ThreadState, context: HookExecutionContext) => Awaitable<void>;
  after_system_message: (state: ThreadState, systemMessage: string, context: HookExecutionContext) => Awaitable<Maybe<string>>;
  filter_messages: (state: ThreadState, rows: HookMessage[], context: HookExecutionContext) => Awaitable<Maybe<HookMessage[]>>;
  prefilter_llm_history: (state: ThreadState, messages: LLMMessage[], context: HookExecutionContext) => Awaitable<Maybe<LLMMessage[]>>;
  before_create_message: (state: ThreadState, message: HookMessage, context: HookExecutionContext) => Awaitable<Maybe<HookMessage>>;
  after_create_message: (state: ThreadState, message: HookMessage, context: HookExecutionContext) => Awaitable<void>;
  before_update_message: (state: ThreadState, messageId: string, updates: Record<string, unknown>, context: HookExecutionContext) => Awaitable<Maybe<Record<string, unknown>>>;
  after_update_message: (state: ThreadState, message: HookMessage, context: HookExecutionContext) => Awaitable<void>;
  before_store_tool_result: (state: ThreadState, toolCall: HookToolCall, toolResult: HookToolResult, context: HookExecutionContext) => Awaitable<Maybe<HookToolResult>>;
  after_tool_call_success: (state: ThreadState, call: HookToolCall, result: HookToolSuccess, context: HookExecutionContext) => Awaitable<Maybe<HookToolResult>>;
  after_tool_call_failure: (state: ThreadState, call: HookToolCall, result: HookToolFailure, context: HookExecutionContext) => Awaitable<Maybe<HookToolResult>>;
  tool_call_started: (state: ThreadState, toolCall: HookToolCall, progress: string | undefined, context: HookExecutionContext) => Awaitable<void>;
  tool_call_done: (state: ThreadState, toolCall: HookToolCall, toolResult: HookToolResult, context: HookExecutionContext) => Awaitable<void>;
  user_client_attached: (user: UserState, client: UserClient) => Awaitable<void>;
  user_client_detached: (user: UserState, client: UserClient) => Awaitable<void>;
  user_value_changed: (user: UserState, change: UserValueChange) => Awaitable<void>;
}

// Every declared hook has a signature and every signature a declared hook (a compile error otherwise).
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
export const SIGNATURES_MATCH_VOCABULARY: Exact<keyof ThreadHookSignatures, ThreadHookName> = true;
