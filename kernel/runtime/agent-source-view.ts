import { deepFreeze, parseAgentDefinition, type AgentDefinition } from '../agent-definition.js';
import { HookgateError } from '../errors.js';
import type { AgentView } from './agent-source.js';
import type { ToolEntry } from './call-facts.js';
import { toolKey } from './runtime-deps.js';

/**
 * What the runtime reads of a view for one step: the view as an agent
 * definition (what the next-step decision, the gate's allow-list and
 * approval stages and the model turn take) and its tools keyed
 * `identifier/apiName` (what the gate looks a call up in and the model is
 * offered). Derived once per view object.
 */
export interface StepAgent {
  readonly definition: AgentDefinition;
  readonly tools: ReadonlyMap<string, ToolEntry>;
}

/** Step agents by view object, then agent id (one view may serve several agents): a view seen again costs two lookups. */
const derived = new WeakMap<AgentView, Map<string, StepAgent>>();

/** Tool maps by step definition (definitions derived here only; any other definition uses the kernel's catalogue). */
const toolMaps = new WeakMap<AgentDefinition, ReadonlyMap<string, ToolEntry>>();

/** Step definitions whose view asked to end after a compaction (`AgentView.endAfterCompaction`; not an agent file field). */
const compactionOnly = new WeakSet<AgentDefinition>();

/** Whether the operation running `agent` ends once a compaction committed (its view's `endAfterCompaction`). */
export function endsAfterCompaction(agent: AgentDefinition): boolean {
  return compactionOnly.has(agent);
}

/**
 * Records that `view` is `definition` with the tools of `tools`, without
 * validating or copying anything: for the static source, whose views are
 * made from definitions that were validated when they were defined. The step
 * then runs with the very definition object (and the kernel's catalogue),
 * exactly as before agent sources.
 */
export function bindStaticView(view: AgentView, definition: AgentDefinition, tools: ReadonlyMap<string, ToolEntry>): void {
  derived.set(view, new Map([[definition.id, { definition, tools }]]));
}

/**
 * The step agent of `view` (validated and derived the first time this object
 * is seen): AGENT_SOURCE_INVALID naming the source, the agent and every
 * problem when the view is not valid.
 */
export function stepAgentOf(view: AgentView, sourceId: string, agentId: string): StepAgent {
  let byAgent = derived.get(view);
  const known = byAgent?.get(agentId);
  if (known !== undefined) return known;
  const step = deriveStepAgent(view, sourceId, agentId);
  if (byAgent === undefined) derived.set(view, (byAgent = new Map()));
  byAgent.set(agentId, step);
  toolMaps.set(step.definition, step.tools);
  return step;
}

/** The tools the step of `agent` runs with: its view's, or `catalogue` (the kernel's, from every ToolSource) for a definition no view made. */
export function toolMapOf(agent: AgentDefinition, catalogue: ReadonlyMap<string, ToolEntry>): ReadonlyMap<string, ToolEntry> {
  return toolMaps.get(agent) ?? catalogue;
}

function deriveStepAgent(view: AgentView, sourceId: string, agentId: string): StepAgent {
  const where = `agent source "${sourceId}" (agent "${agentId}")`;
  if (view === null || typeof view !== 'object') throw invalid(where, [`returned ${view === null ? 'null' : typeof view}, not a view`], sourceId, agentId);
  const raw: Record<string, unknown> = { id: agentId, model: view.model, tools: view.allowList };
  for (const key of ['description', 'instructions', 'approval', 'limits', 'compaction', 'subagents'] as const) {
    if (view[key] !== undefined) raw[key] = view[key];
  }
  let definition: AgentDefinition;
  try {
    // The agent file schema, so a view gets the same checks as a defined agent (its `tools` is the allow-list).
    definition = parseAgentDefinition(raw, where);
  } catch (err) {
    const problems = err instanceof HookgateError && Array.isArray(err.details?.problems) ? (err.details.problems as string[]) : [String(err)];
    throw invalid(where, problems.map((p) => p.replace(`${where}: tools`, `${where}: allowList`)), sourceId, agentId);
  }
  const frozen = deepFreeze(definition);
  if (view.endAfterCompaction === true) compactionOnly.add(frozen);
  return { definition: frozen, tools: toolMapFrom(view.tools, where, sourceId, agentId) };
}

function toolMapFrom(tools: AgentView['tools'], where: string, sourceId: string, agentId: string): ReadonlyMap<string, ToolEntry> {
  const entries: unknown[] = tools instanceof Map ? [...tools.values()] : Array.isArray(tools) ? tools : [];
  if (!(tools instanceof Map) && !Array.isArray(tools)) throw invalid(where, [`tools: expected a list or a map of tool entries, got ${tools === null ? 'null' : typeof tools}`], sourceId, agentId);
  const map = new Map<string, ToolEntry>();
  const problems: string[] = [];
  entries.forEach((entry, i) => {
    const problem = entryProblem(entry);
    if (problem !== undefined) {
      problems.push(`tools[${i}]: ${problem}`);
      return;
    }
    const { tool } = entry as ToolEntry;
    const key = toolKey(tool.identifier, tool.apiName);
    if (map.has(key)) problems.push(`tools[${i}]: a second tool named "${key}"`);
    else map.set(key, entry as ToolEntry);
  });
  if (problems.length > 0) throw invalid(where, problems, sourceId, agentId);
  return map;
}

function entryProblem(entry: unknown): string | undefined {
  if (entry === null || typeof entry !== 'object') return 'expected { tool, source }';
  const { tool, source } = entry as Partial<ToolEntry>;
  if (tool === null || typeof tool !== 'object') return 'tool: expected a tool definition';
  if (typeof tool.identifier !== 'string' || typeof tool.apiName !== 'string') return 'tool: expected string identifier and apiName';
  if (source === null || typeof source !== 'object' || typeof source.execute !== 'function') return `source: expected a tool source with execute() for "${tool.identifier}/${tool.apiName}"`;
  return undefined;
}

function invalid(where: string, problems: string[], source: string, agentId: string): HookgateError {
  const lines = problems.map((p) => (p.startsWith(where) ? p : `${where}: ${p}`));
  return new HookgateError('AGENT_SOURCE_INVALID', `${where} returned a view that is not valid:\n${lines.join('\n')}`, { details: { source, agentId, problems: lines } });
}
