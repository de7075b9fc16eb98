import type { MessageImage, ToolResult } from './messages.js';
import type { OperationHandle } from './operation-handle.js';
import type { ExecAgentOptions } from './runtime/agent-runtime.js';
import type { OperationRecord } from './store.js';

/**
 * What a plugin may do with operations once the runtime is built (the
 * `Operations` token, resolvable from a plugin's `ready` phase on): start
 * them, decide on parked tool calls, resume, abort, complete deferred tool
 * calls and wait. The kernel implements it; each method behaves as the
 * kernel's method of the same name (`wait` is `kernel.waitForOperation`).
 * Once `kernel.stop()` began, every method that would start or continue work
 * throws KERNEL_STOPPED.
 */
export interface Operations {
  /** Starts an operation (persisted before it resolves) and runs it in the background. */
  execAgent(options: ExecAgentOptions): Promise<OperationHandle>;
  /** Approves a parked operation's pending tool call(s) and resumes it. */
  approve(operationId: string, options?: { toolCallId?: string }): Promise<OperationHandle>;
  /** Rejects and halts the operation. */
  reject(operationId: string, options?: { toolCallId?: string; reason?: string }): Promise<OperationHandle>;
  /** Rejects the pending tool call(s); the model sees the reason and the run goes on. */
  rejectAndContinue(operationId: string, options?: { toolCallId?: string; reason?: string }): Promise<OperationHandle>;
  /**
   * Continues an operation a stopped process left `running`: claims its lease
   * (OPERATION_LEASED while another process holds it unexpired; `force` takes
   * such a lease over). A parked or ended operation is not claimed: the
   * handle waits for it. Decisions, resumes, completions and aborts of one
   * operation take turns in a process, so a resume never races a decision.
   */
  resume(operationId: string, options?: { force?: boolean }): Promise<OperationHandle>;
  /** Aborts an operation; it ends with reason `interrupted`. */
  abort(operationId: string): Promise<void>;
  /** Publishes a deferred tool call's result once; duplicates resolve `{ published: false }`. */
  completeToolCall(operationId: string, toolCallId: string, result: ToolResult | string): Promise<{ published: boolean }>;
  /**
   * Joins a user message to a running operation at its next model turn (its
   * commit stores it under `message.id`): true once stored, false when the
   * operation is not running here or its loop ends first.
   */
  deliverAtNextTurn(operationId: string, message: { id: string; content: string; images?: readonly MessageImage[] }): Promise<boolean>;
  /** Resolves with the operation once it is terminal (or, with `settled`, parked too). */
  wait(operationId: string, until?: 'settled' | 'terminal'): Promise<OperationRecord>;
}
