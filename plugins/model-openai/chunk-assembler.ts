import type { RawCompletion, RawToolCall } from './completion-result.js';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

type ToolCallDelta = ChatCompletionChunk.Choice.Delta.ToolCall;

/**
 * Collects streamed `chat.completion.chunk`s into one answer. Text deltas are
 * concatenated (and handed to `onText` as they come); tool-call deltas are
 * keyed by `index`, so calls may interleave and their argument fragments may be
 * split anywhere, even mid-token. The id and name usually come in a call's
 * first delta; a repeated identical name is ignored, a different one is taken
 * as a further fragment. Usage comes from whichever chunk carries it last
 * (with `include_usage`, a final chunk with no choices).
 */
export class ChunkAssembler {
  private text = '';
  private readonly calls = new Map<number, RawToolCall>();
  private lastIndex = -1;
  private finishReason: string | null | undefined;
  private usage: RawCompletion['usage'];

  constructor(private readonly onText: (delta: string) => void) {}

  /** True once a choice reported why it finished, or the final usage chunk came. */
  get finished(): boolean {
    return (this.finishReason !== undefined && this.finishReason !== null) || (this.usage !== undefined && this.usage !== null);
  }

  push(chunk: ChatCompletionChunk): void {
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return;
    const delta = choice.delta ?? {};
    const piece = (delta.content ?? '') + (delta.refusal ?? '');
    if (piece !== '') {
      this.text += piece;
      this.onText(piece);
    }
    for (const d of (delta.tool_calls ?? []) as Partial<ToolCallDelta>[]) this.pushToolCall(d);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  result(): RawCompletion {
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({ ...c, id: c.id || `call_${index}` }));
    return { text: this.text, toolCalls, finishReason: this.finishReason, usage: this.usage };
  }

  private pushToolCall(d: Partial<ToolCallDelta>): void {
    const index = d.index ?? this.indexWithoutIndex(d);
    this.lastIndex = index;
    let call = this.calls.get(index);
    if (!call) {
      call = { id: '', name: '', arguments: '' };
      this.calls.set(index, call);
    }
    if (d.id && !call.id) call.id = d.id;
    const name = d.function?.name;
    if (name && name !== call.name) call.name += name;
    if (d.function?.arguments) call.arguments += d.function.arguments;
  }

  /** Some servers omit `index`: a new id starts a new call, anything else continues the last one. */
  private indexWithoutIndex(d: Partial<ToolCallDelta>): number {
    if (d.id) {
      for (const [i, c] of this.calls) if (c.id === d.id) return i;
      return this.calls.size === 0 ? 0 : Math.max(...this.calls.keys()) + 1;
    }
    return this.lastIndex >= 0 ? this.lastIndex : 0;
  }
}
