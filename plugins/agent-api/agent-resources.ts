import type { DelegatedToolResult, ToolDefinition } from '../../kernel/tools.js';
import { AGENT_FUNCTION_SOURCE_ID } from './agent.js';
import type { SubagentDefinition } from './define-subagent.js';
import {
  ACTIVATE_SKILL_DESCRIPTION,
  ACTIVATE_SKILL_PARAMETERS,
  ACTIVATE_SKILL_TOOL,
  activationText,
  MAX_DELEGATION_DEPTH,
  skillCatalog,
  skillMiss,
  subagentMiss,
  TASK_PARAMETERS,
  TASK_TOOL,
  taskDescription,
} from './framework-tools.js';
import type { RenderedAgent, ResourceEntry } from './render-agent.js';
import type { ModelBlock } from './use-model.js';
import type { AgentEnvironment } from './agent-environment.js';

/**
 * The skills and subagents the model was shown in the system prompt's
 * catalog and the `task` tool's roster: taken at an operation's first
 * render and again after each compaction (`state.compactions` changed), and
 * kept in between, so a conditional declaration never rewrites what the
 * model already read (the live set still answers activation and delegation).
 */
export interface ResourceBaseline {
  readonly compactions: number;
  readonly skills: readonly ResourceEntry[];
  readonly subagents: readonly ResourceEntry[];
  /** The working directory of the sandbox the render declared with `useSandbox` (undefined: none declared): the workspace the system prompt describes. */
  readonly workspace: string | undefined;
}

/** The baseline for a render: `previous` while no compaction happened since it was taken, else a new one of `rendered` (in `environment`). */
export function baselineFor(previous: ResourceBaseline | undefined, rendered: RenderedAgent, compactions: number, environment?: AgentEnvironment): ResourceBaseline {
  if (previous !== undefined && previous.compactions === compactions) return previous;
  return Object.freeze({ compactions, skills: rendered.resources.skills, subagents: rendered.resources.subagents, workspace: environment?.declared === true ? environment.cwd : undefined });
}

/** The line of the system prompt that describes a declared sandbox's workspace. */
export function workspaceLine(cwd: string): string {
  return `Your environment's working directory is ${cwd.replace(/[\r\n]+/g, ' ')}; relative paths resolve against it.`;
}

/** The system instructions: the render's instruction document, then the baseline's workspace and skill catalog. */
export function composedInstructions(rendered: RenderedAgent, baseline: ResourceBaseline): string | undefined {
  const catalog = skillCatalog(baseline.skills);
  const workspace = baseline.workspace !== undefined ? workspaceLine(baseline.workspace) : undefined;
  const parts = [rendered.instructions, workspace, catalog].filter((p): p is string => p !== undefined && p !== '');
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

/** The framework tools of a render (`activate_skill` while it declares a skill, `task` while it declares a subagent), as `agent/<name>` tools. */
export function frameworkTools(rendered: RenderedAgent, baseline: ResourceBaseline, identifier: string, toolSource: string): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  if (rendered.skills.length > 0) {
    tools.push({ identifier, apiName: ACTIVATE_SKILL_TOOL, description: ACTIVATE_SKILL_DESCRIPTION, parameters: ACTIVATE_SKILL_PARAMETERS as unknown as Record<string, unknown>, toolSource });
  }
  if (rendered.subagents.length > 0) {
    tools.push({ identifier, apiName: TASK_TOOL, description: taskDescription(baseline.subagents), parameters: TASK_PARAMETERS as unknown as Record<string, unknown>, toolSource });
  }
  return tools;
}

/** Whether a call of `apiName` is a framework tool of `rendered` (else a `useTool` tool). */
export function isFrameworkCall(rendered: RenderedAgent, apiName: string): boolean {
  return (apiName === ACTIVATE_SKILL_TOOL && rendered.skills.length > 0) || (apiName === TASK_TOOL && rendered.subagents.length > 0);
}

/**
 * Runs a framework tool call against the live set of `rendered` (the latest
 * render of agent `ref`): `activate_skill` answers the skill's content or a
 * factual miss; `task` answers a delegation to the subagent's child
 * operation (`<ref>.<name>` on this source), a factual miss, or throws (a
 * tool error the model sees) past MAX_DELEGATION_DEPTH.
 */
export function runFrameworkTool(rendered: RenderedAgent, ref: string, apiName: string, args: Record<string, unknown>, harnessLevels = 0): string | DelegatedToolResult {
  if (apiName === ACTIVATE_SKILL_TOOL) {
    const skill = rendered.skills.find((s) => s.name === args.name);
    return skill !== undefined ? activationText(skill) : skillMiss(args.name, rendered.skills.map((s) => s.name));
  }
  const subagent = rendered.subagents.find((s) => s.name === args.agent);
  if (subagent === undefined) return subagentMiss(args.agent, rendered.subagents.map((s) => s.name));
  // A harness conversation counts as one level of delegation (document 001): `harnessLevels` counts the one a task is called in and those above the agent's operation.
  const depth = delegationDepth(ref) + harnessLevels;
  if (depth >= MAX_DELEGATION_DEPTH) {
    throw new Error(
      `Maximum delegation depth (${MAX_DELEGATION_DEPTH}) exceeded: agent "${ref}"${harnessLevels > 0 ? ` (counting ${harnessLevels} harness conversation${harnessLevels > 1 ? 's' : ''})` : ''} is ${depth} delegations deep and may not delegate "${subagent.name}". Do the work here, or restructure the agents to delegate less deeply.`,
    );
  }
  return { delegate: { agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: subagentRef(ref, subagent.name), prompt: typeof args.prompt === 'string' ? args.prompt : '' } };
}

/** A subagent resolved for its child operation: the definition it runs and the model it runs with. */
export interface ResolvedSubagent {
  readonly definition: SubagentDefinition;
  readonly model: ModelBlock;
}

/**
 * The agent id of a delegated child: the delegating agent's id, a `.`, the
 * subagent's name (`Support.researcher`, nested `Support.researcher.fact-checker`).
 * Neither identities nor subagent names hold a `.`, so the id splits back unambiguously.
 */
export function subagentRef(parentRef: string, name: string): string {
  return `${parentRef}.${name}`;
}

/** Whether an agent id names a delegated child (see subagentRef). */
export function isSubagentRef(ref: string): boolean {
  return ref.includes('.');
}

/** The delegating agent's id and the subagent's name of a child's agent id. */
export function splitSubagentRef(ref: string): { parentRef: string; name: string } {
  const at = ref.lastIndexOf('.');
  return { parentRef: ref.slice(0, at), name: ref.slice(at + 1) };
}

/** How many delegations deep an agent id is (0: a root agent). */
export function delegationDepth(ref: string): number {
  return ref.split('.').length - 1;
}
