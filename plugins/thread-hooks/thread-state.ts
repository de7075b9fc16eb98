import { HookgateError } from '../../kernel/errors.js';
import type { ThreadHookHost } from '../../kernel/runtime/thread-hooks-port.js';
import { toHookMessage } from './hook-message.js';
import { toHookToolResult } from './hook-tool-result.js';
import type { ExecutionState, GetMessagesOptions, HookMessage, HookToolResult, InjectMessageInput, MessagesResult, ThreadState } from './thread-hook-types.js';

const INJECT_ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant']);
/** A thread value's key: what `setValue` takes (the agent API's persistent state takes the same keys). */
const MAX_KEY_LENGTH = 256;

/**
 * The `ThreadState` every thread hook of one operation gets first. Built once
 * per operation in this process, the first time a hook runs (it reads the
 * thread's record then); `context` lives as long as the operation runs here.
 * Writes go through the runtime (`host`): an injected message takes the
 * step loop's path, with its hooks and its compare-and-swap.
 */
export async function createThreadState(host: ThreadHookHost): Promise<ThreadState> {
  // The host's record is read at use: the state may be made before the operation is stored (its sent message's hooks).
  const record = host.record;
  const thread = await host.store.getThread(record.threadId);
  const createdAt = thread !== undefined ? Date.parse(thread.createdAt) : Date.parse(record.createdAt);
  const initial = thread?.initialData;
  const args = Object.freeze(typeof initial === 'object' && initial !== null && !Array.isArray(initial) ? { ...(initial as Record<string, unknown>) } : {});
  const context: Record<string, unknown> = {};
  const state: ThreadState = {
    threadId: record.threadId,
    agentId: record.agentId,
    userId: record.userId ?? null,
    createdAt,
    arguments: args,
    get execution(): ExecutionState | null {
      // At rest (created, no step begun yet, or finished) there is no execution.
      const steps = host.stepIndex();
      return host.record.status === 'running' && steps > 0 ? { operationId: record.id, stepCount: steps } : null;
    },
    context,
    async getMessages(options?: GetMessagesOptions): Promise<MessagesResult> {
      const all = await host.store.listThreadMessages(record.threadId);
      const limit = options?.limit ?? all.length;
      const offset = options?.offset ?? 0;
      if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(offset) || offset < 0) {
        throw new HookgateError('THREAD_HOOK_INVALID', `getMessages: limit and offset are whole numbers of at least 0 (got limit ${String(options?.limit)}, offset ${String(options?.offset)})`);
      }
      const end = Math.max(0, all.length - offset);
      const start = Math.max(0, end - limit);
      const messages = all.slice(start, end).map((m): HookMessage => toHookMessage(m, m.id));
      return { messages, total: all.length, hasMore: start > 0 };
    },
    async injectMessage(input: InjectMessageInput): Promise<HookMessage> {
      if (typeof input !== 'object' || input === null || !INJECT_ROLES.has(input.role) || typeof input.content !== 'string') {
        throw new HookgateError('THREAD_HOOK_INVALID', 'injectMessage: expected { role: "system" | "user" | "assistant", content: string }');
      }
      const stored = await host.injectMessage({ role: input.role, content: input.content });
      return toHookMessage(stored, stored.id);
    },
    async updateMessage(messageId: string, updates: Record<string, unknown>): Promise<HookMessage> {
      if (typeof messageId !== 'string' || messageId === '') throw new HookgateError('THREAD_HOOK_INVALID', 'updateMessage: the message id must be a non-empty string');
      if (typeof updates !== 'object' || updates === null || Array.isArray(updates)) {
        throw new HookgateError('THREAD_HOOK_INVALID', `updateMessage("${messageId}"): expected an object of the fields to change, e.g. { content: "..." }`);
      }
      const stored = await host.updateMessage(messageId, updates);
      return toHookMessage(stored, stored.id);
    },
    queueTool(toolName: string, args: Record<string, unknown>): void {
      host.queueTool(toolName, args);
    },
    async invokeTool(toolName: string, args: Record<string, unknown>): Promise<HookToolResult> {
      return toHookToolResult(await host.invokeTool(toolName, args));
    },
    emit(event: string, data: unknown): void {
      if (typeof event !== 'string' || event === '') throw new HookgateError('THREAD_HOOK_INVALID', 'emit: the event name must be a non-empty string');
      host.emit(event, data);
    },
    async getValue<T = unknown>(key: string): Promise<T | undefined> {
      checkKey(key);
      const values = (await host.store.getThread(record.threadId))?.values ?? {};
      return Object.prototype.hasOwnProperty.call(values, key) ? (structuredClone(values[key]) as T) : undefined;
    },
    async setValue(key: string, value: unknown): Promise<void> {
      checkKey(key);
      let copy: unknown;
      try {
        copy = JSON.parse(JSON.stringify(value ?? null));
      } catch (err) {
        throw new HookgateError('THREAD_HOOK_INVALID', `setValue("${key}"): the value must be JSON (${(err as Error).message})`);
      }
      const values = { ...((await host.store.getThread(record.threadId))?.values ?? {}) };
      if (value === undefined) delete values[key];
      else values[key] = copy;
      await host.store.saveThreadValues(record.threadId, values);
    },
  };
  return state;
}

function checkKey(key: unknown): void {
  if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH) throw new HookgateError('THREAD_HOOK_INVALID', `a thread value key is a non-empty string of at most ${MAX_KEY_LENGTH} characters`);
}

function notYet(method: string): HookgateError {
  return new HookgateError('THREAD_HOOK_UNSUPPORTED', `ThreadState.${method}() is not available yet in this runtime`, { details: { method } });
}
