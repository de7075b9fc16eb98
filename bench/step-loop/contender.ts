/**
 * What the step-loop benchmark asks of each contender: one scripted
 * conversation of {@link TOOL_CALLS} tool calls, then a final text.
 */

/** Tool calls per conversation; the model answers with text on the next turn. */
export const TOOL_CALLS = 20;
/** Model calls per conversation: one per tool call, plus the final text turn. */
export const MODEL_STEPS = TOOL_CALLS + 1;
/** Model calls plus tool executions per conversation (hookgate's `state.stepIndex`). */
export const MODEL_AND_TOOL_STEPS = MODEL_STEPS + TOOL_CALLS;

/** What one finished conversation reports; the harness checks it against the constants above. */
export interface ConversationCount {
  /** Model calls the run made. */
  modelSteps: number;
  /** Tool executions the run made. */
  toolSteps: number;
}

export interface Contender {
  readonly name: string;
  /** One-line description for the report. */
  readonly description: string;
  /** Builds whatever the conversations share (kernel, store). Awaited once before any timing. */
  setup(): Promise<void>;
  /** Runs one conversation to its end; rejects if it did not end normally. */
  runConversation(index: number): Promise<ConversationCount>;
  /** Extra facts for the report (hook calls per conversation, store file size...). */
  facts(): Record<string, number | string>;
  /** Releases what setup acquired. */
  teardown(): Promise<void>;
}
