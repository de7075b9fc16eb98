/**
 * Policy engine benchmark: `node dist/bench/policy-bench.js`.
 *
 * The same 100 rules ("forbid tool-i when its path argument is under
 * /secret-i/") decided by hookgate (re2 matchers, main thread) and, when
 * `@cedar-policy/cedar-wasm` is installed, by Cedar, on the same events:
 * decisions per second and p50/p99 latency. Also: the no-candidate decision
 * latency (target under 20 µs), a worker-hop (`when`) variant for reference,
 * and native RegExp vs re2 on ReDoS-shaped input. Results go to stdout; copy
 * the ratios into bench/README.md.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import RE2 from 're2';
import type { DecisionRecord } from '../kernel/store.js';
import { PolicyEngine } from '../policies/policy-engine.js';

const RULES = 100;
const EVENTS = 20_000;

interface BenchEvent {
  identifier: string;
  apiName: string;
  args: { path: string };
  toolCallId: string;
  operationId: string;
}

interface Stats {
  name: string;
  perSecond: number;
  p50: number;
  p99: number;
  denies: number;
}

function events(): BenchEvent[] {
  const out: BenchEvent[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const tool = i % RULES;
    const secret = i % 4 === 0;
    out.push({
      identifier: `tool-${tool}`,
      apiName: 'run',
      args: { path: secret ? `/secret-${tool}/key-${i}.txt` : `/work/file-${i}.txt` },
      toolCallId: `call-${i}`,
      operationId: 'bench',
    });
  }
  return out;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(name: string, list: readonly BenchEvent[], decide: (e: BenchEvent) => Promise<string>, after?: () => Promise<void>): Promise<Stats> {
  for (const e of list.slice(0, 2000)) await decide(e); // warm-up
  const latencies: number[] = new Array(list.length);
  let denies = 0;
  const started = performance.now();
  for (let i = 0; i < list.length; i++) {
    const t = performance.now();
    if ((await decide(list[i]!)) === 'deny') denies++;
    latencies[i] = (performance.now() - t) * 1000;
  }
  await after?.();
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { name, perSecond: list.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), denies };
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

function hookgateRules(kind: 'args' | 'when'): string {
  const lines = ['policies:'];
  for (let i = 0; i < RULES; i++) {
    lines.push(`  - id: rule-${i}`, `    match: '^tool-${i}/run$'`, '    effect: deny');
    if (kind === 'args') lines.push(`    args: { path: '^/secret-${i}/' }`);
    else lines.push(`    when: '$contains(args.path, /^\\/secret-${i}\\//)'`);
  }
  return lines.join('\n') + '\n';
}

async function benchHookgate(list: BenchEvent[]): Promise<Stats[]> {
  const results: Stats[] = [];
  const main = await engineFor(hookgateRules('args'));
  results.push(await measure('hookgate (re2 args matchers)', list, async (e) => (await main.engine.evaluateToolCall(e as never)).effect, () => main.engine.flush()));
  const miss = list.map((e) => ({ ...e, identifier: 'unmatched-tool' }));
  results.push(await measure('hookgate no-candidate', miss, async (e) => (await main.engine.evaluateToolCall(e as never)).effect, () => main.engine.flush()));
  await main.close();
  const worker = await engineFor(hookgateRules('when'));
  results.push(await measure('hookgate (JSONata when, worker hop)', list.slice(0, 5000), async (e) => (await worker.engine.evaluateToolCall(e as never)).effect, () => worker.engine.flush()));
  await worker.close();
  return results;
}

interface CedarApi {
  preparsePolicySet(id: string, policies: { staticPolicies: string }): { type: string; errors?: unknown[] };
  statefulIsAuthorized(call: unknown): { type: string; response?: { decision: string }; errors?: unknown[] };
}

/**
 * Cedar half: the same rules as Cedar policies, preparsed once (Cedar's
 * fastest path, `statefulIsAuthorized`). Skipped when the package is absent.
 */
async function benchCedar(list: BenchEvent[]): Promise<Stats | undefined> {
  let cedar: CedarApi;
  try {
    const moduleName = '@cedar-policy/cedar-wasm/nodejs';
    cedar = (await import(moduleName)) as CedarApi;
  } catch {
    console.log('cedar: @cedar-policy/cedar-wasm is not installed; skipping the Cedar half');
    return undefined;
  }
  const policies = ['@id("default-permit")\npermit(principal, action, resource);'];
  for (let i = 0; i < RULES; i++) {
    policies.push(`@id("rule-${i}")\nforbid(principal, action == Action::"call", resource == Tool::"tool-${i}/run") when { context.path like "/secret-${i}/*" };`);
  }
  const parsed = cedar.preparsePolicySet('bench', { staticPolicies: policies.join('\n') });
  if (parsed.type !== 'success') throw new Error(`cedar rejected the policies: ${JSON.stringify(parsed.errors)}`);
  return measure('cedar-wasm (preparsed)', list, async (e) => {
    const answer = cedar.statefulIsAuthorized({
      principal: { type: 'Agent', id: 'bench' },
      action: { type: 'Action', id: 'call' },
      resource: { type: 'Tool', id: `${e.identifier}/${e.apiName}` },
      context: { path: e.args.path },
      preparsedPolicySetId: 'bench',
      entities: [],
    });
    if (answer.type !== 'success') throw new Error(`cedar failed: ${JSON.stringify(answer.errors)}`);
    return answer.response?.decision === 'deny' ? 'deny' : 'allow';
  });
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
  console.log(`${s.name.padEnd(40)} ${s.perSecond.toFixed(0).padStart(9)} decisions/s   p50 ${s.p50.toFixed(1).padStart(7)} µs   p99 ${s.p99.toFixed(1).padStart(8)} µs   denies ${s.denies}`);
}

async function main(): Promise<void> {
  const list = events();
  console.log(`${RULES} rules, ${list.length} events (25% forbidden)\n`);
  const hookgate = await benchHookgate(list);
  hookgate.forEach(print);
  const cedar = await benchCedar(list);
  if (cedar) {
    print(cedar);
    const h = hookgate[0]!;
    console.log(`\nhookgate/cedar throughput ${(h.perSecond / cedar.perSecond).toFixed(1)}x (target >= 5x); p99 ${h.p99.toFixed(1)} vs ${cedar.p99.toFixed(1)} µs (target: no worse)`);
  }
  const noCandidate = hookgate[1]!;
  console.log(`no-candidate p50 ${noCandidate.p50.toFixed(1)} µs (target < 20 µs)`);
  benchRedos();
}

await main();
