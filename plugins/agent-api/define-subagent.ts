import type { AgentFunction } from './agent.js';
import { SubagentDefinitionValidationError, type DefinitionIssue } from './agent-errors.js';
import { describe, quoteName, SKILL_NAME_PATTERN } from './define-skill.js';
import { modelBlockOf, type ModelBlock, type ModelChoice } from './use-model.js';

/** The reasoning effort a delegate runs with (recorded in its model block as `thinkingLevel`; a provider that has none ignores it). */
export type ThinkingLevel = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/**
 * A delegate the model can hand a task to through the `task` tool
 * (document 001 "SubagentDefinition").
 */
export interface SubagentDefinition {
  /** The name the model selects it by: lowercase ASCII letters, digits and single hyphens, at most 64. */
  readonly name: string;
  /** The roster line: how the model decides when to delegate. */
  readonly description: string;
  /** The delegate's whole world, rendered as a subagent (no props, no instance hooks, no `useModel`). */
  readonly agent: AgentFunction;
  /** A model override: a `'provider/model'` specifier or a model block (kept as the parsed block); inherits the parent's model when omitted. */
  readonly model?: ModelChoice;
  /** A reasoning-effort override; inherits when omitted. */
  readonly thinkingLevel?: ThinkingLevel;
}

/** The framework-reserved name of GeneralSubagent. */
export const GENERAL_SUBAGENT_NAME = 'flue-general';

const THINKING_LEVELS: ReadonlySet<string> = new Set(['off', 'minimal', 'low', 'medium', 'high', 'xhigh']);
const FIELDS = new Set(['name', 'description', 'agent', 'model', 'thinkingLevel']);
const MAX_DESCRIPTION = 1024;
const defined = new WeakSet<object>();

/** The general delegate's agent function: deliberately empty (no instructions, tools, skills or subagents of the parent). */
const generalAgent: AgentFunction = () => undefined;

/**
 * Validates a subagent definition and returns it frozen (a copy), so a bad
 * definition fails at module load. Per-mount overrides spread cleanly
 * (`useSubagent({ ...reviewer, model: 'openai/gpt-4o-mini' })`).
 * Synchronous; `SubagentDefinitionValidationError` with every field-level
 * issue at once. The name `flue-general` is reserved for GeneralSubagent's
 * own agent function. A value `defineSubagent` returned is returned as it is.
 */
export function defineSubagent(definition: SubagentDefinition): SubagentDefinition {
  if (definition !== null && typeof definition === 'object' && defined.has(definition)) return definition;
  if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
    throw new SubagentDefinitionValidationError(undefined, [{ field: '(definition)', message: `expected { name, description, agent, model?, thinkingLevel? }, got ${describe(definition)}` }]);
  }
  const raw = definition as unknown as Record<string, unknown>;
  const issues: DefinitionIssue[] = [];
  for (const key of Object.keys(raw)) if (!FIELDS.has(key)) issues.push({ field: quoteName(key), message: 'is not a field of a subagent definition' });
  const { name, description, agent, model, thinkingLevel } = raw;
  if (typeof name !== 'string') issues.push({ field: 'name', message: `must be a string, got ${describe(name)}` });
  else if (name.length === 0 || name.length > 64 || !SKILL_NAME_PATTERN.test(name)) {
    issues.push({ field: 'name', message: `must be 1-64 lowercase ASCII letters, digits and single hyphens; got ${quoteName(name)}` });
  } else if (name === GENERAL_SUBAGENT_NAME && agent !== generalAgent) {
    issues.push({ field: 'name', message: `"${GENERAL_SUBAGENT_NAME}" is reserved for GeneralSubagent (mount it with useSubagent(GeneralSubagent))` });
  }
  if (typeof description !== 'string') issues.push({ field: 'description', message: description === undefined ? 'is required' : `must be a string, got ${describe(description)}` });
  else if (description.trim() === '') issues.push({ field: 'description', message: 'must not be empty' });
  else if (description.length > MAX_DESCRIPTION) issues.push({ field: 'description', message: `must be at most ${MAX_DESCRIPTION} characters (got ${description.length})` });
  if (typeof agent !== 'function') issues.push({ field: 'agent', message: agent === undefined ? 'is required (the agent function of the delegate)' : `must be an agent function, got ${describe(agent)}` });
  let modelBlock: ModelBlock | undefined;
  if (model !== undefined) {
    try {
      modelBlock = modelBlockOf(model as ModelChoice);
    } catch (err) {
      issues.push({ field: 'model', message: `must be a "provider/model" specifier or a model block: ${(err as Error).message}` });
    }
  }
  if (thinkingLevel !== undefined && (typeof thinkingLevel !== 'string' || !THINKING_LEVELS.has(thinkingLevel))) {
    issues.push({ field: 'thinkingLevel', message: `must be one of ${[...THINKING_LEVELS].join(', ')}` });
  }
  if (issues.length > 0) throw new SubagentDefinitionValidationError(typeof name === 'string' ? quoteName(name) : undefined, issues);
  const subagent: SubagentDefinition = Object.freeze({
    name: name as string,
    description: description as string,
    agent: agent as AgentFunction,
    ...(modelBlock !== undefined ? { model: modelBlock } : {}),
    ...(thinkingLevel !== undefined ? { thinkingLevel: thinkingLevel as ThinkingLevel } : {}),
  });
  defined.add(subagent);
  return subagent;
}

/**
 * A blank general-purpose delegate (`useSubagent(GeneralSubagent)`): its
 * agent function is empty, so the child gets the parent's model and none of
 * the parent's instructions, tools, skills or subagents. Registered under
 * the framework-reserved name `flue-general`.
 */
export const GeneralSubagent: SubagentDefinition = defineSubagent({
  name: GENERAL_SUBAGENT_NAME,
  description: 'A general-purpose agent with a fresh context: give it a focused, self-contained task and it returns only its final answer.',
  agent: generalAgent,
});
