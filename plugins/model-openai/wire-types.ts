/**
 * The parts of the OpenAI Chat Completions wire format this plugin reads and
 * writes. Fields are optional where compatible servers are known to omit them.
 */

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface WireTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface WireRequestBody {
  model: string;
  messages: WireMessage[];
  tools?: WireTool[];
  stream: boolean;
  stream_options?: { include_usage: boolean };
  temperature?: number;
  max_tokens?: number;
}

export interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

/** One `tool_calls` entry of a streamed delta; everything but `index` may be missing. */
export interface WireToolCallDelta {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/** One `chat.completion.chunk` (an SSE `data:` payload). */
export interface WireChunk {
  choices?: Array<{
    index?: number;
    delta?: { content?: string | null; refusal?: string | null; tool_calls?: WireToolCallDelta[] };
    finish_reason?: string | null;
  }>;
  usage?: WireUsage | null;
  error?: { message?: string };
}

/** A non-streaming `chat.completion` answer. */
export interface WireCompletion {
  choices?: Array<{
    message?: {
      content?: string | null;
      refusal?: string | null;
      tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: WireUsage | null;
  error?: { message?: string };
}
