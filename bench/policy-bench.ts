/**
 * Policy engine benchmark: `node dist/bench/policy-bench.js [--skip-cedar] [--only base|names|rules|sweep]`.
 *
 * The rules of bench/policy-cases.ts ("forbid tool-i when its path argument
 * is under /secret-i/", exact names and prefixes) decided by hookgate (re2
 * matchers, main thread) and, when `@cedar-policy/cedar-wasm` is installed, by
 * Cedar, on the same events: decisions per second and p50/p99 latency, and
 * every event's decision checked on both sides against what the rules say (a
 * mismatch stops the bench, naming the event). Cases:
 *
 * - base: 100 rules, 20,000 events over 100 tools; also the no-candidate
 *   decision (target under 20 µs), a worker-hop (`when`) variant, and native
 *   RegExp vs re2 on ReDoS-shaped input;
 * - names: 100 rules (90 exact, 10 prefixes), 111,111 events over 100,081
 *   distinct tool names (issue 12: no cost from the number of names);
 * - rules: 10,000 exact rules, 1,000 events over 1,000 of their tools, 20
 *   passes on hookgate and one on Cedar (issue 12: p50 at most 20 µs);
 * - sweep: hookgate alone, 10,000 rules (9,000 exact, 1,000 prefixes), 111,111
 *   events over 100 to 100,000 distinct names.
 *
 * Results go to stdout; copy them into bench/README.md with the load average
 * the bench prints.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import RE2 from 're2';
import type { DecisionRecord } from '../kernel/store.js';
import { PolicyEngine } from '../policies/policy-engine.js';
import { baseCase, cedarPolicies, expectedDecisions, hookgatePack, mixedCase, type BenchCase, type BenchEvent, type BenchRule } from './policy-cases.js';

type Decision = 'allow' | 'deny';

interface Stats {
  name: string;
  perSecond: number;
  p50: number;
  p99: number;
  denies: number;
  /** Every decision, in order, pass after pass. */
  decisions: Decision[];
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Decides `list` `passes` times in a row after `warmup` decisions; latency per decision, throughput over the whole run. */
async function measure(
  name: string,
  list: readonly BenchEvent[],
  decide: (e: BenchEvent) => Promise<string>,
  options: { passes?: number; warmup?: number; after?: () => Promise<void> } = {},
): Promise<Stats> {
  const passes = options.passes ?? 1;
  const warmup = Math.min(options.warmup ?? 2000, list.length);
  for (let i = 0; i < warmup; i++) await decide(list[i]!);
  const total = list.length * passes;
  const latencies: number[] = new Array(total);
  const decisions: Decision[] = new Array(total);
  let denies = 0;
  const started = performance.now();
  for (let k = 0; k < total; k++) {
    const t = performance.now();
    const d = (await decide(list[k % list.length]!)) === 'deny' ? 'deny' : 'allow';
    latencies[k] = (performance.now() - t) * 1000;
    decisions[k] = d;
    if (d === 'deny') denies++;
  }
  await options.after?.();
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { name, perSecond: total / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), denies, decisions };
}

/** Fails the bench on the first event whose decision is not what the rules say, showing the event. */
function checkDecisions(what: string, list: readonly BenchEvent[], stats: Stats, expected: readonly Decision[]): void {
  for (let k = 0; k < stats.decisions.length; k++) {
    const i = k % list.length;
    if (stats.decisions[k] !== expected[i]) {
      throw new Error(`${what}: ${stats.name} decided ${stats.decisions[k]} but the rules say ${expected[i]} for event ${i} (pass ${Math.floor(k / list.length) + 1}): ${JSON.stringify(list[i])}`);
    }
  }
}

async function engineFor(yaml: string): Promise<{ engine: PolicyEngine; close: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hookgate-bench-'));
  await writeFile(path.join(dir, 'bench.yaml'), yaml);
  let recorded = 0;
  const store = {
    recordDecision: async (_r: DecisionRecord) => void recorded++,
    listDecisions: async () => [],
  };
  const engine = new PolicyEngine({ paths: [dir], store, deadlineMs: 250, maxWorkers: 2 });
  await engine.start();
  return {
    engine,
    close: async () => {
      await engine.stop();
      await rm(dir, { recursive: true, force: true });
      if (recorded === 0) throw new Error('no decision was recorded');
    },
  };
}

const hookgateDecide = (engine: PolicyEngine) => async (e: BenchEvent) => (await engine.evaluateToolCall(e as never)).effect;

/** The base case's `when` variant: the same rules as JSONata conditions, so each decision takes a worker hop. */
function whenPack(rules: readonly BenchRule[]): string {
  const lines = ['policies:'];
  rules.forEach((r, i) => lines.push(`  - id: ${r.id}`, `    match: '^tool-${i}/run$'`, '    effect: deny', `    when: '$contains(args.path, /^\\/secret-${i}\\//)'`));
  return lines.join('\n') + '\n';
}

async function hookgateOn(c: BenchCase, passes = 1): Promise<Stats> {
  const main = await engineFor(hookgatePack(c.rules));
  try {
    return await measure(`hookgate (re2) ${c.name}`, c.events, hookgateDecide(main.engine), { passes, after: () => main.engine.flush() });
  } finally {
    await main.close();
  }
}

async function benchBaseExtras(c: BenchCase): Promise<Stats[]> {
  const results: Stats[] = [];
  const main = await engineFor(hookgatePack(c.rules));
  const miss = c.events.map((e) => ({ ...e, identifier: 'unmatched-tool' }));
  results.push(await measure('hookgate no-candidate', miss, hookgateDecide(main.engine), { after: () => main.engine.flush() }));
  await main.close();
  const worker = await engineFor(whenPack(c.rules));
  const slice = c.events.slice(0, 5000);
  const w = await measure('hookgate (JSONata when, worker hop)', slice, hookgateDecide(worker.engine), { after: () => worker.engine.flush() });
  checkDecisions(c.name, slice, w, expectedDecisions(c.rules, slice));
  results.push(w);
  await worker.close();
  return results;
}

interface CedarApi {
  preparsePolicySet(id: string, policies: { staticPolicies: string }): { type: string; errors?: unknown[] };
  statefulIsAuthorized(call: unknown): { type: string; response?: { decision: string }; errors?: unknown[] };
}

let cedarModule: CedarApi | null | undefined;

/** Cedar, if installed and not skipped (`--skip-cedar`). */
async function loadCedar(): Promise<CedarApi | undefined> {
  if (cedarModule !== undefined) return cedarModule ?? undefined;
  if (process.argv.includes('--skip-cedar')) return (cedarModule = null) ?? undefined;
  try {
    const moduleName = '@cedar-policy/cedar-wasm/nodejs';
    cedarModule = (await import(moduleName)) as CedarApi;
  } catch {
    console.log('cedar: @cedar-policy/cedar-wasm is not installed; skipping the Cedar half');
    cedarModule = null;
  }
  return cedarModule ?? undefined;
}

/**
 * Cedar half: the same rules as Cedar policies, preparsed once (Cedar's
 * fastest path, `statefulIsAuthorized`), `context.tool` for prefix rules.
 */
async function cedarOn(c: BenchCase, id: string, warmup = 2000): Promise<Stats | undefined> {
  const cedar = await loadCedar();
  if (!cedar) return undefined;
  const parsed = cedar.preparsePolicySet(id, { staticPolicies: cedarPolicies(c.rules) });
  if (parsed.type !== 'success') throw new Error(`cedar rejected the policies: ${JSON.stringify(parsed.errors)}`);
  return measure(
    `cedar-wasm (preparsed) ${c.name}`,
    c.events,
    async (e) => {
      const tool = `${e.identifier}/${e.apiName}`;
      const answer = cedar.statefulIsAuthorized({
        principal: { type: 'Agent', id: 'bench' },
        action: { type: 'Action', id: 'call' },
        resource: { type: 'Tool', id: tool },
        context: { path: e.args.path, tool },
        preparsedPolicySetId: id,
        entities: [],
      });
      if (answer.type !== 'success') throw new Error(`cedar failed: ${JSON.stringify(answer.errors)}`);
      return answer.response?.decision === 'deny' ? 'deny' : 'allow';
    },
    { warmup },
  );
}

function benchRedos(): void {
  console.log('\nReDoS-shaped /(a+)+$/ on "a"*n + "!":');
  for (const n of [20, 22, 24, 26]) {
    const input = 'a'.repeat(n) + '!';
    let t = performance.now();
    /(a+)+$/.test(input);
    const native = performance.now() - t;
    t = performance.now();
    new RE2('(a+)+$').test(input);
    const re2 = performance.now() - t;
    console.log(`  n=${n}: native RegExp ${native.toFixed(2)} ms, re2 ${re2.toFixed(3)} ms, ratio ${(native / re2).toFixed(0)}x`);
  }
  const long = 'a'.repeat(100_000) + '!';
  const t = performance.now();
  new RE2('(a+)+$').test(long);
  console.log(`  n=100000: re2 ${(performance.now() - t).toFixed(2)} ms (native RegExp would not finish)`);
}

function print(s: Stats): void {
  console.log(`${s.name.padEnd(58)} ${s.perSecond.toFixed(0).padStart(9)} decisions/s   p50 ${s.p50.toFixed(1).padStart(7)} µs   p99 ${s.p99.toFixed(1).padStart(8)} µs   denies ${s.denies}`);
}

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

/** hookgate and Cedar on one case, each event checked on both sides; prints both and the ratio. */
async function sideBySide(c: BenchCase, id: string, options: { hookgatePasses?: number; cedarWarmup?: number } = {}): Promise<Stats> {
  console.log(`\n${c.name}: ${c.rules.length} rules, ${c.events.length} events, ${c.distinctNames} distinct tool names (load ${load()})`);
  const expected = expectedDecisions(c.rules, c.events);
  const h = await hookgateOn(c, options.hookgatePasses);
  checkDecisions(c.name, c.events, h, expected);
  print(h);
  const cedar = await cedarOn(c, id, options.cedarWarmup);
  if (cedar) {
    checkDecisions(c.name, c.events, cedar, expected);
    print(cedar);
    console.log(`  same decision on all ${c.events.length} events (${h.denies / (options.hookgatePasses ?? 1)} denies); hookgate/cedar throughput ${(h.perSecond / cedar.perSecond).toFixed(1)}x; p50 ${h.p50.toFixed(1)} vs ${cedar.p50.toFixed(1)} µs; p99 ${h.p99.toFixed(1)} vs ${cedar.p99.toFixed(1)} µs`);
  } else console.log(`  decisions checked against the rules on all ${c.events.length} events`);
  return h;
}

async function benchBase(): Promise<void> {
  const c = baseCase();
  console.log(`${c.rules.length} rules, ${c.events.length} events (25% forbidden) (load ${load()})\n`);
  const expected = expectedDecisions(c.rules, c.events);
  const main = await hookgateOn(c);
  checkDecisions(c.name, c.events, main, expected);
  const hookgate = [main, ...(await benchBaseExtras(c))];
  hookgate.forEach(print);
  const cedar = await cedarOn(c, 'base');
  if (cedar) {
    checkDecisions(c.name, c.events, cedar, expected);
    print(cedar);
    console.log(`\nhookgate/cedar throughput ${(main.perSecond / cedar.perSecond).toFixed(1)}x (target >= 5x); p99 ${main.p99.toFixed(1)} vs ${cedar.p99.toFixed(1)} µs (target: no worse)`);
  }
  console.log(`no-candidate p50 ${hookgate[1]!.p50.toFixed(1)} µs (target < 20 µs)`);
  benchRedos();
}

/** Issue 12: 100,000 distinct tool names (100 rules, so Cedar can decide every event too). */
async function benchNames(): Promise<void> {
  const h = await sideBySide(mixedCase('100 rules, 100,000 tool names', 90, 10, 111_111, 111_111), 'names');
  console.log(`  100,000 names: hookgate p50 ${h.p50.toFixed(1)} µs (the base case's, with 100 names, is the reference)`);
}

/** Issue 12: 10,000 re2-only rules; Cedar takes tens of ms per decision here, so it decides the 1,000 events once. */
async function benchRules(): Promise<void> {
  const c = mixedCase('10,000 rules', 10_000, 0, 1000, 1000, [75, 0, 25]);
  const h = await sideBySide(c, 'rules', { hookgatePasses: 20, cedarWarmup: 50 });
  console.log(`  10,000 rules: hookgate p50 ${h.p50.toFixed(1)} µs (target <= 20 µs)`);
}

/** Issue 12: hookgate alone, the same 10,000 rules and 100,000 events over more and more distinct names. */
async function benchSweep(): Promise<void> {
  console.log(`\nsweep: 10,000 rules (9,000 exact, 1,000 prefixes), 111,111 events (load ${load()})`);
  for (const names of [100, 4096, 10_000, 111_111]) {
    const c = mixedCase(`10,000 rules, ${names} name slots`, 9000, 1000, names, 111_111);
    const h = await hookgateOn(c);
    checkDecisions(c.name, c.events, h, expectedDecisions(c.rules, c.events));
    print({ ...h, name: `hookgate ${c.distinctNames} distinct names` });
  }
  console.log(`  decisions checked against the rules on every event (load ${load()})`);
}

async function main(): Promise<void> {
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
  const run = (name: string) => only === undefined || only === name;
  if (run('base')) await benchBase();
  if (run('names')) await benchNames();
  if (run('rules')) await benchRules();
  if (run('sweep')) await benchSweep();
  console.log(`\nload average at the end: ${load()}`);
}

await main();
