/**
 * What the step-loop benchmark asks of each contender: one scripted
 * conversation of `calls` tool calls (one per model turn), then a final text.
 */

/** Tool calls per conversation when none is asked for (issue 3's length). */
export const DEFAULT_TOOL_CALLS = 20;

/** Model calls per conversation: one per tool call, plus the final text turn. */
export function modelSteps(calls: number): number {
  return calls + 1;
}

/** Model calls plus tool executions per conversation (hookgate's `state.stepIndex`). */
export function modelAndToolSteps(calls: number): number {
  return modelSteps(calls) + calls;
}

/** What one finished conversation reports; the harness checks it against the functions above. */
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
  /** Tool calls per conversation this contender was built for. */
  readonly calls: number;
  /** Builds whatever the conversations share (kernel, store, the peer package). Awaited once before any timing. */
  setup(): Promise<void>;
  /** Runs one conversation to its end; rejects if it did not end normally. */
  runConversation(index: number): Promise<ConversationCount>;
  /** Extra facts for the report (hook calls per conversation, store file size...). */
  facts(): Record<string, number | string>;
  /** Releases what setup acquired. */
  teardown(): Promise<void>;
}
