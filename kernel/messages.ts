/** Conversation data shared by the runtime, the store and model providers. */

export interface ToolCall {
  /**
   * The call's identity. From a model provider: the model's own id; once the
   * runtime has the call (every stored or gated call): an id the runtime
   * minted, unique, to which approvals, `ask`, deferred completions and the
   * stored result are bound.
   */
  readonly id: string;
  /** The id the model sent (models may omit or reuse ids, so nothing is bound to it). */
  readonly nativeId?: string;
  /** Set by the runtime when the arguments cannot be used (not an object, too deep, not matching the tool's input schema). */
  readonly argumentError?: string;
  readonly identifier: string;
  readonly apiName: string;
  readonly args: Record<string, unknown>;
}

/** What a tool call produced, as the model and `afterToolCall` see it. */
export interface ToolResult {
  content: string;
  success: boolean;
  executionTime?: number;
  /** A classification such as `hook_denied`, `hook_control_error`, `tool_error`, `human_rejected`. */
  error?: string;
  state?: { type: string; reason?: string; [key: string]: unknown };
  /** Structured data about the call (sent to webhooks as it is). */
  data?: unknown;
  args?: unknown;
  /**
   * A Work registration intent. A skill's (`type: 'skill'`) carries the raw,
   * untruncated payload in `data` / `args` for in-process Work registration;
   * notification webhooks get it with `data: null` and no `args`.
   */
  workRegistration?: { type: string; data?: unknown; args?: unknown; [key: string]: unknown };
  /**
   * Set by a tool whose successful result ends the operation once the calls
   * of its turn are answered (document 001's injected `finish` tool): no
   * further model turn; the operation finishes `done`. Honoured only for a
   * result the tool itself returned (not a mock, a denial or a tool error).
   */
  endsOperation?: boolean;
}

/** Token counts and cost. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cost: number;
}

/** No usage. */
export const ZERO_USAGE: Usage = Object.freeze({ promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 });

/** `a + b`, field by field. */
export function addUsage(a: Usage, b: Partial<Usage>): Usage {
  return {
    promptTokens: a.promptTokens + (b.promptTokens ?? 0),
    completionTokens: a.completionTokens + (b.completionTokens ?? 0),
    totalTokens: a.totalTokens + (b.totalTokens ?? 0),
    cost: a.cost + (b.cost ?? 0),
  };
}

/** Who wrote a message; `summary` replaces compacted messages. */
export type MessageRole = 'system' | 'user' | 'assistant' | 'tool' | 'summary';

/** An image a user message carries to the model: base64 data with its `image/*` media type. */
export interface MessageImage {
  readonly mediaType: string;
  /** Base64 (standard alphabet, padded), without a `data:` prefix. */
  readonly data: string;
}

/** A message in the conversation, as stored and as given to the model. */
export interface Message {
  role: MessageRole;
  content: string;
  /** user: images that go to the model with the text (providers that take images send them as image parts). */
  images?: readonly MessageImage[];
  /** assistant: the tool calls it asked for. */
  toolCalls?: ToolCall[];
  /** tool: which call this answers. */
  toolCallId?: string;
  /** tool: the full result. */
  toolResult?: ToolResult;
}

/** A rough, provider-independent token estimate: about four characters a token. */
export function estimateTokens(messages: readonly Message[]): number {
  let chars = 0;
  for (const m of messages) chars += estimatedChars(m);
  return Math.ceil(chars / 4);
}

/**
 * What one image counts for in {@link estimateTokens}, in characters (about
 * 1,600 tokens: what the hosted models charge for a mid-sized image; the
 * base64 length says nothing about it).
 */
export const IMAGE_ESTIMATE_CHARS = 6_400;

/** What one message adds to `estimateTokens`, in characters (four to a token). */
export function estimatedChars(m: Message): number {
  return m.content.length + 4 + (m.toolCalls ? JSON.stringify(m.toolCalls).length : 0) + (m.images ? m.images.length * IMAGE_ESTIMATE_CHARS : 0);
}
