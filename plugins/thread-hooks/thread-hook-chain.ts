import { HookgateError, errorMessage } from '../../kernel/errors.js';
import type { BusHook } from '../../kernel/hooks/bus-hook-registration.js';
import type { Message } from '../../kernel/messages.js';
import { CONTINUING_WRITES, type MessageWriteKind, type ThreadHookCalls, type ThreadHookHost } from '../../kernel/runtime/thread-hooks-port.js';
import type { MessageRecord, NewMessage } from '../../kernel/store.js';
import { randomUUID } from 'node:crypto';
import type { ToolCall, ToolResult } from '../../kernel/messages.js';
import { frozenToolCall, fromHookToolResult, toHookToolResult } from './hook-tool-result.js';
import { fromHookMessage, hookRows, llmMessages, messagesOfItems, recordsOfRows, toHookMessage } from './hook-message.js';
import { keepToolPairs } from './tool-pair-integrity.js';
import type { SelectedThreadHook } from './thread-hook-selection.js';
import { createThreadState } from './thread-state.js';
import type { HookMessage, HookToolResult, LLMMessage, ThreadState } from './thread-hook-types.js';
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

  constructor(
    private readonly host: ThreadHookHost,
    selected: readonly SelectedThreadHook[],
    /** How long a tool call's `tool_call_started` hooks are waited for (the document's 30 s; shorter in specs). */
    private readonly startedWaitMs: () => number = () => TOOL_CALL_STARTED_WAIT_MS,
  ) {
    this.scope = `thread-hooks:${host.record.id}`;
    this.types = new Set(selected.map((s) => s.definition.hook));
    const busHooks: BusHook[] = selected.map(({ definition, context }) => {
      const execute = definition.execute as (...args: unknown[]) => unknown;
      const check = RETURN_CHECKS[definition.hook];
      const kind = THREAD_HOOK_VOCABULARY.hooks[definition.hook].kind;
      const resultHook = TOOL_RESULT_HOOKS.has(definition.hook);
      const handler =
        kind === 'transform'
          ? (value: unknown, call: CallContext): unknown => {
              // A tool-result hook gets its own copy: one that changes it and then throws leaves the last good value as it was.
              const out = execute(call.state, ...call.lead, resultHook ? { ...(value as HookToolResult) } : value, context);
              const verify = resultHook ? (v: unknown) => checkedToolResult(definition.hook, value as HookToolResult, v) : check === undefined ? undefined : (v: unknown) => checked(definition.hook, v, check);
              if (verify === undefined) return out;
              return isThenable(out) ? Promise.resolve(out).then(verify) : verify(out);
            }
          : (args: readonly unknown[], call: CallContext): unknown => execute(call.state, ...args, context);
      return { id: definition.id, type: definition.hook, handler: handler as BusHook['handler'] };
    });
    if (!host.bus.vocabularyNames().includes(THREAD_HOOK_VOCABULARY.name)) host.bus.addVocabulary(THREAD_HOOK_VOCABULARY);
    host.bus.unregister(this.scope, THREAD_HOOK_VOCABULARY.name);
    host.bus.register(this.scope, THREAD_HOOK_VOCABULARY.name, busHooks);
  }

  has(hook: string): boolean {
    return this.types.has(hook);
  }

  /** The operation's ThreadState, made once (reads the thread record). */
  state(): Promise<ThreadState> {
    return (this.statePromise ??= createThreadState(this.host).then((state) => (this.stateValue = state)));
  }

  beforeCreateMessage(message: NewMessage, kind: MessageWriteKind): NewMessage | Promise<NewMessage> {
    if (!this.types.has('before_create_message')) return message;
    const id = message.id ?? randomUUID();
    const withId = message.id === undefined ? { ...message, id } : message;
    const keep = CONTINUING_WRITES.has(kind);
    const finish = (row: HookMessage): NewMessage => {
      // Null everywhere (the common case): the message as it was, no copy.
      if (row.role === withId.role && row.content === withId.content) return withId;
      try {
        return fromHookMessage(withId, row, 'before_create_message');
      } catch (err) {
        if (!keep) throw err;
        this.logFailure('before_create_message', err);
        return withId;
      }
    };
    const row = this.transform<HookMessage>('before_create_message', toHookMessage(withId, id), [], keep ? 'keep' : 'propagate');
    return isThenable(row) ? Promise.resolve(row).then(finish) : finish(row);
  }

  afterCreateMessage(message: MessageRecord): void | Promise<void> {
    if (this.types.has('after_create_message')) return this.observe('after_create_message', [toHookMessage(message, message.id)]);
  }

  // Message updates (ThreadState.updateMessage, document 003's before/after_update_message).

  async beforeUpdateMessage(messageId: string, updates: Record<string, unknown>): Promise<Record<string, unknown>> {
    // A copy: hooks may change the object they get (the document's examples do), never the caller's.
    const fields = { ...updates };
    if (!this.types.has('before_update_message')) return fields;
    return this.transform<Record<string, unknown>>('before_update_message', fields, [messageId], 'propagate');
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
    if (this.types.has('after_thread_created')) await this.observe('after_thread_created', []);
  }

  async afterSystemMessage(system: string): Promise<string> {
    if (!this.types.has('after_system_message')) return system;
    return this.transform<string>('after_system_message', system, []);
  }

  async filterMessages(records: readonly MessageRecord[]): Promise<MessageRecord[]> {
    if (!this.types.has('filter_messages')) return [...records];
    const { rows, byRow } = hookRows(records);
    const returned = await this.transform<HookMessage[]>('filter_messages', rows, []);
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
    const returned = await this.transform<LLMMessage[]>('prefilter_llm_history', list, []);
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

  async toolCallStarted(call: ToolCall, progress: string | undefined): Promise<void> {
    if (!this.types.has('tool_call_started')) return;
    const hooks = Promise.resolve()
      .then(() => this.observe('tool_call_started', [frozenToolCall(call), progress]))
      .catch((err: unknown) => this.logFailure('tool_call_started', err));
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

  async toolCallDone(call: ToolCall, result: ToolResult): Promise<void> {
    if (!this.types.has('tool_call_done')) return;
    try {
      await this.observe('tool_call_done', [frozenToolCall(call), Object.freeze(toHookToolResult(result))]);
    } catch (err) {
      this.logFailure('tool_call_done', err);
    }
  }

  async toolResult(call: ToolCall, result: ToolResult): Promise<ToolResult> {
    const first: ThreadHookName = result.success ? 'after_tool_call_success' : 'after_tool_call_failure';
    const runFirst = this.types.has(first);
    const runStore = this.types.has('before_store_tool_result');
    if (!runFirst && !runStore) return result;
    const lead = [frozenToolCall(call)];
    let value = toHookToolResult(result);
    try {
      if (runFirst) value = await this.transform<HookToolResult>(first, value, lead, 'keep');
      if (runStore) value = await this.transform<HookToolResult>('before_store_tool_result', value, lead, 'keep');
    } catch (err) {
      // The bus keeps going past a failing hook; this is the chain itself failing (its state could not be read).
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
  private transform<V>(hook: ThreadHookName, value: V, lead: readonly unknown[], onError?: 'keep' | 'propagate'): V | Promise<V> {
    const run = (state: ThreadState): V | Promise<V> =>
      this.host.bus.transform<V>(this.scope, THREAD_HOOK_VOCABULARY.name, hook, value, { state, lead } satisfies CallContext, onError === undefined ? undefined : { onError });
    return this.stateValue !== undefined ? run(this.stateValue) : this.state().then(run);
  }

  /** Runs one observe chain on the bus: failures are logged, the others run. Synchronous as transform is. */
  private observe(hook: ThreadHookName, args: readonly unknown[]): void | Promise<void> {
    const run = (state: ThreadState): void | Promise<void> => this.host.bus.observe(this.scope, THREAD_HOOK_VOCABULARY.name, hook, args, { state, lead: [] } satisfies CallContext);
    return this.stateValue !== undefined ? run(this.stateValue) : this.state().then(run);
  }

  private logFailure(hook: ThreadHookName, err: unknown): void {
    this.host.logger.error(`${THREAD_HOOK_LOG_PREFIX} ${hook} failed; the value it was given is kept`, { operationId: this.host.record.id, hookType: hook, error: errorMessage(err) });
  }
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
