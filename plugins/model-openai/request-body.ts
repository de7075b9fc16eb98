import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { HookgateError } from '../../kernel/errors.js';
import type { Message } from '../../kernel/messages.js';
import type { ModelRequest, ToolSpec } from '../../kernel/model.js';
import type { ToolNameMap } from '../../kernel/model-tool-names.js';

/**
 * Maps hookgate messages to Chat Completions messages. A `summary` (written by
 * compaction) goes as a system message; assistant tool calls carry their
 * function names and JSON arguments; tool results answer by `tool_call_id`.
 * Throws MODEL_FAILED for a tool message without `toolCallId`.
 */
export function toChatMessages(messages: readonly Message[], names: ToolNameMap): ChatCompletionMessageParam[] {
  return messages.map((m, position): ChatCompletionMessageParam => {
    switch (m.role) {
      case 'system':
      case 'summary':
        return { role: 'system', content: m.content };
      case 'user':
        if (m.images === undefined || m.images.length === 0) return { role: 'user', content: m.content };
        // Images go as data URLs after the text (Chat Completions' image_url parts).
        return {
          role: 'user',
          content: [
            ...(m.content !== '' ? [{ type: 'text' as const, text: m.content }] : []),
            ...m.images.map((i) => ({ type: 'image_url' as const, image_url: { url: `data:${i.mediaType};base64,${i.data}` } })),
          ],
        };
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
export function toChatTools(tools: readonly ToolSpec[], names: ToolNameMap): ChatCompletionFunctionTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: {
      name: names.toName(t),
      description: t.description,
      parameters: typeof t.parameters?.type === 'string' ? t.parameters : { type: 'object', properties: {}, ...t.parameters },
    },
  }));
}

/** The body of `POST /chat/completions`; always asks for a stream with usage in the last chunk. */
export function buildRequestBody(request: ModelRequest, model: string, names: ToolNameMap): ChatCompletionCreateParamsStreaming {
  const body: ChatCompletionCreateParamsStreaming = {
    model,
    messages: toChatMessages(request.messages, names),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) body.tools = toChatTools(request.tools, names);
  if (request.temperature !== undefined) body.temperature = request.temperature;
  // max_tokens rather than max_completion_tokens: every compatible server knows it.
  if (request.maxOutputTokens !== undefined) body.max_tokens = request.maxOutputTokens;
  return body;
}
