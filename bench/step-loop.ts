/**
 * Step-loop benchmark (issues 3 and 12): steps per second for scripted
 * conversations of 20, 50, 100 and 200 tool calls, hookgate (in-memory
 * store, SQLite store) side by side with the Vercel AI SDK's `generateText`
 * loop (ai 7, 6 and 5), in one invocation; with --callgrind also the
 * instructions per conversation of every contender at every length.
 *
 *   node dist/bench/step-loop.js [--calls 20,50,100,200] [--rounds 7] [--conversations 100] [--warmup 50] [--rewarm 10]
 *       [--only ai-sdk-7,hookgate-memory] [--callgrind] [--cg-conversations 40] [--cg-warmup 300] [--cg-windows 5] [--cg-node-flags --single-threaded] [--cg-jobs 1] [--cg-dir <dir>]
 *       [--json] [--save <file.json>] [--no-round-gc]
 *   node dist/bench/step-loop.js --from-json <saved --json output>      # the tables of a saved run
 *
 * Conversation counts are given for 20 tool calls per conversation; at other
 * lengths each is scaled to the same number of tool calls (x 20 / calls, at
 * least 1), so every length's round does about the same number of steps.
 *
 * A contender may be taken from another built tree (`name@<dir>` in --only,
 * e.g. `hookgate-memory@/tmp/base`: that tree's dist/bench/step-loop.js), so
 * two commits run side by side in one invocation.
 *
 * Each contender runs in its own child process (this file with `--contender
 * <name>`), so peak memory is measured per contender and the contenders do
 * not share a JIT or a heap; the parent alternates their timed rounds. See
 * bench/README.md, sections "Step loop" and "Issue 12".
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { aiSdkContender } from './step-loop/ai-sdk-contender.js';
import { countInstructions, type InstructionCount } from './step-loop/callgrind-count.js';
import { ContenderProcess, serveCommands } from './step-loop/child-protocol.js';
import { DEFAULT_TOOL_CALLS, type Contender } from './step-loop/contender.js';
import { hookgateContender } from './step-loop/hookgate-contender.js';
import { ContenderSession, type ContenderResult, type MeasureOptions } from './step-loop/measure.js';
import { printReport, type LengthResult, type Report } from './step-loop/report.js';

const CONTENDERS: Record<string, (calls: number) => Contender> = {
  'ai-sdk-7': (calls) => aiSdkContender(7, calls),
  'ai-sdk-6': (calls) => aiSdkContender(6, calls),
  'ai-sdk': (calls) => aiSdkContender(5, calls),
  'hookgate-memory': (calls) => hookgateContender('memory', calls),
  'hookgate-sqlite': (calls) => hookgateContender('sqlite', calls),
  'hookgate-memory-thread-hooks': (calls) => hookgateContender('memory', calls, { threadHooks: true }),
  'hookgate-memory-keep-all': (calls) => hookgateContender('memory', calls, { keepAll: true }),
};

/** Contenders that run only when `--only` names them (issue 15's thread-hooks cost check), not in the default peer table. */
const OPT_IN: ReadonlySet<string> = new Set(['hookgate-memory-thread-hooks', 'hookgate-memory-keep-all']);

const { values } = parseArgs({
  options: {
    contender: { type: 'string' },
    only: { type: 'string' },
    calls: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    conversations: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '50' },
    rewarm: { type: 'string', default: '10' },
    callgrind: { type: 'boolean', default: false },
    'cg-conversations': { type: 'string', default: '40' },
    'cg-warmup': { type: 'string', default: '300' },
    'cg-windows': { type: 'string', default: '5' },
    // node's flags under valgrind (--single-threaded required). --predictable-gc-schedule was tried: with V8's heap growing fixed at 30% the memory store's growing heap met a mark-compact every few windows (14 M instead of 6.5 M per conversation), so it is not the default.
    'cg-node-flags': { type: 'string', default: '--single-threaded' },
    'cg-jobs': { type: 'string', default: '1' },
    'cg-dir': { type: 'string' },
    json: { type: 'boolean', default: false },
    // Writes the report's JSON to this file after every length and after the callgrind runs, so an interrupted run keeps what it measured.
    save: { type: 'string' },
    // Prints the tables of a saved --json (or --save) run instead of measuring.
    'from-json': { type: 'string' },
    // Children without --expose-gc, so no round starts with a forced gc(): V8's full collection for it drops
    // optimized code, and every round then recompiles the step loop inside its timed window.
    'no-round-gc': { type: 'boolean', default: false },
  },
});

if (values.contender !== undefined) await child(values.contender);
else if (values['from-json'] !== undefined) printReport(JSON.parse(readFileSync(values['from-json'], 'utf8')) as Report);
else await parent();

/** Child mode: one contender at one length, driven by the parent over stdin/stdout. */
async function child(name: string): Promise<void> {
  const make = CONTENDERS[name];
  if (!make) throw new Error(`unknown contender "${name}" (have: ${Object.keys(CONTENDERS).join(', ')})`);
  const calls = values.calls === undefined ? DEFAULT_TOOL_CALLS : positive('calls', values.calls);
  await serveCommands(new ContenderSession(make(calls)));
}

/** Parent mode: the wall-clock measurement of every length, then (with --callgrind) the instruction counts; one report. */
async function parent(): Promise<void> {
  const lengths = (values.calls ?? '20,50,100,200').split(',').map((s) => positive('calls', s.trim()));
  const specs = (values.only ? values.only.split(',').map((s) => s.trim()) : Object.keys(CONTENDERS).filter((n) => !OPT_IN.has(n))).map(split);
  for (const s of specs) if (!CONTENDERS[s.name]) throw new Error(`unknown contender "${s.spec}" (have: ${Object.keys(CONTENDERS).join(', ')})`);
  const base = {
    rounds: positive('rounds', values.rounds!),
    conversations: positive('conversations', values.conversations!),
    warmup: positive('warmup', values.warmup!, true),
    rewarm: positive('rewarm', values.rewarm!, true),
  };
  const report: Report = { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', platform: `${os.platform()} ${os.release()}`, loadAverage: [], lengths: [], instructions: [] };
  for (const calls of lengths) {
    const options: MeasureOptions = {
      calls,
      rounds: base.rounds,
      conversations: scaled(base.conversations, calls),
      warmup: scaled(base.warmup, calls),
      rewarm: scaled(base.rewarm, calls),
    };
    const load0 = load1();
    const results = await wallClock(specs, options);
    report.lengths.push({ calls, options, load: [load0, load1()], results } satisfies LengthResult);
    save(report);
  }
  if (values.callgrind) {
    const load0 = load1();
    await callgrind(specs, lengths, (count) => {
      report.instructions.push(count);
      save(report);
    });
    report.callgrindLoad = [load0, load1()];
  }
  report.loadAverage = os.loadavg().map((l) => Number(l.toFixed(2)));
  save(report);
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else printReport(report);
}

type Spec = { spec: string; name: string; script: string };

/** `name@<dir>`: the contender of another built tree (its dist/bench/step-loop.js), to compare two commits. */
function split(spec: string): Spec {
  const at = spec.indexOf('@');
  const self = fileURLToPath(import.meta.url);
  return at < 0 ? { spec, name: spec, script: self } : { spec, name: spec.slice(0, at), script: path.resolve(spec.slice(at + 1), 'dist', 'bench', 'step-loop.js') };
}

/** Child arguments for a length: older trees know no --calls, and issue 3's length needs none. */
function callsArgs(calls: number): string[] {
  return calls === DEFAULT_TOOL_CALLS ? [] : ['--calls', String(calls)];
}

/**
 * One child per contender, all set up and warmed up first; then round r of
 * every contender runs back to back (the order rotates each round), so each
 * round's numbers were taken under the same machine load. A round command
 * carries its untimed re-warm conversations, so the timed ones never start
 * right after the idle wait for the other contenders' rounds.
 */
async function wallClock(specs: Spec[], options: MeasureOptions): Promise<ContenderResult[]> {
  const gcFlag = values['no-round-gc'] ? [] : ['--expose-gc'];
  const children = specs.map((s) => new ContenderProcess(s.spec, [...gcFlag, s.script, '--contender', s.name, ...callsArgs(options.calls)]));
  try {
    for (const c of children) {
      log(`${options.calls} calls, ${c.name}: setup and ${options.warmup} warm-up conversations`);
      await c.send({ cmd: 'setup' });
      await c.send({ cmd: 'warmup', n: options.warmup });
    }
    for (let r = 0; r < options.rounds; r++) {
      const order = children.map((_, i) => children[(i + r) % children.length]!);
      const line: string[] = [];
      for (const c of order) {
        const { round } = await c.send({ cmd: 'round', n: options.conversations, rewarm: options.rewarm });
        line.push(`${c.name} ${Math.round(round!.ms)} ms`);
      }
      log(`${options.calls} calls, round ${r + 1}/${options.rounds}: ${line.join(', ')}`);
    }
    const results: ContenderResult[] = [];
    for (const c of children) results.push({ ...(await c.send({ cmd: 'finish' })).result!, name: c.name });
    return results;
  } finally {
    for (const c of children) c.kill();
  }
}

/** Every contender at every length under callgrind, `--cg-jobs` valgrind processes at a time (the counts do not depend on it). */
async function callgrind(specs: Spec[], lengths: number[], counted: (count: InstructionCount) => void): Promise<void> {
  const k = positive('cg-conversations', values['cg-conversations']!);
  const warmup = positive('cg-warmup', values['cg-warmup']!, true);
  const windows = positive('cg-windows', values['cg-windows']!);
  const nodeFlags = values['cg-node-flags']!.split(' ').filter(Boolean);
  if (!nodeFlags.includes('--single-threaded')) throw new Error('--cg-node-flags must include --single-threaded (no count may depend on thread timing)');
  const jobs = positive('cg-jobs', values['cg-jobs']!);
  const keep = values['cg-dir'] !== undefined;
  const dir = keep ? path.resolve(values['cg-dir']!) : mkdtempSync(path.join(os.tmpdir(), 'hookgate-callgrind-'));
  mkdirSync(dir, { recursive: true });
  const queue = lengths.flatMap((calls) => specs.map((s) => ({ s, calls })));
  try {
    const worker = async () => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        const { s, calls } = job;
        const request = { name: s.name, script: s.script, calls, warmup: scaled(warmup, calls), conversations: scaled(k, calls), windows, nodeFlags, outPrefix: path.join(dir, `${s.name}-${calls}`) };
        log(`callgrind ${s.spec}, ${calls} calls: ${request.warmup} warm-up (uninstrumented), then ${windows} windows of ${request.conversations} conversations`);
        const count = await countInstructions(request);
        log(`callgrind ${s.spec}, ${calls} calls: ${(count.perConversation / 1e6).toFixed(2)} M instructions per conversation (median; windows ${count.windows!.map((w) => (w / count.conversations / 1e6).toFixed(2)).join(', ')} M)`);
        counted({ ...count, name: s.spec });
      }
    };
    await Promise.all(Array.from({ length: jobs }, worker));
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

/** `n` conversations of 20 tool calls, as conversations of `calls` tool calls (at least 1 unless n is 0). */
function scaled(n: number, calls: number): number {
  return n === 0 ? 0 : Math.max(1, Math.round((n * DEFAULT_TOOL_CALLS) / calls));
}

function save(report: Report): void {
  if (values.save !== undefined) writeFileSync(values.save, `${JSON.stringify(report, null, 2)}\n`);
}

function load1(): number {
  return Number(os.loadavg()[0]!.toFixed(2));
}

function log(text: string): void {
  if (!values.json) process.stderr.write(`${text}\n`);
}

function positive(name: string, raw: string, allowZero = false): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) throw new Error(`--${name} must be an integer >= ${allowZero ? 0 : 1}, got "${raw}"`);
  return n;
}
