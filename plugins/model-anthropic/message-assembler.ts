import type { Message, RawMessageStreamEvent, StopReason } from '@anthropic-ai/sdk/resources/messages';
import { HookgateError } from '../../kernel/errors.js';
import type { ToolCall } from '../../kernel/messages.js';
import type { ModelResponse } from '../../kernel/model.js';
import type { ToolNameMap } from '../../kernel/model-tool-names.js';

/** A content block as the stream builds it: text, or a tool_use whose input JSON arrives in fragments. */
type OpenBlock = { kind: 'text'; text: string } | { kind: 'tool_use'; id: string; name: string; json: string; startInput: unknown } | { kind: 'other' };

/** Token counts as the Messages API reports them; the stream's `message_delta` may leave any of them null. */
interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/**
 * Collects a Messages API event stream (`message_start`, then
 * `content_block_start` / `content_block_delta` / `content_block_stop` per
 * block, `message_delta`, `message_stop`) into one answer. Text deltas are
 * handed to `onText` as they come; `input_json_delta` fragments are joined per
 * block index, split anywhere; thinking and server-tool blocks are skipped.
 * Usage: `message_start` carries the input counts, `message_delta` the
 * cumulative output count (and input counts when it has them).
 */
export class MessageAssembler {
  private readonly blocks = new Map<number, OpenBlock>();
  private stopReason: StopReason | null = null;
  private usage: WireUsage = {};
  private started = false;
  private stopped = false;

  constructor(private readonly onText: (delta: string) => void) {}

  /** True once `message_stop` arrived. */
  get complete(): boolean {
    return this.stopped;
  }

  push(event: RawMessageStreamEvent): void {
    switch (event.type) {
      case 'message_start':
        this.started = true;
        this.mergeUsage(event.message.usage);
        if (event.message.stop_reason) this.stopReason = event.message.stop_reason;
        return;
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text') {
          this.blocks.set(event.index, { kind: 'text', text: '' });
          if (block.text) this.text(event.index, block.text);
        } else if (block.type === 'tool_use') {
          this.blocks.set(event.index, { kind: 'tool_use', id: block.id, name: block.name, json: '', startInput: block.input });
        } else {
          this.blocks.set(event.index, { kind: 'other' });
        }
        return;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta.type === 'text_delta') this.text(event.index, delta.text);
        else if (delta.type === 'input_json_delta') {
          const block = this.blocks.get(event.index);
          if (block?.kind === 'tool_use') block.json += delta.partial_json;
        }
        return;
      }
      case 'content_block_stop':
        return;
      case 'message_delta':
        if (event.delta.stop_reason) this.stopReason = event.delta.stop_reason;
        this.mergeUsage(event.usage);
        return;
      case 'message_stop':
        this.stopped = true;
        return;
    }
  }

  /** The answer of a whole (non-streamed) `Message`, through the same mapping. */
  static fromMessage(message: Message, names: ToolNameMap): ModelResponse {
    const assembler = new MessageAssembler(() => undefined);
    assembler.started = true;
    assembler.stopped = true;
    assembler.mergeUsage(message.usage);
    assembler.stopReason = message.stop_reason;
    message.content.forEach((block, index) => {
      if (block.type === 'text') assembler.blocks.set(index, { kind: 'text', text: block.text });
      else if (block.type === 'tool_use') assembler.blocks.set(index, { kind: 'tool_use', id: block.id, name: block.name, json: '', startInput: block.input });
    });
    return assembler.result(names);
  }

  /**
   * The ModelResponse: text blocks joined, tool calls in block order mapped back
   * to hookgate tools, usage (prompt tokens = input + cache creation + cache
   * read, as the API bills them), and the finish reason (`tool_calls` whenever
   * a tool call is present). Throws MODEL_FAILED when the stream never started
   * or a tool's input is not a JSON object (naming the tool).
   */
  result(names: ToolNameMap): ModelResponse {
    if (!this.started) throw new HookgateError('MODEL_FAILED', 'the model stream ended without a message_start event');
    let text = '';
    const toolCalls: ToolCall[] = [];
    for (const [, block] of [...this.blocks.entries()].sort(([a], [b]) => a - b)) {
      if (block.kind === 'text') text += block.text;
      else if (block.kind === 'tool_use') {
        const ref = names.fromName(block.name);
        toolCalls.push({ id: block.id, identifier: ref.identifier, apiName: ref.apiName, args: parseInput(block, `${ref.identifier}/${ref.apiName}`) });
      }
    }
    const promptTokens = (this.usage.input_tokens ?? 0) + (this.usage.cache_creation_input_tokens ?? 0) + (this.usage.cache_read_input_tokens ?? 0);
    const completionTokens = this.usage.output_tokens ?? 0;
    return {
      text,
      toolCalls,
      usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens },
      finishReason: toolCalls.length > 0 ? 'tool_calls' : mapStopReason(this.stopReason),
    };
  }

  private text(index: number, piece: string): void {
    const block = this.blocks.get(index);
    if (block?.kind !== 'text' || piece === '') return;
    block.text += piece;
    this.onText(piece);
  }

  /** Later non-null counts win: `message_delta` counts are cumulative. */
  private mergeUsage(usage: WireUsage | null | undefined): void {
    if (!usage) return;
    for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      const value = usage[key];
      if (typeof value === 'number') this.usage[key] = value;
    }
  }
}

/** Messages API stop reasons as hookgate finish reasons. */
export function mapStopReason(reason: StopReason | string | null | undefined): ModelResponse['finishReason'] {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    default:
      return 'other';
  }
}

function parseInput(block: Extract<OpenBlock, { kind: 'tool_use' }>, toolLabel: string): Record<string, unknown> {
  let parsed: unknown = block.startInput ?? {};
  if (block.json.trim() !== '') {
    try {
      parsed = JSON.parse(block.json);
    } catch (err) {
      throw new HookgateError('MODEL_FAILED', `the model sent input for tool ${toolLabel} (tool_use ${block.id}) that is not valid JSON`, {
        cause: err,
        details: { tool: toolLabel, toolCallId: block.id, inputLength: block.json.length },
      });
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HookgateError('MODEL_FAILED', `the model sent input for tool ${toolLabel} (tool_use ${block.id}) that is not a JSON object`, {
      details: { tool: toolLabel, toolCallId: block.id },
    });
  }
  return parsed as Record<string, unknown>;
}
