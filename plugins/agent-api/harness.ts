import { randomBytes } from 'node:crypto';
import type * as v from 'valibot';
import { HookgateError } from '../../kernel/errors.js';
import type { Operations } from '../../kernel/operations.js';
import type { Sandbox } from '../../kernel/sandbox.js';
import type { OperationRecord, Store } from '../../kernel/store.js';
import { AgentRuntimeNotStartedError, HarnessClosedError, HarnessPromptError, ResultUnavailableError, SessionBusyError } from './agent-errors.js';
import { abortError, createCallHandle, type CallHandle } from './call-handle.js';
import { createResultTools, resultFooter } from './harness-result-tools.js';
import { HARNESS_SOURCE_ID, type HarnessCall, type HarnessSource } from './harness-source.js';
import { parsePromptOptions, type PromptOptions } from './harness-options.js';
import type { ModelBlock } from './use-model.js';
import type { RenderedAgent } from './render-agent.js';
import { delegationOf } from './harness-delegation.js';
import { promptUsage } from './prompt-usage.js';
import type { MessageImage } from '../../kernel/messages.js';
import { harnessRef, previousCall, replayResultCalls, resumeOrphan } from './harness-recovery.js';

export type { PromptOptions, PromptImage } from './harness-options.js';

/** Token counts and cost of every model call a prompt's operation made (turns, result follow-ups, compaction). */
export interface PromptUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  /** From the model block's `pricing` (per million tokens); zeros without one. */
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

/** The model a prompt ran with. */
export interface PromptModel {
  provider: string;
  id: string;
}

/** What a prompt without `result` resolves: the model's final text. */
export interface PromptResponse {
  text: string;
  usage: PromptUsage;
  model: PromptModel;
}

/** What a prompt with `result` resolves: the value its `finish` call validated. */
export interface PromptResultResponse<T> {
  data: T;
  usage: PromptUsage;
  model: PromptModel;
}

/**
 * The agent's runtime surface (document 001 `FlueHarness`), handed to
 * `harness: true` tools and to `useAgentStart` / `useAgentFinish` callbacks;
 * scoped to the invocation that received it (there is no constructor).
 */
export interface Harness {
  /** The agent's identity. */
  readonly name: string;
  /**
   * Runs a model operation in the harness's scratch conversation (a thread
   * of its own, never the agent's public conversation); later prompts of the
   * same harness continue it. Each prompt is an operation of the runtime,
   * child of the calling operation: the gate, policies and lifecycle hooks
   * apply. With `result`, resolves the value of the model's validated
   * `finish` call, or rejects with ResultUnavailableError. One call at a time
   * (SessionBusyError); aborting rejects with an AbortError.
   */
  prompt<S extends v.GenericSchema>(text: string, options: PromptOptions<S> & { result: S }): CallHandle<PromptResultResponse<v.InferOutput<S>>>;
  prompt(text: string, options?: PromptOptions): CallHandle<PromptResponse>;
  /**
   * Compacts the scratch conversation now (an operation whose one step
   * summarizes everything so far). A no-op when there is nothing to compact;
   * rejects with SessionBusyError while a prompt runs, HarnessPromptError
   * when no summary was written, an AbortError when it was aborted.
   */
  compact(): Promise<void>;
  /** The agent's environment (exec and the file verbs), a live getter; SANDBOX_UNAVAILABLE without a sandbox plugin. */
  readonly sandbox: Sandbox;
}

/** What a harness belongs to: the operation that received it, the agent and what its prompts default to. */
export interface HarnessScope {
  /** The calling operation (a harness prompt's operation is its child). */
  readonly parentOperationId: string | undefined;
  /** The agent's identity. */
  readonly identity: string;
  /** The agent's model (`useModel`), the default of `options.model`. */
  readonly model: ModelBlock | undefined;
  /** The agent's instructions, the system instructions of the scratch conversation. */
  readonly instructions: string | undefined;
  /** The calling operation's user: its prompts run for the same user (webhook payloads, policies). */
  readonly userId?: string | undefined;
  /** Makes it the same harness when its invocation runs again after a restart (a tool call id): its calls continue the previous run's operations, in order. */
  readonly key?: string;
  /** The agent's latest render, for delegation through `task` (its subagents); absent: the harness cannot delegate. */
  readonly render?: () => RenderedAgent | undefined;
  /** The agent id of the calling operation (what delegated children are named after: `<ref>.<subagent>`); default `identity`. */
  readonly ref?: string;
  /** Harness conversations above the calling operation (delegation levels its ref does not show); default 0. */
  readonly harnessLevels?: number;
  /** The agent's environment as of now (a live getter: `useSandbox` may swap it at a turn boundary); absent: the runtime's default sandbox. */
  readonly sandbox?: () => Sandbox | undefined;
}

/** What harnesses run on, attached once the runtime is ready. */
export interface HarnessServices {
  readonly operations: Operations;
  readonly store: Store;
  readonly sandbox: Sandbox | undefined;
}

/** Where a harness prompt's operation keeps the harness it belongs to (its stored context). */
export const HARNESS_CONTEXT_KEY = 'agent-api.harness';

const COMPACT_REQUEST = 'Compaction requested (harness.compact()): summarize the conversation so far.';

/**
 * Makes harnesses (`open`) over the harness agent source; the runtime's
 * services are attached in the plugin's `ready` (a harness used before or
 * after is AgentRuntimeNotStartedError).
 */
export class HarnessHost {
  private services: HarnessServices | undefined;

  constructor(readonly source: HarnessSource) {}

  attach(services: HarnessServices): void {
    this.services = services;
  }

  detach(): void {
    this.services = undefined;
  }

  /** The runtime's default sandbox (the `Sandbox` token's), undefined before `attach` or without a sandbox plugin. */
  defaultSandbox(): Sandbox | undefined {
    return this.services?.sandbox;
  }

  /** A new harness (with a new scratch conversation, made at its first prompt) for one invocation. */
  open(scope: HarnessScope): Harness {
    return createHarness(scope, this.source, () => {
      if (this.services === undefined) throw new AgentRuntimeNotStartedError('the harness');
      return this.services;
    });
  }
}

const closers = new WeakMap<Harness, () => void>();

/**
 * Ends a harness's scope (its tool call or callback settled): later
 * `prompt()` / `compact()` calls reject with HarnessClosedError; a call
 * already running goes on. Idempotent.
 */
export function closeHarness(harness: Harness | undefined): void {
  if (harness !== undefined) closers.get(harness)?.();
}

function createHarness(scope: HarnessScope, source: HarnessSource, servicesOf: () => HarnessServices): Harness {
  // The harness's agent id: one per harness, so its thread is its own and its running call is found by it.
  const ref = harnessRef(scope.identity, scope.parentOperationId, scope.key, () => randomBytes(6).toString('hex'));
  /** How many calls reached an operation (their order is how a re-run finds the operations of the previous run). */
  let ordinal = 0;
  let threadId: string | undefined;
  let busy = false;
  let runningId: string | undefined;
  let closed = false;

  /** Starts one call's operation and waits until it is over; `busy` until then, whatever the caller's handle did. */
  async function runCall(call: HarnessCall, prompt: string, signal: AbortSignal | undefined, what: string, images?: readonly MessageImage[]): Promise<OperationRecord> {
    const services = servicesOf();
    source.begin(ref, call);
    try {
      let operationId: string;
      const previous = scope.key !== undefined ? await previousCall(services.store, scope.parentOperationId, ref, ordinal++, prompt) : undefined;
      if (previous !== undefined) {
        // The same call of the same tool call before a restart: its operation goes on (or has ended) instead of a new prompt.
        threadId ??= previous.threadId;
        await resumeOrphan(services.operations, services.store, previous);
        operationId = previous.id;
      } else try {
        const handle = await services.operations.execAgent({
          agentSource: HARNESS_SOURCE_ID,
          agentId: ref,
          prompt,
          ...(images !== undefined && images.length > 0 ? { promptImages: images } : {}),
          ...(threadId !== undefined ? { threadId } : {}),
          ...(scope.parentOperationId !== undefined ? { parentOperationId: scope.parentOperationId } : {}),
          ...(scope.userId !== undefined ? { userId: scope.userId } : {}),
          context: { [HARNESS_CONTEXT_KEY]: ref },
        });
        operationId = handle.operationId;
      } catch (err) {
        if (err instanceof HookgateError && err.code === 'THREAD_BUSY') throw new SessionBusyError(what);
        throw err;
      }
      runningId = operationId;
      const onAbort = () => void services.operations.abort(operationId).catch(() => undefined);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const record = await services.operations.wait(operationId, 'terminal');
        threadId ??= record.threadId;
        return record;
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    } finally {
      source.end(ref, call);
    }
  }

  function claim(what: string): void {
    if (closed) throw new HarnessClosedError(what);
    if (busy) throw new SessionBusyError(what, runningId);
    busy = true;
  }

  function release(): void {
    busy = false;
    runningId = undefined;
  }

  const harness: Harness = {
    name: scope.identity,

    prompt(text: string, options?: PromptOptions<v.GenericSchema | undefined>): CallHandle<never> {
      // Only a real signal is merged here; anything else is refused by the option check inside the handle.
      const given = options !== null && typeof options === 'object' ? (options as { signal?: unknown }).signal : undefined;
      const signal = given instanceof AbortSignal ? given : undefined;
      return createCallHandle(async (handleSignal) => {
        const parsed = parsePromptOptions(text, options, scope.model);
        claim('harness.prompt()');
        try {
          const result = parsed.result !== undefined ? createResultTools(parsed.result) : undefined;
          const call: HarnessCall = { kind: 'prompt', instructions: scope.instructions, model: parsed.model, tools: parsed.tools, result, harness, delegation: delegationOf(scope, parsed.tools) };
          const images = options?.images?.map((i) => ({ mediaType: i.mimeType.toLowerCase(), data: i.data }));
          const record = await runCall(call, result !== undefined ? `${text}\n${resultFooter()}` : text, handleSignal, 'harness.prompt()', images);
          if (record.status === 'interrupted' || handleSignal.aborted) throw abortError(handleSignal.reason);
          if (record.status === 'error') {
            throw new HarnessPromptError(`the harness prompt's operation ${record.id} ended in error: ${record.error?.message ?? 'unknown error'}`, { operationId: record.id, ...(record.error?.code !== undefined ? { code: record.error.code } : {}) });
          }
          const usage = promptUsage(record.state.usage, parsed.model);
          const model = { provider: parsed.model.provider, id: parsed.model.name ?? '' };
          if (result === undefined) return { text: record.state.lastText ?? '', usage, model } as never;
          // An operation continued after a restart may have accepted its finish call in the process that died.
          if (result.outcome().type === 'pending') await replayResultCalls(servicesOf().store, record.id, result);
          const outcome = result.outcome();
          const published = outcome.type === 'pending' ? false : await publishedOk(servicesOf().store, record.id, outcome.toolCallId);
          if (outcome.type === 'finished' && published) return { data: outcome.value, usage, model } as never;
          const reason =
            outcome.type === 'gave_up' && published
              ? outcome.reason
              : outcome.type !== 'pending'
                ? 'the result call was withheld by result control'
                : `the model did not call \`finish\` or \`give_up\` after ${record.state.finishContinuations ?? 0} follow-ups`;
          throw new ResultUnavailableError(reason, record.state.lastText ?? '', record.id);
        } finally {
          release();
        }
      }, signal) as CallHandle<never>;
    },

    async compact(): Promise<void> {
      claim('harness.compact()');
      try {
        if (threadId === undefined) return;
        const services = servicesOf();
        const messages = await services.store.listThreadMessages(threadId);
        if (!messages.some((m) => m.role !== 'summary')) return;
        const model = scope.model;
        if (model === undefined) throw new HarnessPromptError('harness.compact(): the agent declares no model to summarize with', {});
        const call: HarnessCall = { kind: 'compact', instructions: scope.instructions, model, tools: [], result: undefined, harness };
        const record = await runCall(call, COMPACT_REQUEST, undefined, 'harness.compact()');
        if (record.status === 'interrupted') throw abortError();
        if (record.status === 'error') throw new HarnessPromptError(`harness.compact(): its operation ${record.id} ended in error: ${record.error?.message ?? 'unknown error'}`, { operationId: record.id });
        const summarized = (await services.store.listThreadMessages(threadId)).some((m) => m.role === 'summary' && m.operationId === record.id);
        if (!summarized) throw new HarnessPromptError(`harness.compact(): the summarization failed (operation ${record.id} wrote no summary; onCompactError has its error)`, { operationId: record.id });
      } finally {
        release();
      }
    },

    get sandbox(): Sandbox {
      const sandbox = scope.sandbox !== undefined ? (servicesOf(), scope.sandbox()) : servicesOf().sandbox;
      if (sandbox === undefined) throw new HookgateError('SANDBOX_UNAVAILABLE', 'harness.sandbox: no plugin provides the Sandbox token (the bundled sandbox-local does; was it left out?)');
      return sandbox;
    },
  };
  Object.freeze(harness);
  closers.set(harness, () => (closed = true));
  return harness;
}

/** Whether the tool message answering `toolCallId` in the operation was stored as a success (result control may have withheld it). */
async function publishedOk(store: Store, operationId: string, toolCallId: string): Promise<boolean> {
  const messages = await store.listMessages(operationId, { includeCompacted: true });
  return messages.some((m) => m.role === 'tool' && m.toolCallId === toolCallId && m.toolResult?.success === true);
}
