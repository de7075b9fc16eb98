import { readFile } from 'node:fs/promises';
import { explainEvent, type EventExplanation, type PolicyExplanation } from '../authoring/explain-event.js';
import { effectOf } from '../combine-decisions.js';
import { PolicySet } from '../policy-set.js';
import { loadErrorsResult, settingsFrom, withLoadedPacks, type CliPolicyOptions, type CliResult } from './cli-support.js';
import { parseEvalEvent } from './eval-input.js';

/**
 * `hookgate policy eval [paths] --event file.json [--explain] [--json]`: what
 * the packs would decide for one event and why (each candidate's verdict,
 * mode, failure). The event file is an object with `type` (or `event`: the
 * hook event), identifier, apiName, args, and `result` for afterToolCall;
 * see `parseEvalEvent`. `--explain` adds, for every policy on that event,
 * each matcher's hit or miss, the `when` value at each branch point, the
 * verdict and how the verdicts combined. Exit 0 after an evaluation
 * (whatever it decided), 2 when packs or the event file are invalid.
 */
export async function policyEval(paths: readonly string[], eventFile: string, options: CliPolicyOptions & { json?: boolean; explain?: boolean } = {}): Promise<CliResult> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(eventFile, 'utf8'));
  } catch (err) {
    return { exitCode: 2, output: `error: ${eventFile}: cannot read the event: ${(err as Error).message}` };
  }
  const parsed = parseEvalEvent(raw);
  if (!parsed.ok) return { exitCode: 2, output: `error: ${eventFile}: ${parsed.message}` };
  return withLoadedPacks(paths, options, async ({ packs, errors }, pool) => {
    if (errors.length > 0) return loadErrorsResult(errors);
    const x = await explainEvent(new PolicySet(packs), pool, settingsFrom(options), parsed.event);
    const e = x.evaluation;
    const verdicts = e.verdicts.map((v) => ({ id: v.policy.id, mode: v.policy.mode, effect: effectOf(v) ?? 'not_applicable', reason: v.reason, error: v.error }));
    if (options.json) {
      const out: Record<string, unknown> = { decision: e.decision, effect: e.effect, reason: e.reason, policyIds: e.policyIds, defaulted: e.defaulted, verdicts, redactedResult: e.redactedResult, latencyMicros: e.latencyMicros };
      if (options.explain) out.explain = { tool: x.tool, event: parsed.event.type, policies: x.policies, otherEvents: x.otherEvents, combination: x.combination };
      return { exitCode: 0, output: JSON.stringify(out, null, 2) };
    }
    const lines = [`decision: ${e.decision}${e.defaulted ? ' (default: no enforcing policy matched)' : ''}`];
    if (e.reason) lines.push(`reason: ${e.reason}`);
    if (verdicts.length === 0) lines.push('no candidate policy');
    for (const v of verdicts) {
      lines.push(`  ${v.id} [${v.mode}]: ${v.effect}${v.error ? ` (failed: ${v.error})` : v.reason ? ` (${v.reason})` : ''}`);
    }
    if (e.redactedResult) lines.push(`redacted content: ${e.redactedResult.content}`);
    if (options.explain) lines.push(...explainLines(x, String(parsed.event.type)));
    lines.push(`latency: ${e.latencyMicros.toFixed(1)}µs`);
    return { exitCode: 0, output: lines.join('\n') };
  });
}

function explainLines(x: EventExplanation, event: string): string[] {
  const lines = [`explain: ${x.tool} on ${event}, ${x.policies.length} polic${x.policies.length === 1 ? 'y' : 'ies'} listening`];
  for (const p of x.policies) lines.push(...policyLines(p));
  if (x.otherEvents.length > 0) lines.push(`  not on ${event}: ${x.otherEvents.join(', ')}`);
  lines.push('combination:', ...x.combination.map((l) => `  ${l}`));
  return lines;
}

/** One policy's explanation, indented: matchers, when and its branch points, outcome. */
export function policyLines(p: PolicyExplanation): string[] {
  const lines = [`  ${p.id} [${p.mode}] (pack ${p.pack}${p.event !== 'beforeToolCall' ? `, as ${p.event}` : ''})`];
  lines.push(p.match ? `    match /${p.match.pattern}/: ${p.match.hit ? 'hit' : 'miss'}` : '    match: every tool');
  for (const a of p.args) lines.push(`    args.${a.key} /${a.pattern}/: ${a.hit ? 'hit' : 'miss'}`);
  if (p.module) lines.push(`    module ${p.module}`);
  if (p.when) {
    const value = p.when.error !== undefined ? `error: ${p.when.error}` : p.when.value === undefined ? 'undefined' : JSON.stringify(p.when.value);
    lines.push(`    when ${oneLine(p.when.source)} → ${value}`);
    for (const b of p.when.branches) {
      const seen = b.outcomes.length === 0 ? 'not evaluated' : [...new Set(b.outcomes)].map((o) => (b.kind === 'condition' ? (o ? 'then' : 'else') : String(o))).join(', ');
      lines.push(`      ${b.kind === 'condition' ? '? test' : `${b.operator} operand`} ${oneLine(b.text)}: ${seen}`);
    }
  } else if (p.candidate === false && p.args.length === 0 && !p.match) lines.push('    (not evaluated)');
  lines.push(`    → ${p.outcome}`);
  return lines;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 100 ? `${flat.slice(0, 97)}…` : flat;
}
