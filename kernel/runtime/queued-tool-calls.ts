import { HookgateError, errorMessage } from '../errors.js';
import type { ToolCall } from '../messages.js';
import type { NewMessage } from '../store.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { StepDraft } from './step-executor.js';
import { markWrite } from './thread-hook-writes.js';
import { hookToolCall } from './thread-tool-invocation.js';

/**
 * `state.queueTool()` of document 003: a thread hook asks for a tool call
 * that runs after the current step, as a call of the runtime's own: it is
 * stored as an assistant message with that call, then runs through the
 * same gate as a model's call (allow-list, arguments, approval, policies,
 * controls) and the same tool hooks (`tool_call_done`, the result hooks; not
 * `tool_call_started`, which is for calls of a model response).
 */

/**
 * Queues a call on a running operation (synchronous). Throws
 * THREAD_HOOK_INVALID for a malformed request or a name that names no tool
 * (compared exactly: case and look-alike characters count), and
 * THREAD_HOOK_UNSUPPORTED on a thread with no running execution here
 * (nothing is queued or stored).
 */
export function queueToolCall(deps: RuntimeDeps, op: RunningOperation, name: unknown, args: unknown): void {
  const call = hookToolCall(deps, op, name, args, 'queueTool');
  if ('unknown' in call) throw new HookgateError('THREAD_HOOK_INVALID', `queueTool: "${call.unknown.slice(0, 200)}" names no tool (a tool is named exactly as the model is offered it, or identifier/apiName)`);
  if (op.record.status !== 'running' || op.stale === true || op.abort.signal.aborted) {
    throw new HookgateError('THREAD_HOOK_UNSUPPORTED', `queueTool: operation ${op.record.id} is not running here (${op.record.status}); queueing on an idle thread is not supported, nothing was queued`);
  }
  (op.queuedTools ??= []).push(call);
}

/**
 * Puts the queued calls into the step's commit once the step leaves no call
 * of its own pending (a tool result always follows its call): one assistant
 * message holding them, through `before_create_message` (a throw prevents
 * it: nothing is stored and the calls do not run), and the calls become the
 * pending ones. Otherwise they wait for a later step. Called by the loop
 * only when something is queued.
 */
export async function takeQueuedToolCalls(deps: RuntimeDeps, op: RunningOperation, draft: StepDraft): Promise<void> {
  const state = draft.state;
  if (state.pendingToolCalls.length > 0 || state.approval || draft.commit.status !== undefined || (state.deferredToolCallIds?.length ?? 0) > 0 || state.hookBlocked === true) return;
  const calls: ToolCall[] = op.queuedTools ?? [];
  op.queuedTools = undefined;
  if (calls.length === 0) return;
  let message: NewMessage = { role: 'assistant', content: '', toolCalls: calls };
  if (op.threadHooks !== undefined) {
    try {
      message = markWrite(await op.threadHooks.beforeCreateMessage(message, 'queued'), 'held');
    } catch (err) {
      deps.logger.warn('[Hooks] ✗ before_create_message prevented a queued tool call; it is not stored and does not run', { operationId: op.record.id, error: errorMessage(err) });
      return;
    }
  }
  draft.commit.messages.push(message);
  state.pendingToolCalls = calls;
}
