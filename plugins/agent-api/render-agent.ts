import type { Agent, AgentProps } from './agent.js';
import { AgentRenderError } from './agent-errors.js';
import type { AgentTool } from './define-tool.js';
import type { SkillDefinition } from './define-skill.js';
import type { SubagentDefinition } from './define-subagent.js';
import { frameworkToolConflict } from './framework-tools.js';
import { agentPrefix, renderInSlot, type RenderInput } from './render-slot.js';
import type { AgentFinishCallback, AgentStartCallback, ResponseFinishCallback, ResponseStartCallback } from './use-agent-events.js';
import type { ModelBlock } from './use-model.js';
import type { SandboxDeclaration } from './use-sandbox.js';

/** What one render of an agent function declared. */
export interface RenderedAgent {
  /** The instruction document: the returned string, then each `useInstruction` text, joined with blank lines (none: undefined). */
  readonly instructions: string | undefined;
  /** The `useModel` choice (undefined only in a subagent render). */
  readonly model: ModelBlock | undefined;
  /** The `useTool` tools, in call order, names unique. */
  readonly tools: readonly AgentTool[];
  /** The `usePersistentState` names declared. */
  readonly stateNames: ReadonlySet<string>;
  readonly agentStarts: readonly AgentStartCallback[];
  readonly agentFinishes: readonly AgentFinishCallback[];
  readonly responseStarts: readonly ResponseStartCallback[];
  readonly responseFinishes: readonly ResponseFinishCallback[];
  /** The `useSkill` skills, in call order, names unique. */
  readonly skills: readonly SkillDefinition[];
  /** The `useSubagent` delegates, in call order, names unique. */
  readonly subagents: readonly SubagentDefinition[];
  /** What this render declared of skills and subagents, as catalog entries (name, description): what resource narration diffs. */
  readonly resources: RenderedResources;
  /** The `useSandbox` declaration; undefined: the runtime's default environment. */
  readonly sandbox: SandboxDeclaration | undefined;
}

/** A render's declared skills and subagents as catalog entries, in declaration order. */
export interface RenderedResources {
  readonly skills: readonly ResourceEntry[];
  readonly subagents: readonly ResourceEntry[];
}

/** One catalog entry: `- **name** — description`. */
export interface ResourceEntry {
  readonly name: string;
  readonly description: string;
}

/**
 * Renders an agent function once, synchronously, with `input` (the
 * instance, its initial data and state; none: a bare render, where reading
 * `props.id` throws). Only a root render gets props; a subagent function is
 * called with none. AgentRenderError (naming the agent) when the function
 * returns a Promise or thenable ("Agent functions must be synchronous."),
 * returns anything but a string or undefined, renders inside another render,
 * calls `useModel` twice or not at all, or declares two tools or two state
 * names alike (ToolNameConflictError for tools); a throw of the function
 * itself passes through as it is.
 */
export function renderAgent(agent: Agent, input: RenderInput = {}): RenderedAgent {
  if (typeof agent !== 'function') throw new AgentRenderError(`renderAgent: an agent is a function; got ${agent === null ? 'null' : typeof agent}`);
  const kind = input.kind ?? 'agent';
  const props = kind === 'agent' ? propsFor(input) : undefined;
  const { result, frame } = renderInSlot(() => (props === undefined ? (agent as () => unknown)() : (agent as (p: AgentProps) => unknown)(props)), input);
  const prefix = agentPrefix(frame);
  if (result !== null && (typeof result === 'object' || typeof result === 'function') && typeof (result as { then?: unknown }).then === 'function') {
    // The promise's own failure (hooks called after an await throw there) is this error's, not an unhandled rejection.
    if (result instanceof Promise) result.catch(() => undefined);
    throw new AgentRenderError(`${prefix}Agent functions must be synchronous. Move async work into tools or event hook callbacks.`, { rule: 'synchronous' });
  }
  if (result !== undefined && typeof result !== 'string') {
    throw new AgentRenderError(`${prefix}an agent function returns its instruction string or nothing; it returned ${result === null ? 'null' : Array.isArray(result) ? 'an array' : typeof result}. Declare the model, tools and state with hooks.`, {
      rule: 'return',
    });
  }
  if (kind === 'agent' && frame.model === undefined) {
    throw new AgentRenderError(`${prefix}useModel() was not called: an agent declares its model with useModel() exactly once per render.`, { hook: 'useModel' });
  }
  frameworkToolConflict(frame);
  const parts = [...(result !== undefined && result !== '' ? [result] : []), ...frame.instructions];
  return Object.freeze({
    instructions: parts.length > 0 ? parts.join('\n\n') : undefined,
    model: frame.model,
    tools: Object.freeze([...frame.tools]),
    stateNames: frame.stateNames,
    agentStarts: Object.freeze([...frame.agentStarts]),
    agentFinishes: Object.freeze([...frame.agentFinishes]),
    responseStarts: Object.freeze([...frame.responseStarts]),
    responseFinishes: Object.freeze([...frame.responseFinishes]),
    skills: Object.freeze([...frame.skills]),
    subagents: Object.freeze([...frame.subagents]),
    resources: Object.freeze({ skills: entriesOf(frame.skills), subagents: entriesOf(frame.subagents) }),
    sandbox: frame.sandbox,
  });
}

function propsFor(input: RenderInput): AgentProps {
  if (input.instanceId !== undefined) return Object.freeze({ id: input.instanceId });
  const props = {};
  Object.defineProperty(props, 'id', {
    enumerable: true,
    get(): never {
      throw new AgentRenderError(
        `${input.agentName !== undefined ? `agent "${input.agentName}": ` : ''}this render has no agent instance behind it, so props.id is unavailable (run it through an instance, or give the render an instanceId)`,
        { rule: 'props.id' },
      );
    },
  });
  return Object.freeze(props) as AgentProps;
}

function entriesOf(list: readonly { name: string; description: string }[]): readonly ResourceEntry[] {
  return Object.freeze(list.map((r) => Object.freeze({ name: r.name, description: r.description })));
}
