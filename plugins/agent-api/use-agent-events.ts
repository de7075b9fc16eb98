import type { Usage } from '../../kernel/messages.js';
import { AgentRenderError } from './agent-errors.js';
import { requireRootFrame } from './render-slot.js';
import type { Harness } from './harness.js';

/** A signal appended into the running response (the `kind: 'signal'` form of a delivered message). */
export interface AgentAppendMessage {
  readonly kind: 'signal';
  /** What the signal is (an application name; `hookgate.` names are reserved). */
  readonly type: string;
  readonly body: string;
  readonly attributes?: Readonly<Record<string, string>>;
  /** The XML tag the model sees it in (default `signal`). */
  readonly tagName?: string;
}

/** One tool call of the response so far, as `useAgentFinish` sees it. */
export interface AgentResponseToolCall {
  /** The tool's name (`apiName`; `identifier/apiName` for tools not mounted by `useTool`). */
  readonly tool: string;
  /** Whether its result was an error (a denial included). */
  readonly isError: boolean;
}

/** What a `useAgentStart` callback gets: `append` (only while the callback runs) and the operation's abort signal. */
export interface AgentStartContext {
  readonly append: (message: AgentAppendMessage) => void;
  readonly signal: AbortSignal;
  /** The agent's runtime surface for this callback (scratch prompts, the sandbox); absent where no runtime runs the agent. */
  readonly harness?: Harness;
}

/** What a `useAgentFinish` callback gets: the response so far, `append` to continue it, the abort signal. */
export interface AgentFinishContext extends AgentStartContext {
  readonly response: { readonly toolCalls: readonly AgentResponseToolCall[]; readonly usage: Usage };
}

/** What a `useResponseStart` callback gets: the metadata merged so far. */
export interface ResponseStartContext {
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** What a `useResponseFinish` callback gets: the metadata merged so far and the response's aggregates. */
export interface ResponseFinishContext extends ResponseStartContext {
  readonly response: { readonly toolCalls: readonly AgentResponseToolCall[]; readonly usage: Usage };
}

export type AgentStartCallback = (ctx: AgentStartContext) => void | Promise<void>;
export type AgentFinishCallback = (ctx: AgentFinishContext) => void | Promise<void>;
// A callback may return nothing (an observer) or the metadata to merge.
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type
export type ResponseStartCallback = (ctx: ResponseStartContext) => Record<string, unknown> | undefined | void;
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type
export type ResponseFinishCallback = (ctx: ResponseFinishContext) => Record<string, unknown> | undefined | void;

const WHY = "event hooks belong to the root agent's response; a delegate's contract is its task result.";

/**
 * Runs `run` once before the response's first model turn (after its input is
 * stored). Callbacks of one render run concurrently and are awaited; a
 * throw fails the operation, naming the callback's declaration index.
 * `ctx.append` puts a signal in front of the model's first turn, only while
 * the callback runs. Declare it in the agent's body (synchronous).
 */
export function useAgentStart(run: AgentStartCallback): void {
  register('useAgentStart', run).agentStarts.push(run);
}

/**
 * Runs `run` where the response would finish (the model answered without
 * tool calls), sequentially in declaration order, awaited. `ctx.append`
 * continues the same response with another model turn, at most 32 times
 * (a 33rd continuation fails the operation); `kind: 'user'` appends and
 * reserved signal types throw. A throw fails the operation.
 */
export function useAgentFinish(run: AgentFinishCallback): void {
  register('useAgentFinish', run).agentFinishes.push(run);
}

/**
 * Runs `run` once per response, synchronously, before its first model turn
 * and before `useAgentStart`. A returned object is deep-merged into the
 * response metadata (`__proto__`, `constructor`, `prototype` keys dropped);
 * returning a Promise or a non-object, or throwing, fails the operation.
 */
export function useResponseStart(run: ResponseStartCallback): void {
  register('useResponseStart', run).responseStarts.push(run);
}

/** Like `useResponseStart`, once where the response finishes, with its tool calls and usage. */
export function useResponseFinish(run: ResponseFinishCallback): void {
  register('useResponseFinish', run).responseFinishes.push(run);
}

function register(hook: string, run: unknown): ReturnType<typeof requireRootFrame> {
  const frame = requireRootFrame(hook, WHY);
  if (typeof run !== 'function') throw new AgentRenderError(`${hook}(run) takes a callback; got ${run === null ? 'null' : typeof run}`, { hook });
  return frame;
}
