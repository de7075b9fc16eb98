import RE2 from 're2';
import { argMatcherAccepts } from '../../../policies/policy-set.js';
import type { CompiledPolicy, PolicyEffect, PolicyEventName } from '../../../policies/policy-types.js';
import { compileRe2 } from '../../../policies/re2-compile.js';

/** A seeded PRNG (mulberry32): the same seed gives the same rule set, so a failure can be rerun. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Random = () => number;

const pick = <T>(rand: Random, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

/** Identifier and API name pieces: regex metacharacters, unicode (a surrogate pair, a lone surrogate), empty names. */
const IDENTIFIERS = ['fs', 'http', 'shell', 'ns-3', 'a.b', 'c+d', 'x(y)', '$', '^', '|', '\\', '[z]', '{1}', 'é', '中文', '😀', '', 'tool', 'fs.x', 'Fs'];
const API_NAMES = ['read', 'readFile', 'write', 'run', '', 'get', 'a.b', '*', '?', '😀x', 'é', 'r\ud800', 'run\n', 'read.*'];

/** A tool name `identifier/apiName`, from the pieces above plus a number so there can be many distinct ones. */
export function toolName(rand: Random, n?: number): { identifier: string; apiName: string } {
  const suffix = n === undefined ? '' : String(n);
  return { identifier: pick(rand, IDENTIFIERS) + (rand() < 0.5 ? suffix : ''), apiName: pick(rand, API_NAMES) + (rand() < 0.5 ? '' : suffix) };
}

export const keyOf = (t: { identifier: string; apiName: string }): string => `${t.identifier}/${t.apiName}`;

/** Escapes re2 metacharacters, so the pattern names the literal text. */
export const escapeRe = (s: string): string => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** Every kind of `match` the index reads differently, built around the known names. */
export function generateMatch(rand: Random, names: readonly string[]): string | undefined {
  const n = pick(rand, names);
  const m = pick(rand, names);
  const cut = (s: string) => s.slice(0, 1 + Math.floor(rand() * s.length));
  const p = escapeRe(cut(n));
  switch (Math.floor(rand() * 20)) {
    case 0:
    case 1:
    case 2:
    case 3:
      return `^${escapeRe(n)}$`;
    case 4:
    case 5:
      return `^${p}`;
    case 6:
      return `^${p}.*`;
    case 7:
      return pick(rand, [`^${p}[a-z]+$`, `^${p}\\d`, `^${p}.*$`, `^${p}x?y`, `^${p}(ab)+`, `^${p}$$`]);
    case 8:
      return `^${escapeRe(n.split('/')[0]!)}/(${escapeRe(m.split('/')[1] ?? '')}|read|)$`;
    case 9:
      return `^(?:${escapeRe(cut(n))}|${escapeRe(cut(m))})`;
    case 10:
      return `^(?:${escapeRe(cut(n))}|${escapeRe(cut(m))})/x?`;
    case 11:
      return `^${p}|${escapeRe(cut(m))}`;
    case 12:
      return escapeRe(cut(n.slice(Math.floor(rand() * n.length))) || 'x');
    case 13:
      return `(?i)${escapeRe(cut(n))}`;
    case 14:
      return `(?i)^${p}`;
    case 15:
      return pick(rand, [undefined, '.*', '^', '^.*']);
    case 16:
      return pick(rand, ['^.*$', '^$', '^/$', '^\\/', '^\ud800', '^r\ufffd', '\\bread\\b', '^[a-z]+/']);
    case 17:
      return `^${p}(?:${escapeRe(cut(m))}|)$`;
    case 18:
      return `^${escapeRe(n)}`;
    default:
      return pick(rand, [`^(${p})`, `${escapeRe(n)}$`, `^${p}\\$`]);
  }
}

export interface GeneratedRule {
  id: string;
  match?: string;
  events: PolicyEventName[];
  effect: PolicyEffect;
  mode?: 'shadow';
  args?: Record<string, string>;
  reason?: string;
  redact?: { pattern: string; replacement: string };
}

/** `count` rules mixing deny, allow, ask and redact on all three events, some shadow, some with `args` matchers. */
export function generateRules(rand: Random, count: number, names: readonly string[]): GeneratedRule[] {
  const rules: GeneratedRule[] = [];
  for (let i = 0; i < count; i++) {
    const kind = rand();
    const events: PolicyEventName[] = kind < 0.5 ? ['beforeToolCall'] : kind < 0.7 ? ['afterToolCall'] : kind < 0.85 ? ['onToolCallError'] : kind < 0.95 ? ['afterToolCall', 'onToolCallError'] : ['beforeToolCall', 'afterToolCall'];
    const onCall = events.includes('beforeToolCall');
    const effect: PolicyEffect = onCall ? pick(rand, events.length === 1 ? ['allow', 'allow', 'deny', 'ask'] : ['allow', 'deny']) : pick(rand, ['allow', 'allow', 'deny', 'redact']);
    const rule: GeneratedRule = { id: `p-${i}`, events, effect };
    const match = generateMatch(rand, names);
    if (match !== undefined) rule.match = match;
    // A deny or ask on every tool would decide every event alike; most of those are shadow so the others still count.
    const everyTool = match === undefined || match === '.*' || match === '^' || match === '^.*';
    if (rand() < 0.1 || (everyTool && (effect === 'deny' || effect === 'ask') && rand() < 0.9)) rule.mode = 'shadow';
    const args = rand();
    if (args < 0.1) rule.args = { path: '^/secret' };
    else if (args < 0.15) rule.args = { '*': 'token' };
    if (rand() < 0.5) rule.reason = `reason ${i}`;
    if (effect === 'redact') rule.redact = { pattern: 'secret', replacement: `[R${i}]` };
    rules.push(rule);
  }
  return rules;
}

/** A pack file (JSON is YAML) of the rules. */
export function packText(rules: readonly GeneratedRule[]): string {
  return JSON.stringify({ policies: rules });
}

/** Keys around the known names: the names, their prefixes and extensions, other cases, a newline, a lone surrogate. */
export function keysAround(rand: Random, names: readonly string[], count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = pick(rand, names);
    const variants = [n, n, n + 'x', n.slice(0, Math.floor(rand() * (n.length + 1))), n.toUpperCase(), n + '\n', '\n' + n, n.replace(/[^/]$/, '\ud800'), n + '7', keyOf(toolName(rand))];
    out.push(pick(rand, variants));
  }
  return out;
}

/** A policy as the loader would compile it (for index specs that need many rules without YAML). */
export function compiledPolicy(rule: GeneratedRule): CompiledPolicy {
  return {
    id: rule.id,
    packName: 'generated',
    packFile: 'generated.yaml',
    packVersion: 'v1',
    events: new Set(rule.events),
    ...(rule.match === undefined ? {} : { matchSource: rule.match }),
    args: Object.entries(rule.args ?? {}).map(([key, source]) => ({ path: key.split('.'), source, re: compileRe2(source) })),
    effect: rule.effect,
    ...(rule.reason === undefined ? {} : { reason: { text: rule.reason } }),
    redact: rule.redact ? [{ source: rule.redact.pattern, re: compileRe2(rule.redact.pattern, 'g'), replacement: rule.redact.replacement }] : [],
    mode: rule.mode ?? 'enforce',
    tests: [],
    needsWorker: false,
  };
}

/**
 * The candidates of one event as a plain scan decides them: every policy of
 * the event in pack order whose `match` re2 accepts (one RE2.Set pass over all
 * patterns, in sets of 10,000, which is how candidates were chosen before the
 * index) and whose `args` matchers all accept.
 */
export class NaiveScan {
  private readonly byEvent = new Map<PolicyEventName, { policies: CompiledPolicy[]; sets: Array<{ set: InstanceType<typeof RE2.Set>; policies: CompiledPolicy[] }> }>();

  constructor(policies: readonly CompiledPolicy[]) {
    for (const event of ['beforeToolCall', 'afterToolCall', 'onToolCallError'] as const) {
      const own = policies.filter((p) => p.events.has(event));
      const withMatch = own.filter((p) => p.matchSource !== undefined);
      const sets = [];
      for (let i = 0; i < withMatch.length; i += 10_000) {
        const chunk = withMatch.slice(i, i + 10_000);
        sets.push({ set: new RE2.Set(chunk.map((p) => p.matchSource!)), policies: chunk });
      }
      this.byEvent.set(event, { policies: own, sets });
    }
  }

  candidates(event: PolicyEventName, key: string, args?: Record<string, unknown>, extra: readonly string[] = []): CompiledPolicy[] {
    const { policies, sets } = this.byEvent.get(event)!;
    const hit = new Set<CompiledPolicy>();
    for (const s of sets) for (const i of s.set.match(key)) hit.add(s.policies[i]!);
    return policies.filter((p) => (p.matchSource === undefined || hit.has(p)) && p.args.every((m) => argMatcherAccepts(m, args, extra)));
  }
}
