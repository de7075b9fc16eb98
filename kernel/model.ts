import type { Message, ToolCall } from './messages.js';

/** A tool as offered to a model. */
export interface ToolSpec {
  identifier: string;
  apiName: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  /**
   * A short top-level string argument whose value says what the call does
   * (document 003's `progressArgument`): read from the call's arguments for
   * the `tool_call_started` event and hooks (tool-call-progress.ts).
   */
  progressArgument?: string;
}

/** One model call: the conversation, the tools offered, and what it is for (a turn or a compaction summary). */
export interface ModelRequest {
  /** The provider-specific model name from the agent file (may be empty for scripted). */
  model: string;
  /** `turn` for an agent step, `summarize` for compaction. */
  purpose: 'turn' | 'summarize';
  /**
   * Instructions, then the conversation, read-only and valid for this call: the runtime keeps one array per
   * conversation and extends it at the next turn, so a provider that keeps a request past the call copies it.
   */
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  signal: AbortSignal;
  /** Called with each streamed text piece, when the provider streams. */
  onTextDelta?: (delta: string) => void;
  /** Which operation asks (for deterministic providers that keep a position per operation). */
  operationId: string;
  /** Number of model turns this operation already took (scripted providers replay by it). */
  turnIndex: number;
  /** The agent file's `model` block (provider-specific options such as a scripted model's turns). */
  modelOptions?: Record<string, unknown>;
  temperature?: number;
  maxOutputTokens?: number;
}

/** A model's answer: text, tool calls, usage. */
export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
  finishReason: 'stop' | 'tool_calls' | 'length' | 'other';
}

/** A model provider; its `name` is what agent files put in `model.provider`. */
export interface ModelProvider {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}
