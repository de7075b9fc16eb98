import { AgentRenderError } from './agent-errors.js';
import type { AgentTool } from './define-tool.js';
import type { SkillDefinition } from './define-skill.js';
import type { SubagentDefinition } from './define-subagent.js';
import type { DeliveredMessage, DeliveredMessageInput } from './delivered-message.js';
import type { DispatchReceipt } from './dispatch.js';
import type { AgentFinishCallback, AgentStartCallback, ResponseFinishCallback, ResponseStartCallback } from './use-agent-events.js';
import type { ModelBlock } from './use-model.js';
import type { SandboxDeclaration } from './use-sandbox.js';

/**
 * The thread's persisted values as one render reads them, and where its
 * setters write (absent on a bare render: setters throw).
 */
export interface RenderStateAccess {
  /** The value of `name` as of now (committed values overlaid by this operation's buffered writes); undefined: never written. */
  current(name: string): { readonly value: unknown } | undefined;
  /** Buffers a write (already a JSON value); a deep-equal write is dropped. Undefined on a read-only render. */
  readonly write?: (name: string, value: unknown) => void;
  /** Appends one write (already a JSON value) to the data part `name` of the response in progress. Undefined: no response behind the render. */
  readonly writeData?: (name: string, value: unknown) => void;
}

/** What one render is given: the instance behind it (none on a bare render), its creation data and its state. */
export interface RenderInput {
  /** The instance id (`props.id`); absent: a bare render, where reading `props.id` throws. */
  readonly instanceId?: string;
  /** The instance's recorded `initialData` (what `useInitialData()` returns). */
  readonly initialData?: unknown;
  /** The thread's persisted values; absent: every `usePersistentState` reads its default and its setter throws. */
  readonly state?: RenderStateAccess;
  /** `subagent`: instance-scoped hooks and event hooks throw, `useInitialData()` is undefined, no props, no `useModel` needed. */
  readonly kind?: 'agent' | 'subagent';
  /** The agent's identity, named in render errors. */
  readonly agentName?: string;
  /** The message in front of the model (what `useDelivery()` returns); absent on bare and subagent renders. */
  readonly delivery?: DeliveredMessage;
  /** Sends a message to this render's instance (what `useDispatchMessage()` calls); absent on bare and subagent renders. */
  readonly dispatchToSelf?: (message: DeliveredMessageInput) => Promise<DispatchReceipt>;
}

/** What the hooks of one render declared, in call order. */
export interface RenderFrame {
  readonly kind: 'agent' | 'subagent';
  readonly input: RenderInput;
  model: ModelBlock | undefined;
  readonly instructions: string[];
  readonly tools: AgentTool[];
  readonly stateNames: Set<string>;
  readonly dataNames: Set<string>;
  readonly agentStarts: AgentStartCallback[];
  readonly agentFinishes: AgentFinishCallback[];
  readonly responseStarts: ResponseStartCallback[];
  readonly responseFinishes: ResponseFinishCallback[];
  /** The `useSkill` skills, in call order, names unique. */
  readonly skills: SkillDefinition[];
  /** The `useSubagent` delegates, in call order, names unique. */
  readonly subagents: SubagentDefinition[];
  /** The `useSandbox` declaration (at most one). */
  sandbox: SandboxDeclaration | undefined;
}

/** The one render in progress. Agent functions are synchronous, so one slot never interleaves. */
let current: RenderFrame | undefined;

/** Whether an agent render is in progress (state setters refuse to write then). */
export function isRendering(): boolean {
  return current !== undefined;
}

/**
 * The render in progress, for the hook named `hook`; outside a render an
 * AgentRenderError naming the hook. Synchronous, never blocks.
 */
export function requireRenderFrame(hook: string): RenderFrame {
  if (current === undefined) {
    throw new AgentRenderError(
      `${hook}() was called outside an agent render: call hooks synchronously in the agent function's body (or in a custom hook it calls), not from tools, callbacks or module scope.`,
      { hook },
    );
  }
  return current;
}

/** The prefix of a render error's message: the agent it is about, when known. */
export function agentPrefix(frame: Pick<RenderFrame, 'input'>): string {
  return frame.input.agentName !== undefined ? `agent "${frame.input.agentName}": ` : '';
}

/**
 * Runs `render` as the one render in progress and returns what it returned
 * with what its hooks declared; the slot is cleared however it ends. A
 * render started inside another throws "Re-entrant agent render."
 */
export function renderInSlot<T>(render: () => T, input: RenderInput): { result: T; frame: RenderFrame } {
  if (current !== undefined) {
    throw new AgentRenderError(
      `${agentPrefix(current)}Re-entrant agent render. An agent function must not call another agent function; share behaviour through custom hooks.`,
      { rule: 'reentrant' },
    );
  }
  const frame: RenderFrame = {
    kind: input.kind ?? 'agent',
    input,
    model: undefined,
    instructions: [],
    tools: [],
    stateNames: new Set(),
    dataNames: new Set(),
    agentStarts: [],
    agentFinishes: [],
    responseStarts: [],
    responseFinishes: [],
    skills: [],
    subagents: [],
    sandbox: undefined,
  };
  current = frame;
  try {
    return { result: render(), frame };
  } finally {
    current = undefined;
  }
}

/** The frame of `hook`, refusing a subagent render (the hook is instance-scoped). */
export function requireRootFrame(hook: string, why: string): RenderFrame {
  const frame = requireRenderFrame(hook);
  if (frame.kind === 'subagent') throw new AgentRenderError(`${agentPrefix(frame)}${hook}() is not available in a subagent render: ${why}`, { hook });
  return frame;
}
