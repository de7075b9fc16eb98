import { ToolNameConflictError } from './agent-errors.js';
import { quoteName, type SkillDefinition } from './define-skill.js';
import type { ResourceEntry } from './render-agent.js';
import type { RenderFrame } from './render-slot.js';

/** The tool that loads a skill's content: injected while the render declares a skill (the model sees `agent/activate_skill`). */
export const ACTIVATE_SKILL_TOOL = 'activate_skill';

/** The tool that delegates to a subagent: injected while the render declares a subagent (`agent/task`). */
export const TASK_TOOL = 'task';

/** How deep delegations nest: a task from a delegate this many levels down is refused (the root agent is level 0). */
export const MAX_DELEGATION_DEPTH = 4;

/** `activate_skill`'s input: a plain string, resolved against the live set at call time (a literal union would rewrite the tool on every flip). */
export const ACTIVATE_SKILL_PARAMETERS = Object.freeze({
  type: 'object',
  properties: Object.freeze({ name: Object.freeze({ type: 'string', description: 'Name of the skill to activate' }) }),
  required: Object.freeze(['name']),
  additionalProperties: false,
});

export const ACTIVATE_SKILL_DESCRIPTION =
  'Load the full instructions of one available skill (listed under "Available Skills" in the system prompt) before doing work that matches its description.';

/** `task`'s input: the delegate's name (a plain string resolved against the live set) and its instructions. */
export const TASK_PARAMETERS = Object.freeze({
  type: 'object',
  properties: Object.freeze({
    agent: Object.freeze({ type: 'string', description: 'The agent to run the task with, from the list of available agents.' }),
    prompt: Object.freeze({ type: 'string', description: 'Focused, self-contained instructions for the child agent.' }),
  }),
  required: Object.freeze(['agent', 'prompt']),
  additionalProperties: false,
});

/**
 * The render declared a skill (or a subagent) and also mounted a tool under
 * the framework tool's name: ToolNameConflictError, as for two tools alike.
 */
export function frameworkToolConflict(frame: Pick<RenderFrame, 'tools' | 'skills' | 'subagents'>): void {
  if (frame.skills.length > 0 && frame.tools.some((t) => t.name === ACTIVATE_SKILL_TOOL)) throw new ToolNameConflictError(ACTIVATE_SKILL_TOOL);
  if (frame.subagents.length > 0 && frame.tools.some((t) => t.name === TASK_TOOL)) throw new ToolNameConflictError(TASK_TOOL);
}

/** The system prompt's skill catalog (empty string: no skill in the baseline). */
export function skillCatalog(skills: readonly ResourceEntry[]): string {
  if (skills.length === 0) return '';
  return [
    '## Available Skills',
    '',
    `The following skills provide specialized instructions for specific tasks. When a task matches a skill description, call the \`${ACTIVATE_SKILL_TOOL}\` tool with that skill name before proceeding so its full instructions are loaded.`,
    '',
    ...skills.map(catalogLine),
  ].join('\n');
}

/** The `task` tool's description: what it does and the roster of the baseline. */
export function taskDescription(subagents: readonly ResourceEntry[]): string {
  const head =
    'Delegate a focused task to a child agent with its own context; it returns only its final answer. Name the agent in `agent` and give it self-contained instructions in `prompt`.';
  if (subagents.length === 0) return `${head}\n\nNo agents were available when this conversation's tool list was made; agents added later are announced in the conversation.`;
  return `${head}\n\nAvailable agents:\n${subagents.map(catalogLine).join('\n')}\n\nThe list can change over the conversation; additions and removals are announced.`;
}

/** `- **name** — description` */
export function catalogLine(entry: ResourceEntry): string {
  return `- **${entry.name}** — ${entry.description}`;
}

/** What `activate_skill` answers for a skill of the live set: its instructions, then its files (text inline, bytes by size). */
export function activationText(skill: SkillDefinition): string {
  const parts = [`Run the skill named "${skill.name}".`, '', '<skill_instructions>', skill.instructions, '</skill_instructions>'];
  const paths = Object.keys(skill.files ?? {}).sort();
  if (paths.length > 0) {
    parts.push('', 'Supporting skill resources:', '<skill_resources>');
    for (const path of paths) {
      const content = skill.files![path]!;
      if (typeof content === 'string') parts.push(`<skill_resource path=${JSON.stringify(path)}>`, content, '</skill_resource>');
      else parts.push(`<skill_resource path=${JSON.stringify(path)} bytes="${content.byteLength}" binary="true" />`);
    }
    parts.push('</skill_resources>');
  }
  return parts.join('\n');
}

/** The factual miss of an unknown skill name: what is available now. */
export function skillMiss(name: unknown, available: readonly string[]): string {
  return `Skill ${shown(name)} is not available. Available skills: ${available.length > 0 ? available.join(', ') : '(none)'}.`;
}

/** The factual miss of an unknown subagent name: what is available now. */
export function subagentMiss(name: unknown, available: readonly string[]): string {
  return `Subagent ${shown(name)} is not declared. Available subagents: ${available.length > 0 ? available.join(', ') : '(none)'}.`;
}

function shown(name: unknown): string {
  return typeof name === 'string' ? quoteName(name) : `(${name === null ? 'null' : typeof name})`;
}
