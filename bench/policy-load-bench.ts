/**
 * Policies under load (issue 12, item 3): `npm run bench:policy-load`, or
 * `node dist/bench/policy-load-bench.js [workers] [maxBatch] [maxInFlight] [levels]`
 * (levels comma-separated; defaults: the engine's defaults, 1..2048).
 *
 * Every decision has three JSONata conditions (worker hops): the tool's own
 * rule ("deny tool-i when its path is under /secret-i/", 100 rules) and two
 * rules on every tool that never hold. A quarter of the events name a secret
 * path, so the right answer of each is known. At each level N, waves of N
 * decisions are started at once and awaited together (N decisions in
 * flight); per level: decisions per second (decided ones, over the waves'
 * wall clock), wrong answers (an allow that should deny, or a deny that should
 * allow, that is not an overload refusal), `policy_overloaded` refusals, and
 * p50/p99 latency of decided ones. Results go to stdout; bench/README.md
 * ("Issue 12: policies under load") records them.
 *
 * `BENCH_CALLGRIND=1`: runs one level only (the first of `levels`) after a
 * warm-up and prints `CALLGRIND_READY` / waits for a line on stdin before and
 * after the measured waves, so bench/policy-load-callgrind.mjs can zero and
 * dump the counters around them. Under valgrind threads take turns, so a
 * condition's wall clock includes the other threads' work: BENCH_DEADLINE_MS
 * (default 250) lifts the deadline there, BENCH_DECISIONS (default 4,096)
 * shortens the level.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { DecisionRecord } from '../kernel/store.js';
import { PolicyEngine } from '../policies/policy-engine.js';

const RULES = 100;
const MIN_DECISIONS_PER_LEVEL = Number(process.env.BENCH_DECISIONS ?? 4096);
const DEADLINE_MS = Number(process.env.BENCH_DEADLINE_MS ?? 250);
const DEFAULT_LEVELS = [1, 8, 64, 256, 512, 1024, 2048];

interface BenchEvent {
  identifier: string;
  apiName: string;
  args: { path: string };
  toolCallId: string;
  operationId: string;
  secret: boolean;
}

interface LevelResult {
  inFlight: number;
  decided: number;
  perSecond: number;
  wrong: number;
  overloaded: number;
  p50: number;
  p99: number;
  /** CPU time of the whole process (main thread and workers) per decided decision, µs. */
  cpuPerDecision: number;
}

function pack(): string {
  const lines = ['policies:'];
  for (let i = 0; i < RULES; i++) {
    lines.push(`  - id: rule-${i}`, `    match: '^tool-${i}/run$'`, '    effect: deny', `    when: '$contains(args.path, /^\\/secret-${i}\\//)'`);
  }
  lines.push("  - id: any-too-long", '    effect: deny', "    when: '$length(args.path) > 4096'");
  lines.push("  - id: any-traversal", '    effect: deny', "    when: '$contains(args.path, \"/../\")'");
  return lines.join('\n') + '\n';
}

let counter = 0;
function event(): BenchEvent {
  const i = counter++;
  const tool = i % RULES;
  const secret = i % 4 === 0;
  return {
    identifier: `tool-${tool}`,
    apiName: 'run',
    args: { path: secret ? `/secret-${tool}/key-${i}.txt` : `/work/file-${i}.txt` },
    toolCallId: `call-${i}`,
    operationId: 'bench',
    secret,
  };
}

/** Why decisions came out wrong, digits folded (`rule-N`), with how many: printed after the table. */
const wrongReasons = new Map<string, number>();

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function level(engine: PolicyEngine, inFlight: number, minDecisions = MIN_DECISIONS_PER_LEVEL): Promise<LevelResult> {
  const waves = Math.max(2, Math.ceil(minDecisions / inFlight));
  let wrong = 0;
  let overloaded = 0;
  let decided = 0;
  const latencies: number[] = [];
  let busy = 0;
  const cpu = process.cpuUsage();
  for (let w = 0; w < waves; w++) {
    const list = Array.from({ length: inFlight }, event);
    const started = performance.now();
    await Promise.all(
      list.map(async (e) => {
        const t = performance.now();
        const d = await engine.evaluateToolCall(e as never);
        if (d.classification === 'policy_overloaded') {
          overloaded++;
          return;
        }
        latencies.push((performance.now() - t) * 1000);
        decided++;
        if ((d.effect === 'deny') !== e.secret) {
          wrong++;
          const why = (d.reason ?? d.effect).replace(/\d+/g, 'N');
          wrongReasons.set(why, (wrongReasons.get(why) ?? 0) + 1);
        }
      }),
    );
    busy += performance.now() - started;
  }
  await engine.flush();
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const cpuPerDecision = (used.user + used.system) / decided;
  return { inFlight, decided, perSecond: decided / (busy / 1000), wrong, overloaded, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuPerDecision };
}

async function main(): Promise<void> {
  const [workersArg, batchArg, capacityArg, levelsArg] = process.argv.slice(2);
  const num = (s: string | undefined) => (s === undefined || s === '' || s === '-' ? undefined : Number(s));
  const levels = levelsArg ? levelsArg.split(',').map(Number) : DEFAULT_LEVELS;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hookgate-policy-load-'));
  await writeFile(path.join(dir, 'load.yaml'), pack());
  let recorded = 0;
  const store = { recordDecision: async (_r: DecisionRecord) => void recorded++, listDecisions: async () => [] };
  const engine = new PolicyEngine({ paths: [dir], store, deadlineMs: DEADLINE_MS, maxWorkers: num(workersArg), maxBatch: num(batchArg), maxInFlight: num(capacityArg) });
  await engine.start();
  // A base tree's engine (before issue 12) has no stats(): the bench also runs there, for the before/after table.
  const stats = () => (engine as Partial<Pick<PolicyEngine, 'stats'>>).stats?.() ?? { workers: 2, maxInFlight: Infinity, overloaded: 0, inFlight: 0 };
  const { workers, maxInFlight } = stats();
  console.log(`policy-load: ${workers} workers, maxBatch ${num(batchArg) ?? 'default (32)'}, maxInFlight ${maxInFlight}, 3 JSONata conditions per decision, deadline ${DEADLINE_MS} ms, cores ${os.availableParallelism()}, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await level(engine, 64, 2048); // warm-up: every worker compiles every rule
  if (process.env.BENCH_CALLGRIND) {
    const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
    console.log('CALLGRIND_READY');
    await lines.next();
    const r = await level(engine, levels[0]!);
    console.log(`CALLGRIND_DONE ${JSON.stringify(r)}`);
    await lines.next();
  } else {
    console.log('in flight | decisions/s | wrong | overloaded | decided | p50 µs | p99 µs | CPU µs/decision');
    for (const n of levels) {
      const r = await level(engine, n);
      console.log(`${r.inFlight} | ${Math.round(r.perSecond)} | ${r.wrong} | ${r.overloaded} | ${r.decided} | ${Math.round(r.p50)} | ${Math.round(r.p99)} | ${Math.round(r.cpuPerDecision)}`);
    }
  }
  for (const [why, n] of wrongReasons) console.log(`wrong (${n}): ${why}`);
  const overloadedTotal = stats().overloaded;
  await engine.stop();
  await rm(dir, { recursive: true, force: true });
  if (recorded === 0) throw new Error('no decision was recorded');
  console.log(`decision log records: ${recorded}; overload refusals counted by the engine: ${overloadedTotal}`);
}

await main();
