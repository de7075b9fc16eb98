import { compileRe2 } from '../re2-compile.js';
import type { CompiledPack, CompiledPolicy, PolicyEventName, PolicyLoadError } from '../policy-types.js';
import { closestName } from './closest-name.js';
import { lintCondition, type InputAlternative } from './condition-lint.js';
import { policyInputFields, policyInputSchema } from './input-schema.js';
import { lookupProperty, typesOf, type JsonSchema } from './json-schema-lookup.js';
import type { CatalogTool, ToolCatalog } from './tool-catalog.js';

/** A `policy check` warning: the pack loads, but a policy is likely not doing what its author meant. */
export type PolicyWarning = PolicyLoadError;

/**
 * Checks loaded packs against the tool catalog: a `match` that matches no
 * known tool, an `args` key no candidate tool has (or an object, which a regex
 * never matches), and in `when` and reason expressions the paths, types and
 * functions `lintCondition` checks, against the input each candidate tool and
 * event gives. A policy without `match` applies to every tool, including ones
 * this catalog does not list, so its `args` and `canonical` paths are not
 * checked against a schema.
 */
export function lintPacks(packs: readonly CompiledPack[], catalog: ToolCatalog): PolicyWarning[] {
  const warnings: PolicyWarning[] = [];
  for (const problem of catalog.problems) warnings.push({ file: 'tool catalog', message: `${problem}; checks against tool schemas may miss tools` });
  for (const pack of packs) for (const policy of pack.policies) lintPolicy(policy, catalog, (field, message) => warnings.push({ file: pack.file, policyId: policy.id, field, message }));
  return warnings;
}

function lintPolicy(policy: CompiledPolicy, catalog: ToolCatalog, warn: (field: string, message: string) => void): void {
  const events = [...policy.events] as PolicyEventName[];
  const candidates = candidateTools(policy, catalog, warn);
  for (const m of policy.args) {
    if (m.path.length === 1 && m.path[0] === '*') continue;
    const key = m.path.join('.');
    const tools = candidates?.tools ?? catalog.tools;
    if (tools.length === 0) continue;
    const found = tools.map((t) => ({ t, schema: schemaAt(t.parameters, m.path) }));
    const present = found.filter((f) => f.schema.kind !== 'missing');
    if (present.length === 0) {
      const known = [...new Set(found.flatMap((f) => (f.schema.kind === 'missing' ? f.schema.known : [])))];
      const hint = closestName(m.path[m.path.length - 1]!, known);
      const which = candidates ? `${describeTools(tools)} has` : 'no tool in the catalog has';
      warn(
        `args.${key}`,
        candidates
          ? `\`${key}\` is not an argument of ${describeTools(tools)} (arguments: ${known.join(', ') || 'none'})${hint ? `; did you mean \`${hint}\`?` : ''}: this matcher never matches, so the policy never applies`
          : `${which} an argument \`${key}\`${hint ? ` (did you mean \`${hint}\`?)` : ''}: this matcher never matches a known tool`,
      );
      continue;
    }
    const objectsOnly = present.every((f) => f.schema.kind === 'found' && onlyObjects(f.schema.schema));
    if (objectsOnly) warn(`args.${key}`, `\`${key}\` is an object in the input schema of ${describeTools(present.map((f) => f.t))}: a regex matcher only tests strings, numbers and booleans (or lists of them), so it never matches`);
  }
  const alternatives: InputAlternative[] = [];
  for (const event of events) {
    if (candidates === undefined || (candidates.tools.length === 0 && !candidates.subagents)) {
      alternatives.push({ schema: policyInputSchema(event, undefined), event });
      continue;
    }
    for (const t of candidates.tools) alternatives.push({ schema: policyInputSchema(event, t), tool: t.key, event });
    if (candidates.subagents) alternatives.push({ schema: policyInputSchema(event, undefined), event });
  }
  const fields = policyInputFields(events);
  if (policy.when !== undefined) for (const m of lintCondition(policy.when, alternatives, fields)) warn('when', m);
  if (policy.reason && 'expr' in policy.reason) for (const m of lintCondition(policy.reason.expr, alternatives, fields)) warn('reason.expr', m);
}

/**
 * The catalog tools a policy's `match` accepts (undefined without `match`:
 * every tool, known or not). Warns when it accepts none; sub-agent calls
 * (`agents/<id>`, ids from agent files) count as known when the pattern can
 * match an `agents/` name.
 */
function candidateTools(policy: CompiledPolicy, catalog: ToolCatalog, warn: (field: string, message: string) => void): { tools: CatalogTool[]; subagents: boolean } | undefined {
  if (policy.matchSource === undefined) return undefined;
  const re = compileRe2(policy.matchSource);
  const tools = catalog.tools.filter((t) => re.test(t.key));
  const prefix = `${catalog.subagents.identifier}/`;
  const subagents = policy.matchSource.includes(catalog.subagents.identifier) || re.test(`${prefix}a`) || re.test(`${prefix}researcher`);
  if (tools.length === 0 && !subagents) {
    const ignoringCase = catalog.tools.filter((t) => compileRe2(policy.matchSource!, 'i').test(t.key));
    const literal = policy.matchSource.replace(/^\^|\$$/g, '').replace(/\\(.)/g, '$1');
    const hint = ignoringCase.length > 0 ? `; it would match ${describeTools(ignoringCase)} ignoring case (tool names are case-sensitive; add (?i) if you mean it)` : closest(literal, catalog);
    const known = catalog.tools.length <= 12 ? `: ${catalog.tools.map((t) => t.key).join(', ')}` : '';
    warn('match', `/${policy.matchSource}/ matches no tool in the catalog (${catalog.tools.length} tools${known}; sub-agents agents/<id>)${hint}: the policy never applies`);
  }
  return { tools, subagents };
}

function closest(literal: string, catalog: ToolCatalog): string {
  const hint = closestName(literal, catalog.tools.map((t) => t.key));
  return hint ? `; did you mean ${hint}?` : '';
}

function schemaAt(schema: JsonSchema, path: readonly string[]): { kind: 'found'; schema: JsonSchema } | { kind: 'missing'; known: string[] } | { kind: 'open' } {
  let current: JsonSchema = schema;
  for (const key of path) {
    const r = lookupProperty(current, key);
    if (r.kind !== 'found') return r;
    current = r.schema;
  }
  return { kind: 'found', schema: current };
}

function onlyObjects(schema: JsonSchema): boolean {
  const t = typesOf(schema);
  return t !== undefined && t.size > 0 && [...t].every((x) => x === 'object');
}

function describeTools(tools: readonly CatalogTool[]): string {
  const keys = [...new Set(tools.map((t) => t.key))];
  return keys.length <= 3 ? keys.join(', ') : `${keys.slice(0, 3).join(', ')} and ${keys.length - 3} more`;
}
