import { HookgateError } from '../../kernel/errors.js';
import type { ToolCall } from '../../kernel/messages.js';
import type { ModelResponse } from '../../kernel/model.js';
import type { ToolNameMap } from '../../kernel/model-tool-names.js';

/** Token counts as the wire carries them; compatible servers may omit any of them. */
export interface WireUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  total_tokens?: number | null;
}

/** A tool call as it came over the wire: function name and raw JSON arguments. */
export interface RawToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What a streamed or a plain JSON answer boils down to before mapping. */
export interface RawCompletion {
  text: string;
  toolCalls: RawToolCall[];
  finishReason: string | null | undefined;
  usage: WireUsage | null | undefined;
}

/**
 * Turns a wire answer into a ModelResponse: function names back to hookgate
 * tools, arguments parsed, usage filled (missing counts are 0; a missing total
 * is the sum). When tool calls are present the finish reason is `tool_calls`
 * even if the server said `stop` (some compatible servers do). Throws
 * MODEL_FAILED naming the tool when arguments are not a JSON object.
 */
export function toModelResponse(raw: RawCompletion, names: ToolNameMap): ModelResponse {
  const toolCalls: ToolCall[] = raw.toolCalls.map((c) => {
    const ref = names.fromName(c.name);
    return { id: c.id, identifier: ref.identifier, apiName: ref.apiName, args: parseArguments(c, `${ref.identifier}/${ref.apiName}`) };
  });
  const promptTokens = raw.usage?.prompt_tokens ?? 0;
  const completionTokens = raw.usage?.completion_tokens ?? 0;
  return {
    text: raw.text,
    toolCalls,
    usage: { promptTokens, completionTokens, totalTokens: raw.usage?.total_tokens ?? promptTokens + completionTokens },
    finishReason: toolCalls.length > 0 ? 'tool_calls' : mapFinishReason(raw.finishReason),
  };
}

export function mapFinishReason(reason: string | null | undefined): ModelResponse['finishReason'] {
  switch (reason) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    default:
      return 'other';
  }
}

function parseArguments(call: RawToolCall, toolLabel: string): Record<string, unknown> {
  // Some servers send an empty string for a tool without parameters.
  if (call.arguments.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.arguments);
  } catch (err) {
    throw new HookgateError('MODEL_FAILED', `the model sent arguments for tool ${toolLabel} (call ${call.id}) that are not valid JSON`, {
      cause: err,
      details: { tool: toolLabel, toolCallId: call.id, argumentsLength: call.arguments.length },
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HookgateError('MODEL_FAILED', `the model sent arguments for tool ${toolLabel} (call ${call.id}) that are not a JSON object`, {
      details: { tool: toolLabel, toolCallId: call.id },
    });
  }
  return parsed as Record<string, unknown>;
}
