/**
 * Step-loop benchmark (issue 3): steps per second for conversations of 20
 * tool calls each, hookgate (in-memory store, SQLite store) side by side with
 * the Vercel AI SDK's `generateText` loop, in one invocation.
 *
 *   node dist/bench/step-loop.js [--rounds 7] [--conversations 100] [--warmup 50] [--only ai-sdk,hookgate-memory] [--json]
 *
 * The parent process runs each contender in its own child process (this file
 * with `--contender <name>`), one after another, so peak memory is measured
 * per contender and the contenders do not share a JIT or a heap. See
 * bench/README.md, section "Step loop".
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { aiSdkContender } from './step-loop/ai-sdk-contender.js';
import type { Contender } from './step-loop/contender.js';
import { hookgateContender } from './step-loop/hookgate-contender.js';
import { measure, type ContenderResult, type MeasureOptions } from './step-loop/measure.js';
import { printReport, type Report } from './step-loop/report.js';

const CONTENDERS: Record<string, () => Contender> = {
  'ai-sdk': aiSdkContender,
  'hookgate-memory': () => hookgateContender('memory'),
  'hookgate-sqlite': () => hookgateContender('sqlite'),
};

const RESULT_PREFIX = 'STEP_LOOP_RESULT ';

const { values } = parseArgs({
  options: {
    contender: { type: 'string' },
    only: { type: 'string' },
    rounds: { type: 'string', default: '7' },
    conversations: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '50' },
    json: { type: 'boolean', default: false },
  },
});

const options: MeasureOptions = {
  rounds: positive('rounds', values.rounds!),
  conversations: positive('conversations', values.conversations!),
  warmup: positive('warmup', values.warmup!, true),
};

if (values.contender !== undefined) await child(values.contender);
else await parent();

/** Child mode: measures one contender and writes its result as one JSON line. */
async function child(name: string): Promise<void> {
  const make = CONTENDERS[name];
  if (!make) throw new Error(`unknown contender "${name}" (have: ${Object.keys(CONTENDERS).join(', ')})`);
  const result = await measure(make(), options);
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

/** Parent mode: one child per contender, sequentially, then the table. */
async function parent(): Promise<void> {
  const names = values.only ? values.only.split(',').map((s) => s.trim()) : Object.keys(CONTENDERS);
  for (const n of names) if (!CONTENDERS[n]) throw new Error(`unknown contender "${n}" (have: ${Object.keys(CONTENDERS).join(', ')})`);
  const results: ContenderResult[] = [];
  for (const name of names) {
    if (!values.json) process.stderr.write(`running ${name} (${options.warmup} warm-up + ${options.rounds} x ${options.conversations} conversations)...\n`);
    results.push(await runChild(name));
  }
  const report: Report = {
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    platform: `${os.platform()} ${os.release()}`,
    options,
    results,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else printReport(report);
}

function runChild(name: string): Promise<ContenderResult> {
  const args = [
    '--expose-gc',
    fileURLToPath(import.meta.url),
    '--contender', name,
    '--rounds', String(options.rounds),
    '--conversations', String(options.conversations),
    '--warmup', String(options.warmup),
  ];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    proc.on('error', reject);
    proc.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
      if (code !== 0 || !line) return reject(new Error(`contender ${name} failed (exit code ${code})`));
      resolve(JSON.parse(line.slice(RESULT_PREFIX.length)) as ContenderResult);
    });
  });
}

function positive(name: string, raw: string, allowZero = false): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) throw new Error(`--${name} must be an integer >= ${allowZero ? 0 : 1}, got "${raw}"`);
  return n;
}
