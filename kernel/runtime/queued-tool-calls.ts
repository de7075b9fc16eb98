import { HookgateError, errorMessage } from '../errors.js';
import type { AgentHook } from '../hooks/hook-types.js';
import type { ToolCall } from '../messages.js';
import { TERMINAL_STATUSES, type NewMessage } from '../store.js';
import { AGENT_SOURCE_CONTEXT_KEY, STATIC_AGENT_SOURCE_ID } from './agent-source.js';
import { PARENT_TOOL_CALL_KEY, type ExecAgentOptions } from './exec-agent-options.js';
import type { ThreadHookLike } from './thread-hooks-port.js';
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
 * `tool_call_started`, which is for calls of a model response). On an idle
 * thread (the operation ended) the call starts a run of its own: the same
 * agent, webhook hooks, thread hooks and user, on the same thread, whose
 * first message is the assistant message with the call (see
 * {@link queuedToolRunOptions}).
 */

/** What queueTool asks of the runtime for an idle thread: a new run of the thread whose first message holds `calls`; resolves its operation id. */
export type IdleQueueStarter = (calls: readonly ToolCall[]) => Promise<string>;

/**
 * Queues a call (synchronous). Throws THREAD_HOOK_INVALID for a malformed
 * request or a name that names no tool (compared exactly: case and look-alike
 * characters count), and THREAD_HOOK_UNSUPPORTED while the operation waits
 * (for approval, a deferred result) or runs in another process (nothing is
 * queued or stored). On a running operation the call joins its next commit;
 * on an ended one (its thread idle) the calls queued in the same tick start
 * one run together; a run that cannot start (another run took the thread
 * meanwhile: THREAD_BUSY) is logged with `[Hooks] ✗` and nothing is stored.
 */
export function queueToolCall(deps: RuntimeDeps, op: RunningOperation, name: unknown, args: unknown, starter: IdleQueueStarter): void {
  const call = hookToolCall(deps, op, name, args, 'queueTool');
  if ('unknown' in call) throw new HookgateError('THREAD_HOOK_INVALID', `queueTool: "${call.unknown.slice(0, 200)}" names no tool (a tool is named exactly as the model is offered it, or identifier/apiName)`);
  const status = op.record.status;
  if (status === 'running' && op.stale !== true && !op.abort.signal.aborted) {
    (op.queuedTools ??= []).push(call);
    return;
  }
  if (!TERMINAL_STATUSES.has(status) || op.stale === true) {
    throw new HookgateError('THREAD_HOOK_UNSUPPORTED', `queueTool: operation ${op.record.id} is ${status}${op.stale === true ? ' in another process' : ''}; a tool is queued while the operation runs here or once its thread is idle, nothing was queued`, {
      details: { operationId: op.record.id, status },
    });
  }
  const batch = (op.idleQueue ??= []);
  batch.push(call);
  if (batch.length > 1) return;
  // The calls a hook queues in one go start one run, as a model's calls of one turn share one message.
  setImmediate(() => {
    const calls = op.idleQueue ?? [];
    op.idleQueue = undefined;
    starter(calls).catch((err: unknown) => {
      deps.logger.warn('[Hooks] ✗ queueTool could not start a run on the idle thread; the queued call is not stored and does not run', { operationId: op.record.id, threadId: op.record.threadId, error: errorMessage(err) });
    });
  });
}

/**
 * The run a tool queued on an idle thread starts: the ended operation's
 * thread, agent (from its source), registered webhook hooks (loaded from the
 * store after a restart), thread hook selection and code hooks, user and
 * context; never its parent link (it does not answer a parent's call again).
 */
export async function queuedToolRunOptions(deps: RuntimeDeps, op: RunningOperation, codeHooks: readonly ThreadHookLike[]): Promise<ExecAgentOptions> {
  const { [PARENT_TOOL_CALL_KEY]: _parentCall, [AGENT_SOURCE_CONTEXT_KEY]: sourceId, ...context } = op.record.context;
  const hooks = op.fromStore ? ((await deps.store.loadHooks(op.record.id)) as AgentHook[]) : op.hooks;
  const prompt = op.record.state.threadHooks?.prompt;
  return {
    ...(sourceId !== undefined && sourceId !== STATIC_AGENT_SOURCE_ID ? { agentSource: sourceId, agentId: op.record.agentId } : { agent: op.agent }),
    threadId: op.record.threadId,
    prompt: '',
    hooks,
    ...(codeHooks.length > 0 ? { threadHooks: codeHooks } : {}),
    ...(prompt !== undefined ? { promptHooks: prompt } : {}),
    ...(op.record.userId !== undefined ? { userId: op.record.userId } : {}),
    context,
  };
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
