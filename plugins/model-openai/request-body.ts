import { HookgateError } from '../../kernel/errors.js';
import type { Message } from '../../kernel/messages.js';
import type { ModelRequest, ToolSpec } from '../../kernel/model.js';
import type { ToolNameMap } from './tool-names.js';
import type { WireMessage, WireRequestBody, WireTool } from './wire-types.js';

/**
 * Maps hookgate messages to Chat Completions messages. A `summary` (written by
 * compaction) goes as a system message; assistant tool calls carry their
 * function names and JSON arguments; tool results answer by `tool_call_id`.
 * Throws MODEL_FAILED for a tool message without `toolCallId`.
 */
export function toWireMessages(messages: readonly Message[], names: ToolNameMap): WireMessage[] {
  return messages.map((m, position): WireMessage => {
    switch (m.role) {
      case 'system':
      case 'summary':
        return { role: 'system', content: m.content };
      case 'user':
        return { role: 'user', content: m.content };
      case 'assistant': {
        const calls = m.toolCalls ?? [];
        if (calls.length === 0) return { role: 'assistant', content: m.content };
        return {
          role: 'assistant',
          content: m.content === '' ? null : m.content,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: names.toName(c), arguments: JSON.stringify(c.args ?? {}) },
          })),
        };
      }
      case 'tool':
        if (!m.toolCallId) {
          throw new HookgateError('MODEL_FAILED', `message ${position} has role "tool" but no toolCallId; OpenAI needs it to match the call`, {
            details: { position },
          });
        }
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    }
  });
}

/** Offered tools as `function` tools; a schema without `type` is taken as an object schema. */
export function toWireTools(tools: readonly ToolSpec[], names: ToolNameMap): WireTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: {
      name: names.toName(t),
      description: t.description,
      parameters: typeof t.parameters?.type === 'string' ? t.parameters : { type: 'object', properties: {}, ...t.parameters },
    },
  }));
}

/** The JSON body of `POST /chat/completions`; always asks for a stream with usage in the last chunk. */
export function buildRequestBody(request: ModelRequest, model: string, names: ToolNameMap): WireRequestBody {
  const body: WireRequestBody = {
    model,
    messages: toWireMessages(request.messages, names),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) body.tools = toWireTools(request.tools, names);
  if (request.temperature !== undefined) body.temperature = request.temperature;
  // max_tokens rather than max_completion_tokens: every compatible server knows it.
  if (request.maxOutputTokens !== undefined) body.max_tokens = request.maxOutputTokens;
  return body;
}
