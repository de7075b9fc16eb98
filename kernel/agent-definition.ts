import * as v from 'valibot';
import { HookgateError } from './errors.js';
import { splitMcpToolName } from './mcp-tool-name.js';

const IDENTIFIER_REF = /^(\*|[A-Za-z0-9_.-]+\/(\*|[A-Za-z0-9_.-]+))$/;

/**
 * A tool reference: `identifier/apiName`, `identifier/*`, `*`, or an MCP tool
 * as document 001 spells it, `mcp__<server>__<tool>` / `mcp__<server>__*`,
 * which becomes `mcp__<server>/<tool>` / `mcp__<server>/*` here (the one place
 * the two spellings meet; kernel/mcp-tool-name.ts).
 */
const ToolRef = v.pipe(
  v.string(),
  v.transform((ref) => {
    if (IDENTIFIER_REF.test(ref)) return ref;
    const mcp = splitMcpToolName(ref);
    return mcp && /^(\*|[A-Za-z0-9_-]+)$/.test(mcp.apiName) ? `${mcp.identifier}/${mcp.apiName}` : ref;
  }),
  v.regex(IDENTIFIER_REF, 'expected "identifier/apiName", "identifier/*", "*", "mcp__<server>__<tool>" or "mcp__<server>__*"'),
);

/** An agent file: what model, which tools, what instructions, which limits. */
export const AgentDefinitionSchema = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'expected letters, digits, "-", "_" or "."')),
  description: v.optional(v.string()),
  instructions: v.optional(v.string()),
  model: v.looseObject({
    /** Name of a model provider plugin: `scripted`, `openai`... */
    provider: v.string(),
    /** Provider-specific model name. */
    name: v.optional(v.string()),
    temperature: v.optional(v.number()),
    maxOutputTokens: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    /** Prices per million tokens, for cost limits. */
    pricing: v.optional(v.strictObject({ inputPerMillion: v.number(), outputPerMillion: v.number() })),
  }),
  /** Tools the agent may call; `fs/*` allows a whole identifier. */
  tools: v.optional(v.array(ToolRef)),
  /** Tools that need a human's approval before they run. */
  approval: v.optional(v.strictObject({ tools: v.array(ToolRef) })),
  limits: v.optional(
    v.strictObject({
      maxSteps: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
      maxTotalTokens: v.optional(v.pipe(v.number(), v.minValue(1))),
      maxCost: v.optional(v.pipe(v.number(), v.minValue(0))),
    }),
  ),
  compaction: v.optional(
    v.strictObject({
      thresholdTokens: v.pipe(v.number(), v.integer(), v.minValue(1)),
      keepRecent: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
    }),
  ),
  /** Sub-agents the model may call as the tool `agents/<id>`. */
  subagents: v.optional(v.array(v.string())),
  /** Thread hooks (document 003) this agent selects, by id: from the hooks folder or hooks given in code. */
  threadHooks: v.optional(v.array(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]*$/, 'expected a snake_case thread hook id')))),
  /** Thread hooks this agent, as a sub-agent, requires on the thread of every parent that enables it (document 003's child relationships). */
  parentThreadHooks: v.optional(v.array(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]*$/, 'expected a snake_case thread hook id')))),
});

/** A validated agent: id, instructions, model, tools, approval, limits, compaction, sub-agents (the agent file format). */
export type AgentDefinition = v.InferOutput<typeof AgentDefinitionSchema>;

export const DEFAULT_MAX_STEPS = 50;

/** Validates an agent definition; errors name the source and key path. */
export function parseAgentDefinition(raw: unknown, source: string): AgentDefinition {
  const result = v.safeParse(AgentDefinitionSchema, raw);
  if (result.success) return deepFreeze(result.output);
  const lines = result.issues.map((issue) => {
    const at = v.getDotPath(issue) ?? '(top level)';
    const what =
      issue.type === 'strict_object' && issue.expected === 'never'
        ? 'unknown key'
        : issue.kind === 'validation'
          ? issue.message
          : `expected ${issue.expected === 'Object' ? 'a mapping' : issue.expected}, got ${issue.received}`;
    return `${source}: ${at}: ${what}`;
  });
  throw new HookgateError('AGENT_INVALID', lines.join('\n'), { details: { source, problems: lines } });
}

/** Answers per reference list: agent definitions are frozen, and the loop asks about the same tools every step. */
const coverage = new WeakMap<readonly string[], Map<string, boolean>>();

/** Whether a tool reference list (`fs/*`, `*`, `fs/readFile`) covers a tool. */
export function toolListCovers(list: readonly string[] | undefined, identifier: string, apiName: string): boolean {
  if (!list) return false;
  const key = `${identifier}/${apiName}`;
  // Only frozen lists are remembered; a list that can still change is checked every time.
  let answers = Object.isFrozen(list) ? coverage.get(list) : undefined;
  const known = answers?.get(key);
  if (known !== undefined) return known;
  const covered = list.some((ref) => ref === '*' || ref === `${identifier}/*` || ref === key);
  if (Object.isFrozen(list)) {
    if (!answers) coverage.set(list, (answers = new Map()));
    answers.set(key, covered);
  }
  return covered;
}

/** Agent definitions are shared by every operation that runs them, so they are immutable. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const deepFrozen = new WeakSet<object>();

/** Whether nothing reachable from `value` can change (remembered once true: frozen stays frozen). */
export function isDeepFrozen(value: object): boolean {
  if (deepFrozen.has(value)) return true;
  if (!Object.isFrozen(value)) return false;
  for (const child of Object.values(value)) {
    if (child !== null && typeof child === 'object' && !isDeepFrozen(child)) return false;
  }
  deepFrozen.add(value);
  return true;
}
