import type { ToolCall, ToolResult } from '../messages.js';
import { toFunctionName } from '../model-tool-names.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { StepDraft } from './step-executor.js';
import type { ThreadHookCalls } from './thread-hooks-port.js';
import { isGateDenial, toolEntryFor } from './tool-call-gate.js';
import { scanProgressArgument } from './tool-call-progress.js';

/**
 * Where one tool call meets document 003's tool hooks and thread events
 * (`tool_call_started`, `tool_call_done`, the result hooks). The events go to
 * connected clients before the hooks run, also when no hook is selected; a
 * caller asks {@link toolCallsWatched} first, so an operation nobody listens
 * to and that selects no thread hook pays one check per call.
 */

/** Whether the tool-call thread events or hooks of `op` have an audience (a listener or a selected hook). */
export function toolCallsWatched(deps: RuntimeDeps, op: RunningOperation): boolean {
  return op.threadHooks !== undefined || deps.events.listeningTo(op.record.id);
}

/**
 * `tool_call_started` for each call of a model response, in order, after
 * the response was stored (run as the model step's effects): the thread
 * event `{ id, name, progress }`, then the hooks, each call waiting for its
 * hooks at most the started-wait (the hooks go on uncancelled after it).
 * `progress` is the tool's `progressArgument` read from the call's arguments.
 */
export async function announceToolCalls(deps: RuntimeDeps, op: RunningOperation, calls: readonly ToolCall[]): Promise<void> {
  const hooked = op.threadHooks?.has('tool_call_started') === true;
  for (const call of calls) {
    // Nobody listening and no hook selected: nothing to tell (the event would go nowhere).
    const listening = deps.events.listeningTo(op.record.id);
    if (!listening && !hooked) continue;
    const progressArgument = toolEntryFor(deps, op.agent, call)?.tool.progressArgument;
    // The runtime holds the arguments parsed; their JSON text is what the model sent, in the same key order.
    const progress = progressArgument === undefined ? undefined : scanProgressArgument(JSON.stringify(call.args), progressArgument).progress;
    if (listening) deps.events.emit({ type: 'thread_event', operationId: op.record.id, threadId: op.record.threadId, event: 'tool_call_started', data: { id: call.id, name: toFunctionName(call.identifier, call.apiName), progress } });
    if (hooked) {
      // Synchronous hooks answer with nothing: no promise to wait for.
      const pending = op.threadHooks!.toolCallStarted(call, progress);
      if (pending !== undefined) await pending;
    }
  }
}

/**
 * After a call executed and passed result control: the `tool_call_done`
 * event `{ id, name, status }` and hooks (awaited: the next call waits for
 * them), then the success / failure hooks and `before_store_tool_result`,
 * whose result is the one stored, streamed and seen by the model. A denial
 * of the gate's result control is stored as it is: no hook rewrites it.
 * Messages the result hooks inject are held for the turn's commit
 * ({@link releaseHeldInjections}).
 */
export function toolCallDone(deps: RuntimeDeps, op: RunningOperation, call: ToolCall, result: ToolResult): ToolResult | Promise<ToolResult> {
  if (deps.events.listeningTo(op.record.id)) {
    const status = result.success ? 'success' : 'error';
    deps.events.emit({ type: 'thread_event', operationId: op.record.id, threadId: op.record.threadId, event: 'tool_call_done', data: { id: call.id, name: toFunctionName(call.identifier, call.apiName), status } });
  }
  const hooks = op.threadHooks;
  if (hooks === undefined) return result;
  // Synchronous while every hook is: no promise per tool call.
  const done = hooks.has('tool_call_done') ? hooks.toolCallDone(call, result) : undefined;
  if (done !== undefined) return done.then(() => resultHooks(hooks, op, call, result));
  return resultHooks(hooks, op, call, result);
}

/** The success / failure hooks and `before_store_tool_result`, injections held meanwhile (none for a gate denial). */
function resultHooks(hooks: ThreadHookCalls, op: RunningOperation, call: ToolCall, result: ToolResult): ToolResult | Promise<ToolResult> {
  if (isGateDenial(result)) return result;
  op.holdingInjections = true;
  let out: ToolResult | Promise<ToolResult>;
  try {
    out = hooks.toolResult(call, result);
  } catch (err) {
    op.holdingInjections = false;
    throw err;
  }
  if (!(out instanceof Promise)) {
    op.holdingInjections = false;
    return out;
  }
  return out.finally(() => {
    op.holdingInjections = false;
  });
}

/**
 * Puts the messages tool-result hooks injected into the step's commit, after
 * its tool result, once the turn's last call is answered (a tool result
 * always follows its call directly). Called by the publication stage.
 */
export function releaseHeldInjections(op: RunningOperation, draft: StepDraft): void {
  const held = op.heldInjections;
  if (held === undefined || held.length === 0 || draft.state.pendingToolCalls.length > 0) return;
  op.heldInjections = undefined;
  draft.commit.messages.push(...held);
}
