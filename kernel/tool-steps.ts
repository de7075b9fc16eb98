/**
 * Durable tool steps (document 001 `ToolStep`): the recorded value of one
 * `step.do(name, fn)` of one tool call, so that a tool call re-executed after
 * a crash gets the value back instead of running `fn` again. Keyed by the
 * operation, the call's id (the runtime-minted `ToolCall.id`, stored with the
 * operation's state, so a resumed call has the same one) and the step name.
 * Recorded exactly once: the first record of a key wins and is never
 * replaced. Removed with their operation when it is pruned.
 */

/** One recorded step, as stored. */
export interface ToolStepRecord {
  operationId: string;
  toolCallId: string;
  name: string;
  /** The step's value, as JSON (a copy: never shared with the caller). */
  value: unknown;
  recordedAt: string;
}

/** What `recordToolStep` writes. */
export interface NewToolStep {
  operationId: string;
  toolCallId: string;
  name: string;
  /** A JSON value (the caller has checked it); stored as its JSON text. */
  value: unknown;
}

/** The tool-step part of the Store contract (kernel/store.ts). */
export interface ToolStepStore {
  /**
   * Records a step's value in a transaction of its own, committed before the
   * promise resolves. When the key is already recorded nothing is written and
   * the stored record comes back with `recorded: false` (the first record
   * wins: another process re-executing the same call may have landed first).
   * STORE_NOT_FOUND for an unknown operation.
   */
  recordToolStep(step: NewToolStep): Promise<{ recorded: boolean; step: ToolStepRecord }>;
  /** The recorded steps of one tool call, in the order they were recorded (none for an unknown operation or call). */
  listToolSteps(operationId: string, toolCallId: string): Promise<ToolStepRecord[]>;
}
