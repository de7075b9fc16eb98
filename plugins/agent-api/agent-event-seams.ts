import type { NewMessage } from '../../kernel/store.js';
import { AgentRenderError } from './agent-errors.js';
import type { RenderedAgent } from './render-agent.js';
import { deepMergeMetadata, runMetadataCallbacks } from './response-metadata.js';
import { checkAppend, renderSignal } from './signal-append.js';
import type { AgentAppendMessage, AgentFinishContext, AgentResponseToolCall } from './use-agent-events.js';
import type { Usage } from '../../kernel/messages.js';
import { closeHarness, type Harness } from './harness.js';

/** Makes the harness one callback gets (a new one per callback invocation). */
export type HarnessFor = () => Harness | undefined;

/** How many times `useAgentFinish` may continue one response (document 001). */
export const MAX_FINISH_CONTINUATIONS = 32;

/** What the response facts are for the finish seam. */
export interface ResponseFacts {
  readonly toolCalls: readonly AgentResponseToolCall[];
  readonly usage: Usage;
}

/**
 * The start seam of one response: `useResponseStart` callbacks in order
 * (synchronous, metadata merged over `metadata`), then every
 * `useAgentStart` callback concurrently, awaited. Resolves the signals they
 * appended (grouped in declaration order, as user messages) and the
 * metadata. A throw names the hook and its declaration index.
 */
export async function runStartSeam(render: RenderedAgent, metadata: Readonly<Record<string, unknown>>, signal: AbortSignal, harnessFor?: HarnessFor): Promise<{ messages: NewMessage[]; signals: AgentAppendMessage[]; metadata: Record<string, unknown> | undefined }> {
  const merged = render.responseStarts.length > 0 ? runMetadataCallbacks('useResponseStart', render.responseStarts, (m) => ({ metadata: m }), metadata) : undefined;
  const appended = await Promise.all(
    render.agentStarts.map(async (callback, index) => {
      const window = appendWindow('useAgentStart');
      const harness = harnessFor?.();
      try {
        await callback({ append: window.append, signal, ...(harness !== undefined ? { harness } : {}) });
      } catch (err) {
        throw wrap('useAgentStart', index, err);
      } finally {
        window.close();
        closeHarness(harness);
      }
      return window.appended;
    }),
  );
  const signals = appended.flat();
  return { messages: signals.map(asMessage), signals, metadata: merged === undefined ? undefined : asJson(merged) };
}

/**
 * The finish seam: every `useAgentFinish` callback in declaration order,
 * awaited. Signals appended continue the response (AgentRenderError past
 * MAX_FINISH_CONTINUATIONS continuations); with none, the
 * `useResponseFinish` callbacks run and their metadata is merged.
 */
export async function runFinishSeam(
  render: RenderedAgent,
  facts: ResponseFacts & { readonly continuations: number; readonly metadata: Readonly<Record<string, unknown>> },
  signal: AbortSignal,
  harnessFor?: HarnessFor,
): Promise<{ messages: NewMessage[]; signals: AgentAppendMessage[]; metadata: Record<string, unknown> | undefined }> {
  const appended: AgentAppendMessage[] = [];
  const response = Object.freeze({ toolCalls: facts.toolCalls, usage: facts.usage });
  for (const [index, callback] of render.agentFinishes.entries()) {
    const window = appendWindow('useAgentFinish');
    const harness = harnessFor?.();
    const ctx: AgentFinishContext = { append: window.append, signal, response, ...(harness !== undefined ? { harness } : {}) };
    try {
      await callback(ctx);
    } catch (err) {
      throw wrap('useAgentFinish', index, err);
    } finally {
      window.close();
      closeHarness(harness);
    }
    appended.push(...window.appended);
  }
  if (appended.length > 0) {
    if (facts.continuations >= MAX_FINISH_CONTINUATIONS) {
      throw new AgentRenderError(`useAgentFinish continued the response ${MAX_FINISH_CONTINUATIONS} times, the most one response may; it appended again`, { hook: 'useAgentFinish', continuations: facts.continuations });
    }
    return { messages: appended.map(asMessage), signals: appended, metadata: undefined };
  }
  if (render.responseFinishes.length === 0) return { messages: [], signals: [], metadata: undefined };
  const merged = runMetadataCallbacks('useResponseFinish', render.responseFinishes, (m) => ({ metadata: m, response }), facts.metadata);
  return { messages: [], signals: [], metadata: asJson(merged) };
}

/** An `append` valid only until `close()`: a captured reference used later throws. */
function appendWindow(hook: string): { append: (message: AgentAppendMessage) => void; appended: AgentAppendMessage[]; close(): void } {
  const appended: AgentAppendMessage[] = [];
  let open = true;
  return {
    appended,
    append(message) {
      if (!open) throw new AgentRenderError(`${hook}: append() was called after its callback settled; it is valid only while the callback runs`, { hook });
      appended.push(checkAppend(hook, message));
    },
    close() {
      open = false;
    },
  };
}

function asMessage(signal: AgentAppendMessage): NewMessage {
  return { role: 'user', content: renderSignal(signal) };
}

function wrap(hook: string, index: number, err: unknown): Error {
  if (err instanceof AgentRenderError && err.details.hook === hook) return err;
  return new AgentRenderError(`${hook} callback #${index} threw: ${err instanceof Error ? err.message : String(err)}`, { hook, index });
}

/** Metadata as stored: JSON (what JSON cannot carry is dropped), prototype keys dropped again after the round trip. */
function asJson(metadata: Record<string, unknown>): Record<string, unknown> {
  return deepMergeMetadata({}, JSON.parse(JSON.stringify(metadata)) as Record<string, unknown>);
}
