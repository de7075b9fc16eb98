import { HookgateError, errorMessage } from '../../kernel/errors.js';
import type { BusHook } from '../../kernel/hooks/bus-hook-registration.js';
import type { Message } from '../../kernel/messages.js';
import { CONTINUING_WRITES, type MessageWriteKind, type ThreadHookCalls, type ThreadHookHost } from '../../kernel/runtime/thread-hooks-port.js';
import type { MessageRecord, NewMessage } from '../../kernel/store.js';
import { randomUUID } from 'node:crypto';
import type { ToolCall, ToolResult } from '../../kernel/messages.js';
import { chainToolResult, copyForHook, frozenToolCall, fromHookToolResult, toHookToolResult } from './hook-tool-result.js';
import { fromHookMessage, hookRows, llmMessages, messagesOfItems, recordsOfRows, shareToolCallsJson, toHookMessage } from './hook-message.js';
import { keepToolPairs } from './tool-pair-integrity.js';
import type { SelectedThreadHook } from './thread-hook-selection.js';
import { createThreadState } from './thread-state.js';
import type { ThreadHookDefinition } from './define-hook.js';
import type { HookExecutionContext, HookMessage, HookToolResult, LLMMessage, ThreadState } from './thread-hook-types.js';
import { THREAD_HOOK_LOG_PREFIX, THREAD_HOOK_VOCABULARY, type ThreadHookName } from './thread-hook-vocabulary.js';

/**
 * What a call passes to the handlers on the bus: the state, and the
 * arguments that come before the transformed value (before_update_message's
 * message id, the tool-result hooks' tool call).
 */
interface CallContext {
  readonly state: ThreadState;
  readonly lead: readonly unknown[];
}

/** The hooks that transform a tool result (checked against the result they were given). */
const TOOL_RESULT_HOOKS: ReadonlySet<string> = new Set(['before_store_tool_result', 'after_tool_call_success', 'after_tool_call_failure']);

/** How long the runtime waits for one tool call's `tool_call_started` hooks before the stream goes on (document 003). */
export const TOOL_CALL_STARTED_WAIT_MS = 30_000;

/** What each transform must return when it returns something (else the handler counts as failed, and its rule applies). */
const RETURN_CHECKS: Partial<Record<ThreadHookName, (value: unknown) => boolean>> = {
  after_system_message: (v) => typeof v === 'string',
  filter_messages: Array.isArray,
  prefilter_llm_history: Array.isArray,
  before_create_message: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  before_update_message: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

/**
 * A selection's hooks as a chain puts them on the bus: the hook types it has
 * and one handler per hook. The handlers hold only the hook and its context
 * (no operation's data: the state and the call's arguments come per call),
 * so operations with the same selection share them.
 */
export interface PreparedThreadHooks {
  readonly types: ReadonlySet<string>;
  readonly busHooks: readonly BusHook[];
}

/** The bus handlers of a selection, in its run order (see {@link PreparedThreadHooks}). */
export function prepareThreadHooks(selected: readonly SelectedThreadHook[]): PreparedThreadHooks {
  const busHooks = selected.map(({ definition, context }): BusHook => Object.freeze({ id: definition.id, type: definition.hook, handler: busHandler(definition, context) as BusHook['handler'] }));
  return Object.freeze({ types: new Set(selected.map((s) => s.definition.hook)), busHooks: Object.freeze(busHooks) });
}

/**
 * The selected hooks of one operation on the hook bus, as the runtime calls
 * them: one place that runs a chain of one hook type for one thread. Each
 * hook is registered on the bus's `thread` vocabulary under the operation's
 * scope, in run order; a transform chain is the bus's (each gets the
 * previous output, `null` / `undefined` keeps), and the per-write error rule
 * is passed per call. Failures the chain keeps going past are logged by the
 * bus with the `[Hooks] ✗` prefix and only the error's message (the logger
 * scrubs registered secrets); nothing of the message or value is logged.
 */
export class ThreadHookChain implements ThreadHookCalls {
  private readonly scope: string;
  private readonly types: ReadonlySet<string>;
  private statePromise: Promise<ThreadState> | undefined;
  /** The state once made (calls after the first run without waiting for it). */
  private stateValue: ThreadState | undefined;
  /** The call context of the calls with no leading argument, made once with the state. */
  private bareCall: CallContext | undefined;
  /** The last message `before_create_message` saw with tool calls: its stored copy reuses their JSON (after_create_message). */
  private lastCalls: { readonly id: string; readonly calls: readonly ToolCall[] } | undefined;

  constructor(
    private readonly host: ThreadHookHost,
    /** The selection's bus handlers ({@link prepareThreadHooks}): made once per selection, shared by its operations. */
    hooks: PreparedThreadHooks,
    /** How long a tool call's `tool_call_started` hooks are waited for (the document's 30 s; shorter in specs). */
    private readonly startedWaitMs: () => number = () => TOOL_CALL_STARTED_WAIT_MS,
  ) {
    this.scope = `thread-hooks:${host.record.id}`;
    this.types = hooks.types;
    if (!host.bus.vocabularyNames().includes(THREAD_HOOK_VOCABULARY.name)) host.bus.addVocabulary(THREAD_HOOK_VOCABULARY);
    host.bus.unregister(this.scope, THREAD_HOOK_VOCABULARY.name);
    host.bus.register(this.scope, THREAD_HOOK_VOCABULARY.name, hooks.busHooks);
  }

  has(hook: string): boolean {
    return this.types.has(hook);
  }

  /** The operation's ThreadState, made once (reads the thread record). */
  state(): Promise<ThreadState> {
    return (this.statePromise ??= createThreadState(this.host).then((state) => {
      this.bareCall = { state, lead: NO_LEAD };
      return (this.stateValue = state);
    }));
  }

  beforeCreateMessage(message: NewMessage, kind: MessageWriteKind): NewMessage | Promise<NewMessage> {
    if (!this.types.has('before_create_message')) return message;
    const given = message.id;
    const id = given ?? randomUUID();
    const withId = given === undefined ? withMessageId(message, id) : message;
    const keep = CONTINUING_WRITES.has(kind);
    const calls = withId.toolCalls;
    if (calls !== undefined && calls.length > 0) this.lastCalls = { id, calls };
    const row = this.transform<HookMessage>('before_create_message', toHookMessage(withId, id), NO_LEAD, keep ? KEEP : PROPAGATE);
    return isThenable(row) ? Promise.resolve(row).then((r) => this.createdFrom(withId, r, keep)) : this.createdFrom(withId, row, keep);
  }

  /** The message to store once `before_create_message` answered `row` (the write's rule applied to a row that cannot be stored). */
  private createdFrom(withId: NewMessage, row: HookMessage, keep: boolean): NewMessage {
    // Null everywhere (the common case): the message as it was, no copy.
    if (row.role === withId.role && row.content === withId.content) return withId;
    try {
      return fromHookMessage(withId, row, 'before_create_message');
    } catch (err) {
      if (!keep) throw err;
      this.logFailure('before_create_message', err);
      return withId;
    }
  }

  afterCreateMessage(message: MessageRecord): void | Promise<void> {
    const last = this.lastCalls;
    if (last !== undefined && last.id === message.id) {
      this.lastCalls = undefined;
      if (message.toolCalls !== undefined) shareToolCallsJson(last.calls, message.toolCalls);
    }
    if (this.types.has('after_create_message')) return this.observe('after_create_message', [toHookMessage(message, message.id)]);
  }

  // Message updates (ThreadState.updateMessage, document 003's before/after_update_message).

  async beforeUpdateMessage(messageId: string, updates: Record<string, unknown>): Promise<Record<string, unknown>> {
    // A copy: hooks may change the object they get (the document's examples do), never the caller's.
    const fields = { ...updates };
    if (!this.types.has('before_update_message')) return fields;
    return this.transform<Record<string, unknown>>('before_update_message', fields, [messageId], PROPAGATE);
  }

  async afterUpdateMessage(message: MessageRecord): Promise<void> {
    if (this.types.has('after_update_message')) await this.observe('after_update_message', [toHookMessage(message, message.id)]);
  }

  /** The child's state is made for this call (it reads the child's thread record); the child's own hooks keep theirs. */
  async afterSubagentCreated(child: ThreadHookHost): Promise<void> {
    if (!this.types.has('after_subagent_created')) return;
    const childState = await createThreadState(child);
    await this.observe('after_subagent_created', [childState]);
  }

  async afterThreadCreated(): Promise<void> {
    if (this.types.has('after_thread_created')) await this.observe('after_thread_created', NO_LEAD);
  }

  async afterSystemMessage(system: string): Promise<string> {
    if (!this.types.has('after_system_message')) return system;
    return this.transform<string>('after_system_message', system, NO_LEAD);
  }

  async filterMessages(records: readonly MessageRecord[]): Promise<MessageRecord[]> {
    if (!this.types.has('filter_messages')) return [...records];
    const { rows, byRow } = hookRows(records);
    const returned = await this.transform<HookMessage[]>('filter_messages', rows, NO_LEAD);
    let kept: MessageRecord[];
    try {
      kept = recordsOfRows(returned, byRow, new Map(records.map((r) => [r.id, r])));
    } catch (err) {
      this.logFailure('filter_messages', err);
      kept = [...records];
    }
    return keepToolPairs(kept, (drop) => this.host.logger.warn(`${THREAD_HOOK_LOG_PREFIX} filter_messages left a tool call without its result (or the reverse); the pair was dropped from the request`, { operationId: this.host.record.id, ...drop }));
  }

  async prefilterLlmHistory(messages: readonly Message[]): Promise<Message[]> {
    if (!this.types.has('prefilter_llm_history')) return [...messages];
    const { list, byItem } = llmMessages(messages);
    const returned = await this.transform<LLMMessage[]>('prefilter_llm_history', list, NO_LEAD);
    const calls = new Map<string, Message>();
    for (const m of messages) if (m.toolCallId !== undefined) calls.set(m.toolCallId, m);
    let out: Message[];
    try {
      out = messagesOfItems(returned, byItem, calls);
    } catch (err) {
      this.logFailure('prefilter_llm_history', err);
      out = [...messages];
    }
    return keepToolPairs(out, (drop) => this.host.logger.warn(`${THREAD_HOOK_LOG_PREFIX} prefilter_llm_history left a tool call without its result (or the reverse); the pair was dropped from the request`, { operationId: this.host.record.id, ...drop }));
  }

  toolCallStarted(call: ToolCall, progress: string | undefined): void | Promise<void> {
    if (!this.types.has('tool_call_started')) return;
    let pending: void | Promise<void>;
    try {
      pending = this.observe('tool_call_started', [frozenToolCall(call), progress]);
    } catch (err) {
      return this.logFailure('tool_call_started', err);
    }
    // Every hook returned synchronously (the bus logged any that threw): nothing to wait for, no timer.
    if (pending === undefined) return;
    return this.waitStarted(pending);
  }

  /** Waits for `tool_call_started` hooks at most the started-wait; they are not cancelled after it, and never reject. */
  private async waitStarted(pending: Promise<void>): Promise<void> {
    const hooks = pending.catch((err: unknown) => this.logFailure('tool_call_started', err));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.startedWaitMs());
    });
    try {
      await Promise.race([hooks, waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  toolCallDone(call: ToolCall, result: ToolResult): void | Promise<void> {
    if (!this.types.has('tool_call_done')) return;
    let pending: void | Promise<void>;
    try {
      pending = this.observe('tool_call_done', [frozenToolCall(call), Object.freeze(toHookToolResult(result))]);
    } catch (err) {
      return this.logFailure('tool_call_done', err);
    }
    if (pending !== undefined) return pending.catch((err: unknown) => this.logFailure('tool_call_done', err));
  }

  toolResult(call: ToolCall, result: ToolResult): ToolResult | Promise<ToolResult> {
    const first: ThreadHookName = result.success ? 'after_tool_call_success' : 'after_tool_call_failure';
    const runFirst = this.types.has(first);
    const runStore = this.types.has('before_store_tool_result');
    if (!runFirst && !runStore) return result;
    const lead = [frozenToolCall(call)];
    let value = chainToolResult(result);
    try {
      if (runFirst) {
        const out = this.transform<HookToolResult>(first, value, lead, KEEP);
        if (isThenable(out)) return this.finishToolResult(result, first, value, out, runStore, lead);
        value = out;
      }
      if (runStore) {
        const out = this.transform<HookToolResult>('before_store_tool_result', value, lead, KEEP);
        if (isThenable(out)) return this.finishToolResult(result, first, value, out, false, lead);
        value = out;
      }
    } catch (err) {
      // The bus keeps going past a failing hook; this is the chain itself failing (its state could not be read).
      this.logFailure(first, err);
    }
    return fromHookToolResult(result, value);
  }

  /** The rest of {@link toolResult} once a hook (or the state) answered with a promise. */
  private async finishToolResult(result: ToolResult, first: ThreadHookName, given: HookToolResult, pending: PromiseLike<HookToolResult>, runStore: boolean, lead: readonly unknown[]): Promise<ToolResult> {
    // The last good value: what the chain had when the hook answered with a promise.
    let value = given;
    try {
      value = await pending;
      if (runStore) value = await this.transform<HookToolResult>('before_store_tool_result', value, lead, KEEP);
    } catch (err) {
      this.logFailure(first, err);
    }
    return fromHookToolResult(result, value);
  }

  close(): void {
    this.host.bus.unregister(this.scope, THREAD_HOOK_VOCABULARY.name);
  }

  /**
   * Runs one transform chain on the bus (the hook's own error rule unless the
   * write names one): synchronous once the state exists and while every
   * handler is (no promise, no microtask per write).
   */
  private transform<V>(hook: ThreadHookName, value: V, lead: readonly unknown[], onError?: { readonly onError: 'keep' | 'propagate' }): V | Promise<V> {
    const state = this.stateValue;
    if (state !== undefined) {
      const call: CallContext = lead.length === 0 ? this.bareCall! : { state, lead };
      return this.host.bus.transform<V>(this.scope, THREAD_HOOK_VOCABULARY.name, hook, value, call, onError);
    }
    return this.state().then((made) => this.host.bus.transform<V>(this.scope, THREAD_HOOK_VOCABULARY.name, hook, value, { state: made, lead } satisfies CallContext, onError));
  }

  /** Runs one observe chain on the bus: failures are logged, the others run. Synchronous as transform is. */
  private observe(hook: ThreadHookName, args: readonly unknown[]): void | Promise<void> {
    if (this.stateValue !== undefined) return this.host.bus.observe(this.scope, THREAD_HOOK_VOCABULARY.name, hook, args, this.bareCall);
    return this.state().then(() => this.host.bus.observe(this.scope, THREAD_HOOK_VOCABULARY.name, hook, args, this.bareCall));
  }

  private logFailure(hook: ThreadHookName, err: unknown): void {
    this.host.logger.error(`${THREAD_HOOK_LOG_PREFIX} ${hook} failed; the value it was given is kept`, { operationId: this.host.record.id, hookType: hook, error: errorMessage(err) });
  }
}

/**
 * The message with the id its hooks see (and the store keeps), the runtime's
 * own fields first as before. Object.assign, then the id: on Node 20 a
 * spread with a field after it (`{ ...message, id }`) gives every copy a map
 * of its own, so every reader of the messages after it (rows, the store)
 * went megamorphic (bench/README.md, "Issue 15"). A NewMessage is a plain
 * object the runtime built, so assigning copies what the spread copied.
 */
function withMessageId(message: NewMessage, id: string): NewMessage {
  const copy: NewMessage = Object.assign({}, message);
  copy.id = id;
  return copy;
}

const NO_LEAD: readonly unknown[] = Object.freeze([]);
const KEEP = Object.freeze({ onError: 'keep' as const });
const PROPAGATE = Object.freeze({ onError: 'propagate' as const });

/**
 * The bus handler of one selected hook: `execute` called with the state, the
 * call's leading arguments, the value (transforms) or the event's arguments
 * (observers), and the hook's context. No closure or array per call; a
 * return value is checked where the hook's type says what it must be.
 */
function busHandler(definition: ThreadHookDefinition, context: HookExecutionContext): (input: unknown, call: CallContext) => unknown {
  const execute = definition.execute as (...args: unknown[]) => unknown;
  const hook = definition.hook;
  if (THREAD_HOOK_VOCABULARY.hooks[hook].kind !== 'transform') {
    return (input, call) => {
      const args = input as readonly unknown[];
      switch (args.length) {
        case 0:
          return execute(call.state, context);
        case 1:
          return execute(call.state, args[0], context);
        case 2:
          return execute(call.state, args[0], args[1], context);
        default:
          return execute(call.state, ...args, context);
      }
    };
  }
  const run = (call: CallContext, value: unknown): unknown => {
    const lead = call.lead;
    return lead.length === 0 ? execute(call.state, value, context) : lead.length === 1 ? execute(call.state, lead[0], value, context) : execute(call.state, ...lead, value, context);
  };
  if (TOOL_RESULT_HOOKS.has(hook)) {
    return (value, call) => {
      const given = value as HookToolResult;
      // A tool-result hook gets its own copy: one that changes it and then throws leaves the last good value as it was.
      const out = run(call, copyForHook(given));
      return isThenable(out) ? Promise.resolve(out).then((v) => checkedToolResult(hook, given, v)) : checkedToolResult(hook, given, out);
    };
  }
  const check = RETURN_CHECKS[hook];
  if (check === undefined) return (value, call) => run(call, value);
  return (value, call) => {
    const out = run(call, value);
    return isThenable(out) ? Promise.resolve(out).then((v) => checked(hook, v, check)) : checked(hook, out, check);
  };
}

/** What a tool-result hook returns when it returns something: the same status, its text a string (or left out: kept). */
function checkedToolResult(hook: string, given: HookToolResult, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidResult(hook, `returned ${Array.isArray(value) ? 'a list' : typeof value}, not a tool result`);
  const out = value as Record<string, unknown>;
  if (out.status !== given.status) throw invalidResult(hook, `changed the status from "${given.status}" to ${JSON.stringify(String(out.status)).slice(0, 40)} (a hook changes the text of a result, never whether it succeeded)`);
  const field = given.status === 'success' ? 'result' : 'error';
  if (out[field] !== undefined && typeof out[field] !== 'string') throw invalidResult(hook, `returned a non-string "${field}"`);
  return value;
}

function invalidResult(hook: string, what: string): HookgateError {
  return new HookgateError('THREAD_HOOK_INVALID', `${hook} ${what}; null or undefined keeps the result`, { details: { hook } });
}

function checked(hook: string, value: unknown, check: (value: unknown) => boolean): unknown {
  if (value === null || value === undefined || check(value)) return value;
  throw new HookgateError('THREAD_HOOK_INVALID', `${hook} returned a value of the wrong type (${Array.isArray(value) ? 'a list' : typeof value}); null or undefined keeps the value`, { details: { hook } });
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
