import { randomUUID } from 'node:crypto';
import { HookgateError, errorMessage } from '../errors.js';
import { messageUpdateOfHookFields } from '../message-update.js';
import type { ToolCall } from '../messages.js';
import type { MessageRecord, NewMessage, StepCommit } from '../store.js';
import type { RunningOperation } from './running-operation.js';
import { invokeToolNow } from './thread-tool-invocation.js';
import { queueToolCall } from './queued-tool-calls.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { MessageWriteKind, ThreadHookCalls, ThreadHookHost, ThreadHookLike } from './thread-hooks-port.js';

/**
 * Where the step loop meets document 003's thread hooks: opening an
 * operation's hooks, and the message writes they wrap. Every function here
 * is called only when `op.threadHooks` is set, so an operation that selects
 * no thread hook pays one property check per commit.
 */

/** Which write each message of a commit is; unmarked ones follow their role (see {@link writeKindOf}). */
const kinds = new WeakMap<NewMessage, MessageWriteKind>();

/** Marks a message of a commit as a write of `kind` (a joined delivery is `queued`, the narration `signal`). */
export function markWrite<M extends NewMessage>(message: M, kind: MessageWriteKind): M {
  kinds.set(message, kind);
  return message;
}

/** The write a commit's message is: its mark, else by role (assistant: the model step's; tool: a tool result; summary). */
export function writeKindOf(message: NewMessage): MessageWriteKind {
  const marked = kinds.get(message);
  if (marked !== undefined) return marked;
  if (message.role === 'assistant') return 'model_step';
  if (message.role === 'tool') return 'tool_result';
  if (message.role === 'summary') return 'summary';
  return 'signal';
}

/** The runtime's side of `ThreadState`: what an operation's hooks may ask of it. */
export interface ThreadHookWrites {
  /** Commits one message as its own commit (state unchanged), under the caller's turn. */
  commitMessage(op: RunningOperation, message: NewMessage): Promise<MessageRecord>;
  /** Starts the run of `op`'s idle thread for tool calls a hook queued (queued-tool-calls.ts); resolves its operation id. */
  startQueuedToolRun(op: RunningOperation, calls: readonly ToolCall[], codeHooks: readonly ThreadHookLike[]): Promise<string>;
}

/**
 * Opens the thread hooks the operation selects (once, when it is started or
 * loaded here) and keeps them on it. Without a `ThreadHooks` service, an
 * operation that selects a hook cannot run here: the problem is kept on the
 * operation and its loop fails it (THREAD_HOOK_MISSING), as it does for a
 * selected id this process has no hook for.
 */
export function openThreadHooks(deps: RuntimeDeps, op: RunningOperation, codeHooks: readonly ThreadHookLike[], writes: ThreadHookWrites): void {
  const service = deps.threadHooks;
  if (service === undefined) {
    const agent = op.agent;
    const selects = codeHooks.length > 0 || (agent.threadHooks?.length ?? 0) > 0 || (op.record.state.threadHooks?.prompt?.length ?? 0) > 0 || (op.record.state.threadHooks?.code?.length ?? 0) > 0;
    if (selects) {
      op.threadHooksProblem = new HookgateError('THREAD_HOOK_MISSING', `operation ${op.record.id} selects thread hooks, but no plugin provides them (load the thread-hooks plugin)`, { details: { operationId: op.record.id } });
    }
    return;
  }
  try {
    op.threadHooks = service.open(threadHookHost(deps, op, codeHooks, writes));
  } catch (err) {
    op.threadHooksProblem = err;
  }
}

/**
 * The runtime's side of one operation's `ThreadState`, as `openThreadHooks`
 * gives it to the service, and as a parent's `after_subagent_created` gets
 * its child's. Makes nothing per step: every member reads the operation when
 * called.
 */
export function threadHookHost(deps: RuntimeDeps, op: RunningOperation, codeHooks: readonly ThreadHookLike[], writes: ThreadHookWrites): ThreadHookHost {
  return {
    // A getter: an operation's hooks open on the record to be, before it is stored (agent-runtime start).
    get record() {
      return op.record;
    },
    agent: () => op.agent,
    agentDefinition: (id) => (deps.agents.has(id) ? deps.agents.get(id) : undefined),
    codeHooks,
    bus: deps.dispatcher.bus,
    store: deps.store,
    logger: deps.logger,
    messages: () => op.messages,
    stepIndex: () => op.record.state.stepIndex,
    injectMessage: (message) => injectMessage(op, message, writes),
    emit: (event, data) => deps.events.emit({ type: 'thread_event', operationId: op.record.id, threadId: op.record.threadId, event, data }),
    updateMessage: (messageId, updates) => updateMessage(deps, op, messageId, updates),
    invokeTool: (name, args) => invokeToolNow(deps, op, name, args),
    queueTool: (name, args) => queueToolCall(deps, op, name, args, (calls) => writes.startQueuedToolRun(op, calls, codeHooks)),
  };
}

/**
 * `state.updateMessage()`: `before_update_message` (a throw rejects with the
 * hook's error, nothing stored), the store's update of the row's fields
 * `content`, `status`, `response_completed_at` (it refuses fields that
 * cannot change, another thread's message and a compacted one), the running
 * conversation brought up to date (the next model request sends the new
 * content), then `after_update_message` (failures logged by the chain, the
 * update stays). An operation without hooks (a child's state) writes directly.
 */
async function updateMessage(deps: RuntimeDeps, op: RunningOperation, messageId: string, updates: Record<string, unknown>): Promise<MessageRecord> {
  const hooks = op.threadHooks;
  const ready = hooks !== undefined && hooks.has('before_update_message') ? await hooks.beforeUpdateMessage(messageId, updates) : updates;
  // The row's names (content, status, response_completed_at) as the store's; any other field is refused here.
  const stored = await deps.store.updateMessage(op.record.threadId, messageId, messageUpdateOfHookFields(messageId, ready));
  const index = op.messages.findIndex((m) => m.id === messageId);
  if (index >= 0) {
    const held = { ...op.messages[index]!, content: stored.content };
    if (stored.status !== undefined) held.status = stored.status;
    if (stored.responseCompletedAt !== undefined) held.responseCompletedAt = stored.responseCompletedAt;
    op.messages[index] = held;
    // The incremental model prompt holds the old content: rebuilt on the next turn.
    op.prompt = undefined;
  }
  if (hooks !== undefined && hooks.has('after_update_message')) await hooks.afterUpdateMessage(stored);
  return stored;
}

/**
 * `state.injectMessage()`: `before_create_message` (a throw rejects, nothing
 * stored), the commit, `after_create_message`. From a tool-result hook the
 * message is held instead (tool-call-thread-hooks.ts): stored with the turn's
 * last tool result, so it never sits between a tool call and its result.
 */
async function injectMessage(op: RunningOperation, message: NewMessage, writes: ThreadHookWrites): Promise<NewMessage & { id: string }> {
  const hooks = op.threadHooks!;
  const ready = await hooks.beforeCreateMessage(message, 'injected');
  if (op.holdingInjections === true) {
    const held = markWrite({ ...ready, id: ready.id ?? randomUUID() }, 'held');
    (op.heldInjections ??= []).push(held);
    return held;
  }
  const stored = await writes.commitMessage(op, ready);
  await hooks.afterCreateMessage(stored);
  return stored;
}

/**
 * Runs `before_create_message` over a commit's messages, write by write, and
 * replaces them with what is to be stored: a continuing write keeps its last
 * good value; a prevented one (queued, signal) is left out and logged. Other
 * kinds never reach a commit. The order of the rest is kept.
 */
export function beforeCommitMessages(deps: RuntimeDeps, op: RunningOperation, commit: StepCommit): void | Promise<void> {
  const hooks = op.threadHooks!;
  const messages = commit.messages!;
  // The commit's list is kept (no copy) until a message is left out or replaced.
  let out: NewMessage[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    const kind = writeKindOf(message);
    // A held injection went through before_create_message when it was injected.
    if (kind === 'held') {
      out?.push(message);
      continue;
    }
    let ready: NewMessage | Promise<NewMessage>;
    try {
      ready = hooks.beforeCreateMessage(message, kind);
    } catch (err) {
      out ??= messages.slice(0, i);
      preventedWrite(deps, op, kind, err);
      continue;
    }
    if (ready instanceof Promise) return finishBeforeCommit(deps, op, commit, out ?? messages.slice(0, i), i, ready);
    out = acceptWrite(commit, message, kind, ready, messages, i, out);
  }
  if (out !== undefined) commit.messages = out;
}

/** {@link beforeCommitMessages} from message `i` on, once a hook answered with a promise. */
async function finishBeforeCommit(deps: RuntimeDeps, op: RunningOperation, commit: StepCommit, out: NewMessage[], from: number, first: Promise<NewMessage>): Promise<void> {
  const hooks = op.threadHooks!;
  const messages = commit.messages!;
  for (let i = from; i < messages.length; i++) {
    const message = messages[i]!;
    const kind = writeKindOf(message);
    if (kind === 'held') {
      out.push(message);
      continue;
    }
    try {
      const pending = i === from ? first : hooks.beforeCreateMessage(message, kind);
      const ready = pending instanceof Promise ? await pending : pending;
      acceptWrite(commit, message, kind, ready, messages, i, out);
    } catch (err) {
      preventedWrite(deps, op, kind, err);
    }
  }
  commit.messages = out;
}

/**
 * Takes what `before_create_message` gave for message `i`: the list to store
 * so far (undefined while it is the commit's own list, unchanged), with the
 * reply and the step summary naming the model step's message as stored.
 */
function acceptWrite(commit: StepCommit, message: NewMessage, kind: MessageWriteKind, ready: NewMessage, messages: readonly NewMessage[], i: number, out: NewMessage[] | undefined): NewMessage[] | undefined {
  // The reply (finalText, a submission's text) is the model step's message as stored, not as the model said it.
  if (kind === 'model_step' && ready.content !== message.content) {
    if (commit.state.lastText === message.content) commit.state.lastText = ready.content;
    // The step's stored summary names the message as stored too (a sanitizing hook must not be undone there).
    const summary = commit.step?.summary;
    if (summary !== undefined && summary.content === message.content.slice(0, 500)) summary.content = ready.content.slice(0, 500);
  }
  if (out !== undefined) {
    out.push(ready);
    return out;
  }
  if (ready === message) return undefined;
  const copy = messages.slice(0, i);
  copy.push(ready);
  return copy;
}

function preventedWrite(deps: RuntimeDeps, op: RunningOperation, kind: MessageWriteKind, err: unknown): void {
  deps.logger.warn(`[Hooks] ✗ before_create_message prevented a ${kind} message; it is not stored`, { operationId: op.record.id, kind, error: errorMessage(err) });
}

/** `after_create_message` for each stored message of a commit, in order; failures are logged by the chain. Synchronous while every hook is. */
export function afterCommitMessages(op: RunningOperation, written: readonly MessageRecord[]): void | Promise<void> {
  const hooks = op.threadHooks!;
  for (let i = 0; i < written.length; i++) {
    const pending = hooks.afterCreateMessage(written[i]!);
    if (pending instanceof Promise) return finishAfterCommit(hooks, written, i, pending);
  }
}

async function finishAfterCommit(hooks: ThreadHookCalls, written: readonly MessageRecord[], from: number, first: Promise<void>): Promise<void> {
  await first;
  for (let i = from + 1; i < written.length; i++) {
    const pending = hooks.afterCreateMessage(written[i]!);
    if (pending instanceof Promise) await pending;
  }
}
