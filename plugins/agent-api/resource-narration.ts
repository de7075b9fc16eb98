import { renderDeliveredMessage, type DeliveredSignal } from './delivered-message.js';
import type { RenderedAgent } from './render-agent.js';
import { digestOf, type ResourceEntry, type ResourceKind } from './resource-kinds.js';
import type { AgentEnvironment } from './agent-environment.js';
import { ACTIVATE_SKILL_TOOL, TASK_TOOL } from './framework-tools.js';

/** The fixed body of the `instructions` signal: the live system prompt already is the new version. */
export const INSTRUCTIONS_UPDATED = 'System instructions updated.';

/**
 * What the model was last told (stored as the operation's
 * `state.sourceState`, committed with the model turn whose prompt carried
 * the signals, so a restart neither repeats nor loses one): per kind, each entry's name with a
 * fingerprint of its description and digest (pairs, so no name can be an
 * object key like `__proto__`); the instruction document's digest; and the
 * compaction the snapshot belongs to (the id of the latest summary in the
 * conversation, null before any).
 */
export interface NarratedSnapshot {
  readonly v: 1;
  readonly compaction: string | null;
  readonly instructions: string;
  readonly kinds: Readonly<Record<string, ReadonlyArray<readonly [name: string, fingerprint: string]>>>;
  /** The environment's key (AgentEnvironment.key); absent in snapshots of before `useSandbox`, or when the source has none. */
  readonly environment?: string;
}

/** The warning every `environment` signal carries. */
export const ENVIRONMENT_WARNING = 'Files, processes and results from the previous environment may no longer be accessible.';

/** What one turn boundary narrates, and the snapshot to store with it. */
export interface Narration {
  readonly signals: readonly DeliveredSignal[];
  readonly snapshot: NarratedSnapshot;
}

/**
 * Diffs `render` against `previous` (the stored snapshot; undefined or not
 * one: none yet) for each of `kinds`: one `resources` signal per kind whose
 * set changed, then an `instructions` signal when the instruction
 * document's digest changed. No snapshot yet, or one from before the latest
 * compaction (`compaction` differs), is a baseline: the current sets are
 * recorded and nothing is narrated (the system prompt the model reads from
 * then on already describes them). A kind the snapshot does not know (added
 * to the runtime later) is adopted the same way, silently.
 */
export function narrateResources(kinds: readonly ResourceKind[], render: RenderedAgent, previous: unknown, compaction: string | null, environment?: AgentEnvironment): Narration {
  const current = snapshotOf(kinds, render, compaction, environment);
  const before = asSnapshot(previous);
  if (before === undefined || before.compaction !== compaction) return { signals: [], snapshot: current };
  const signals: DeliveredSignal[] = [];
  // A swapped environment is one full snapshot: it supersedes this boundary's resources deltas.
  const swapped = environment !== undefined && typeof before.environment === 'string' && before.environment !== environment.key;
  if (swapped) signals.push(Object.freeze({ kind: 'signal', type: 'environment', body: environmentBody(render, environment) }));
  for (const kind of swapped ? [] : kinds) {
    const was = Object.hasOwn(before.kinds, kind.kind) ? before.kinds[kind.kind] : undefined;
    if (!Array.isArray(was)) continue;
    const body = resourcesBody(kind, new Map(was), entriesOf(kind, render));
    if (body !== undefined) signals.push(Object.freeze({ kind: 'signal', type: 'resources', body, attributes: Object.freeze({ resource: kind.kind }) }));
  }
  if (before.instructions !== current.instructions) signals.push(Object.freeze({ kind: 'signal', type: 'instructions', body: INSTRUCTIONS_UPDATED }));
  return { signals, snapshot: current };
}

/** A narration signal as the model reads it and the conversation stores it (`<signal type="resources" resource="tool">`...). */
export function narrationText(signal: DeliveredSignal): string {
  return renderDeliveredMessage(signal);
}

/**
 * The body of one kind's `resources` signal, undefined when nothing
 * changed: added entries as catalog lines, removals and updates as one line
 * each, then the whole roster. Names in code-unit order.
 */
export function resourcesBody(kind: ResourceKind, before: ReadonlyMap<string, string>, now: readonly ResourceEntry[]): string | undefined {
  const singular = kind.plural.endsWith('s') ? kind.plural.slice(0, -1) : kind.plural;
  const Singular = capitalize(singular);
  const sorted = [...now].sort((a, b) => compare(a.name, b.name));
  const names = new Set(sorted.map((e) => e.name));
  const added = sorted.filter((e) => !before.has(e.name));
  const removed = [...before.keys()].filter((name) => !names.has(name)).sort(compare);
  const updated = sorted.filter((e) => before.has(e.name) && before.get(e.name) !== fingerprintOf(e));
  if (added.length === 0 && removed.length === 0 && updated.length === 0) return undefined;
  const lines: string[] = [];
  if (added.length > 0) {
    lines.push(added.length === 1 ? `New ${singular} available:` : `New ${kind.plural} available:`);
    for (const e of added) lines.push(`- **${oneLine(e.name)}** — ${oneLine(e.description)}`);
  }
  for (const name of removed) lines.push(`${Singular} no longer available: ${oneLine(name)}`);
  for (const e of updated) lines.push(kind.nameOnlyUpdates === true ? `${Singular} updated: ${oneLine(e.name)}` : `${Singular} updated: **${oneLine(e.name)}** — ${oneLine(e.description)}`);
  lines.push(`All available ${kind.plural}: ${sorted.length > 0 ? sorted.map((e) => oneLine(e.name)).join(', ') : 'none'}`);
  return lines.join('\n');
}

/**
 * The body of an `environment` signal: the new working directory, the warning,
 * the whole model-facing tool roster (names, framework tools included), then
 * the live skill and subagent catalogs (`- **name** — description`, or `none`).
 */
export function environmentBody(render: RenderedAgent, environment: AgentEnvironment): string {
  const tools = render.tools.map((t) => oneLine(t.name));
  if (render.skills.length > 0) tools.push(ACTIVATE_SKILL_TOOL);
  if (render.subagents.length > 0) tools.push(TASK_TOOL);
  const catalog = (title: string, entries: readonly ResourceEntry[]): string[] => {
    const sorted = [...entries].sort((a, b) => compare(a.name, b.name));
    return sorted.length === 0 ? [`${title}: none`] : [`${title}:`, ...sorted.map((e) => `- **${oneLine(e.name)}** — ${oneLine(e.description)}`)];
  };
  return [
    `The environment changed. Working directory: ${environment.cwd !== undefined ? oneLine(environment.cwd) : 'none (no sandbox is attached)'}`,
    ENVIRONMENT_WARNING,
    `All available tools: ${tools.length > 0 ? [...new Set(tools)].sort(compare).join(', ') : 'none'}`,
    ...catalog('Available skills', render.resources.skills),
    ...catalog('Available subagents', render.resources.subagents),
  ].join('\n');
}

/** The snapshot of what `render` declares, for `compaction` (and the environment it runs in, when the source has one). */
export function snapshotOf(kinds: readonly ResourceKind[], render: RenderedAgent, compaction: string | null, environment?: AgentEnvironment): NarratedSnapshot {
  const out: Record<string, Array<[string, string]>> = {};
  for (const kind of kinds) {
    Object.defineProperty(out, kind.kind, { value: entriesOf(kind, render).map((e) => [e.name, fingerprintOf(e)]), enumerable: true, writable: true, configurable: true });
  }
  return { v: 1, compaction, instructions: instructionsDigest(render.instructions ?? ''), kinds: out, ...(environment !== undefined ? { environment: environment.key } : {}) };
}

/** The last instruction document digested and its digest: renders repeat one document turn after turn. */
let lastInstructions: { text: string; digest: string } | undefined;

function instructionsDigest(text: string): string {
  if (lastInstructions?.text !== text) lastInstructions = { text, digest: digestOf(text) };
  return lastInstructions.digest;
}

/** The compaction a conversation is in: the id of its latest summary message (null: never compacted). */
export function compactionMarkOf(messages: ReadonlyArray<{ readonly id: string; readonly role: string }>): string | null {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'summary') return messages[i]!.id;
  return null;
}

function entriesOf(kind: ResourceKind, render: RenderedAgent): readonly ResourceEntry[] {
  const entries = kind.entries(render);
  const seen = new Set<string>();
  // Names are unique per render (useTool refuses a second one); a kind that repeats one keeps its first.
  return entries.filter((e) => (seen.has(e.name) ? false : (seen.add(e.name), true)));
}

/** Fingerprints of entry objects a kind hands out again (tools: one entry per tool object). */
const fingerprints = new WeakMap<ResourceEntry, string>();

function fingerprintOf(entry: ResourceEntry): string {
  let known = fingerprints.get(entry);
  if (known === undefined) {
    known = digestOf([entry.description, entry.digest ?? null]);
    // Only frozen entries can be remembered: a mutable one may change under the cache.
    if (Object.isFrozen(entry)) fingerprints.set(entry, known);
  }
  return known;
}

function asSnapshot(value: unknown): NarratedSnapshot | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const s = value as Partial<NarratedSnapshot>;
  if (s.v !== 1 || typeof s.instructions !== 'string' || (s.compaction !== null && typeof s.compaction !== 'string') || s.kinds === null || typeof s.kinds !== 'object') return undefined;
  return s as NarratedSnapshot;
}

/** A name or description on one line: its line breaks folded into spaces (a kind's names need not be tool names). */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
