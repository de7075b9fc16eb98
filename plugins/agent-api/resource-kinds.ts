import { createHash } from 'node:crypto';
import type { AgentTool } from './define-tool.js';
import type { RenderedAgent } from './render-agent.js';

/** One declared resource as its narration reads it: a name, the description the model is shown, and a digest of anything else that counts as a change. */
export interface ResourceEntry {
  readonly name: string;
  readonly description: string;
  /** A digest of what else makes the entry "updated" (a tool's input schema); absent: only the description counts. */
  readonly digest?: string;
}

/**
 * A kind of resource an agent function declares per render (tools; skills
 * and subagents plug in the same way): what its `resources` signal calls it
 * and how to read a render's entries. One `resources` signal per kind whose
 * set changed, `<signal type="resources" resource="<kind>">`.
 */
export interface ResourceKind {
  /** The signal's `resource` attribute (`tool`, `skill`, `subagent`); an XML attribute value, unique among the kinds. */
  readonly kind: string;
  /** The plural in the body's lines (`tools`: "New tools available:", "All available tools: ..."). */
  readonly plural: string;
  /** Updates announced by name only (tools: the new description and schema reach the model natively, in the request's tools array). */
  readonly nameOnlyUpdates?: boolean;
  /** The entries the render declared, names unique. */
  entries(render: RenderedAgent): readonly ResourceEntry[];
}

/** A hex SHA-256 of `value`'s JSON (what digests of schemas and instructions are). */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value) ?? 'undefined').digest('hex');
}

/** Each tool's entry, made once per (frozen) tool: renders mount the same objects turn after turn. */
const toolEntries = new WeakMap<AgentTool, ResourceEntry>();

function toolEntry(tool: AgentTool): ResourceEntry {
  let entry = toolEntries.get(tool);
  if (entry === undefined) toolEntries.set(tool, (entry = Object.freeze({ name: tool.name, description: tool.description, digest: digestOf(tool.parameters ?? null) })));
  return entry;
}

/** The tools a render mounts with `useTool`: updated when the description or the input schema's digest changes. */
export const TOOL_RESOURCES: ResourceKind = Object.freeze({
  kind: 'tool',
  plural: 'tools',
  nameOnlyUpdates: true,
  entries: (render: RenderedAgent) => render.tools.map(toolEntry),
});

/** The skills a render mounts with `useSkill` (the system prompt's catalog stays on its baseline; changes are narrated). */
export const SKILL_RESOURCES: ResourceKind = Object.freeze({ kind: 'skill', plural: 'skills', entries: (render: RenderedAgent) => render.resources.skills });

/** The subagents a render mounts with `useSubagent` (the `task` tool's roster stays on its baseline; changes are narrated). */
export const SUBAGENT_RESOURCES: ResourceKind = Object.freeze({ kind: 'subagent', plural: 'subagents', entries: (render: RenderedAgent) => render.resources.subagents });

/** The kinds narrated for agent functions, in signal order. Another kind is one more entry here. */
export const RESOURCE_KINDS: readonly ResourceKind[] = Object.freeze([TOOL_RESOURCES, SKILL_RESOURCES, SUBAGENT_RESOURCES]);
