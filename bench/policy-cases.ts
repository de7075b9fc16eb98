/**
 * The rule sets and events of the policy benches (bench/policy-bench.ts, and
 * bench/policy-callgrind.mjs, which imports the built copy): one definition
 * of each rule, written out as a hookgate pack and as Cedar policies, with the
 * decision it stands for, so every bench can check both engines event by event.
 *
 * A rule forbids a tool, named exactly (`match: '^tool-7/run$'`, Cedar
 * `resource == Tool::"tool-7/run"`) or by a prefix (`match: '^ns-3/'`, Cedar
 * `context.tool like "ns-3/*"`), when its `path` argument is under the rule's
 * folder (`args: { path: '^/secret-7/' }`, Cedar `context.path like "/secret-7/*"`).
 * Everything else is allowed (hookgate's default, Cedar's one `permit`).
 */

export interface BenchRule {
  id: string;
  /** The tool (`identifier/apiName`) or, for `prefix`, what its name starts with. */
  tool: string;
  kind: 'exact' | 'prefix';
  /** The folder `path` must be under for the rule to forbid. */
  secret: string;
}

export interface BenchEvent {
  identifier: string;
  apiName: string;
  args: { path: string };
  toolCallId: string;
  operationId: string;
}

export interface BenchCase {
  name: string;
  rules: BenchRule[];
  events: BenchEvent[];
  /** How many distinct tool names `events` has. */
  distinctNames: number;
}

const escapeRe = (s: string) => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

export function exactRules(count: number, from = 0): BenchRule[] {
  const out: BenchRule[] = [];
  for (let i = from; i < from + count; i++) out.push({ id: `rule-${i}`, tool: `tool-${i}/run`, kind: 'exact', secret: `/secret-${i}/` });
  return out;
}

export function prefixRules(count: number): BenchRule[] {
  const out: BenchRule[] = [];
  for (let j = 0; j < count; j++) out.push({ id: `ns-rule-${j}`, tool: `ns-${j}/`, kind: 'prefix', secret: `/secret-ns-${j}/` });
  return out;
}

function event(tool: string, path: string, i: number): BenchEvent {
  const slash = tool.indexOf('/');
  return { identifier: tool.slice(0, slash), apiName: tool.slice(slash + 1), args: { path }, toolCallId: `call-${i}`, operationId: 'bench' };
}

/** A quarter of the calls ask for a path under the rule's folder (forbidden), the rest for a work file. */
function pathFor(secret: string, i: number): string {
  return i % 4 === 0 ? `${secret}key-${i}.txt` : `/work/file-${i}.txt`;
}

/** The original bench: 100 exact rules, 20,000 events over their 100 tools. */
export function baseCase(): BenchCase {
  const rules = exactRules(100);
  const events: BenchEvent[] = [];
  for (let i = 0; i < 20_000; i++) events.push(event(rules[i % 100]!.tool, pathFor(rules[i % 100]!.secret, i), i));
  return { name: '100 rules, 100 tool names', rules, events, distinctNames: 100 };
}

/**
 * `exact` exact rules plus `prefix` prefix rules, and `count` events over
 * `names` name slots: slot n is, by `shares` (percent of slots), one of the
 * exact rules' tools (spread over all of them), a tool under one of the
 * prefixes with a name of its own (`ns-j/op-n`), or a tool no rule names
 * (`free-n/run`). Events go through the slots in order, so with `names` below
 * `count` each name comes back every `names` events.
 */
export function mixedCase(name: string, exact: number, prefix: number, names: number, count: number, shares: readonly [number, number, number] = [10, 50, 40]): BenchCase {
  const rules = [...exactRules(exact), ...prefixRules(prefix)];
  const events: BenchEvent[] = [];
  const distinct = new Set<string>();
  for (let i = 0; i < count; i++) {
    const n = i % names;
    const slot = n % 100;
    let tool: string;
    let secret: string;
    if (slot < shares[0] && exact > 0) {
      const r = rules[(n * 7919) % exact]!;
      [tool, secret] = [r.tool, r.secret];
    } else if (slot < shares[0] + shares[1] && prefix > 0) {
      const j = n % prefix;
      [tool, secret] = [`ns-${j}/op-${n}`, `/secret-ns-${j}/`];
    } else [tool, secret] = [`free-${n}/run`, '/secret-free/'];
    distinct.add(tool);
    events.push(event(tool, pathFor(secret, i), i));
  }
  return { name, rules, events, distinctNames: distinct.size };
}

/** The hookgate pack: re2 `match` and `args` only, so every decision stays on the calling thread. */
export function hookgatePack(rules: readonly BenchRule[]): string {
  const lines = ['policies:'];
  for (const r of rules) {
    const match = r.kind === 'exact' ? `^${escapeRe(r.tool)}$` : `^${escapeRe(r.tool)}`;
    lines.push(`  - id: ${r.id}`, `    match: '${match}'`, '    effect: deny', `    args: { path: '^${escapeRe(r.secret)}' }`);
  }
  return lines.join('\n') + '\n';
}

/** The same rules in Cedar: one `forbid` each, and a `permit` for everything else. */
export function cedarPolicies(rules: readonly BenchRule[]): string {
  const out = ['@id("default-permit")\npermit(principal, action, resource);'];
  for (const r of rules) {
    out.push(
      r.kind === 'exact'
        ? `@id("${r.id}")\nforbid(principal, action == Action::"call", resource == Tool::"${r.tool}") when { context.path like "${r.secret}*" };`
        : `@id("${r.id}")\nforbid(principal, action == Action::"call", resource) when { context.tool like "${r.tool}*" && context.path like "${r.secret}*" };`,
    );
  }
  return out.join('\n');
}

/** What the rules decide for `e`, worked out directly (the third opinion when the two engines disagree). */
export function expectedDecisions(rules: readonly BenchRule[], events: readonly BenchEvent[]): Array<'allow' | 'deny'> {
  const exact = new Map<string, BenchRule[]>();
  for (const r of rules) if (r.kind === 'exact') exact.set(r.tool, [...(exact.get(r.tool) ?? []), r]);
  const prefixes = rules.filter((r) => r.kind === 'prefix');
  return events.map((e) => {
    const tool = `${e.identifier}/${e.apiName}`;
    const applies = [...(exact.get(tool) ?? []), ...prefixes.filter((r) => tool.startsWith(r.tool))];
    return applies.some((r) => e.args.path.startsWith(r.secret)) ? 'deny' : 'allow';
  });
}
