import type {
  Base64ImageSource,
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { HookgateError } from '../../kernel/errors.js';
import type { Message } from '../../kernel/messages.js';
import type { ModelRequest, ToolSpec } from '../../kernel/model.js';
import type { ToolNameMap } from '../../kernel/model-tool-names.js';

/** The Messages API's `system` and `messages` for a hookgate conversation. */
export interface AnthropicConversation {
  system: TextBlockParam[];
  messages: MessageParam[];
}

/**
 * Maps hookgate messages to the Messages API, which has no system role in its
 * turns: `system` messages and compaction `summary` messages go, in order, into
 * the top-level `system` blocks. The rest alternate as the API wants them:
 * assistant text and tool calls become `text` and `tool_use` blocks (input is
 * the arguments object); tool results become `tool_result` blocks (with
 * `is_error` for a failed call) in a user turn, all results of one assistant
 * turn together; consecutive user-side messages share one user turn. Empty
 * text is left out (the API refuses empty text blocks). Throws MODEL_FAILED
 * for a tool message without `toolCallId`.
 */
export function toAnthropicConversation(messages: readonly Message[], names: ToolNameMap): AnthropicConversation {
  const system: TextBlockParam[] = [];
  const out: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) (last.content as ContentBlockParam[]).push(...blocks);
    else out.push({ role, content: blocks });
  };
  messages.forEach((m, position) => {
    switch (m.role) {
      case 'system':
      case 'summary':
        if (m.content !== '') system.push({ type: 'text', text: m.content });
        return;
      case 'user':
        // Images first, then the text (the order Anthropic's guide recommends).
        push('user', [
          ...(m.images ?? []).map((i): ContentBlockParam => ({ type: 'image', source: { type: 'base64', media_type: i.mediaType as Base64ImageSource['media_type'], data: i.data } })),
          ...textBlocks(m.content),
        ]);
        return;
      case 'assistant':
        push('assistant', [
          ...textBlocks(m.content),
          ...(m.toolCalls ?? []).map((c): ContentBlockParam => ({ type: 'tool_use', id: c.id, name: names.toName(c), input: c.args ?? {} })),
        ]);
        return;
      case 'tool': {
        if (!m.toolCallId) {
          throw new HookgateError('MODEL_FAILED', `message ${position} has role "tool" but no toolCallId; Anthropic needs it to match the tool_use block`, {
            details: { position },
          });
        }
        const result: ToolResultBlockParam = { type: 'tool_result', tool_use_id: m.toolCallId, content: m.content };
        if (m.toolResult && m.toolResult.success === false) result.is_error = true;
        push('user', [result]);
        return;
      }
    }
  });
  return { system, messages: out };
}

/** Offered tools with their JSON Schemas as `input_schema` (always `type: object`, as the API requires). */
export function toAnthropicTools(tools: readonly ToolSpec[], names: ToolNameMap): Tool[] {
  return tools.map((t) => ({
    name: names.toName(t),
    description: t.description,
    input_schema: (t.parameters?.type === 'object' ? t.parameters : { properties: {}, ...t.parameters, type: 'object' }) as Tool.InputSchema,
  }));
}

/**
 * The body of `POST /v1/messages`: always a stream; `max_tokens` from the
 * request, else the configured default. `temperature` is not sent: the
 * Messages API deprecated it and the SDK (1.x) no longer has the parameter.
 */
export function buildRequestBody(request: ModelRequest, model: string, defaultMaxTokens: number, names: ToolNameMap): MessageCreateParamsStreaming {
  const { system, messages } = toAnthropicConversation(request.messages, names);
  const body: MessageCreateParamsStreaming = { model, max_tokens: request.maxOutputTokens ?? defaultMaxTokens, messages, stream: true };
  if (system.length > 0) body.system = system;
  if (request.tools.length > 0) body.tools = toAnthropicTools(request.tools, names);
  return body;
}

function textBlocks(text: string): TextBlockParam[] {
  return text === '' ? [] : [{ type: 'text', text }];
}
