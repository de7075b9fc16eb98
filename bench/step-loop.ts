/**
 * Step-loop benchmark (issue 3): steps per second for conversations of 20
 * tool calls each, hookgate (in-memory store, SQLite store) side by side with
 * the Vercel AI SDK's `generateText` loop, in one invocation.
 *
 *   node dist/bench/step-loop.js [--rounds 7] [--conversations 100] [--warmup 50] [--only ai-sdk,hookgate-memory] [--json] [--no-round-gc]
 *
 * A contender may be taken from another built tree (`name@<dir>` in --only,
 * e.g. `hookgate-memory@/tmp/base`: that tree's dist/bench/step-loop.js), so
 * two commits run side by side in one invocation.
 *
 * Each contender runs in its own child process (this file with `--contender
 * <name>`), so peak memory is measured per contender and the contenders do
 * not share a JIT or a heap; the parent alternates their timed rounds. See
 * bench/README.md, section "Step loop".
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { aiSdkContender } from './step-loop/ai-sdk-contender.js';
import { ContenderProcess, serveCommands } from './step-loop/child-protocol.js';
import type { Contender } from './step-loop/contender.js';
import { hookgateContender } from './step-loop/hookgate-contender.js';
import { ContenderSession, type ContenderResult, type MeasureOptions } from './step-loop/measure.js';
import { printReport, type Report } from './step-loop/report.js';

const CONTENDERS: Record<string, () => Contender> = {
  'ai-sdk': aiSdkContender,
  'hookgate-memory': () => hookgateContender('memory'),
  'hookgate-sqlite': () => hookgateContender('sqlite'),
};

const { values } = parseArgs({
  options: {
    contender: { type: 'string' },
    only: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    conversations: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '50' },
    json: { type: 'boolean', default: false },
    // Children without --expose-gc, so no round starts with a forced gc(): V8's full collection for it drops
    // optimized code, and every round then recompiles the step loop inside its timed window.
    'no-round-gc': { type: 'boolean', default: false },
  },
});

const options: MeasureOptions = {
  rounds: positive('rounds', values.rounds!),
  conversations: positive('conversations', values.conversations!),
  warmup: positive('warmup', values.warmup!, true),
};

if (values.contender !== undefined) await child(values.contender);
else await parent();

/** Child mode: one contender, driven by the parent over stdin/stdout. */
async function child(name: string): Promise<void> {
  const make = CONTENDERS[name];
  if (!make) throw new Error(`unknown contender "${name}" (have: ${Object.keys(CONTENDERS).join(', ')})`);
  await serveCommands(new ContenderSession(make()));
}

/**
 * Parent mode: one child per contender, all set up and warmed up first; then
 * round r of every contender runs back to back (the order rotates each
 * round), so each round's numbers were taken under the same machine load.
 */
async function parent(): Promise<void> {
  const names = values.only ? values.only.split(',').map((s) => s.trim()) : Object.keys(CONTENDERS);
  // `name@<dir>`: the contender of another built tree (its dist/bench/step-loop.js), to compare two commits.
  const split = (spec: string) => {
    const at = spec.indexOf('@');
    return at < 0 ? { name: spec, script: undefined } : { name: spec.slice(0, at), script: path.resolve(spec.slice(at + 1), 'dist', 'bench', 'step-loop.js') };
  };
  for (const n of names) if (!CONTENDERS[split(n).name]) throw new Error(`unknown contender "${n}" (have: ${Object.keys(CONTENDERS).join(', ')})`);
  const log = (text: string) => {
    if (!values.json) process.stderr.write(`${text}\n`);
  };
  const self = fileURLToPath(import.meta.url);
  const gcFlag = values['no-round-gc'] ? [] : ['--expose-gc'];
  const children = names.map((spec) => new ContenderProcess(spec, [...gcFlag, split(spec).script ?? self, '--contender', split(spec).name]));
  try {
    for (const c of children) {
      log(`${c.name}: setup and ${options.warmup} warm-up conversations`);
      await c.send({ cmd: 'setup' });
      await c.send({ cmd: 'warmup', n: options.warmup });
    }
    for (let r = 0; r < options.rounds; r++) {
      const order = children.map((_, i) => children[(i + r) % children.length]!);
      const line: string[] = [];
      for (const c of order) {
        const { round } = await c.send({ cmd: 'round', n: options.conversations });
        line.push(`${c.name} ${Math.round(round!.ms)} ms`);
      }
      log(`round ${r + 1}/${options.rounds}: ${line.join(', ')}`);
    }
    const results: ContenderResult[] = [];
    for (const c of children) results.push({ ...(await c.send({ cmd: 'finish' })).result!, name: c.name });
    const report: Report = {
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      platform: `${os.platform()} ${os.release()}`,
      loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
      options,
      results,
    };
    if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else printReport(report);
  } finally {
    for (const c of children) c.kill();
  }
}

function positive(name: string, raw: string, allowZero = false): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) throw new Error(`--${name} must be an integer >= ${allowZero ? 0 : 1}, got "${raw}"`);
  return n;
}
