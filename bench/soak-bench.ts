/**
 * Soak benchmark (issue 12 item 4, bounded storage): one long-lived kernel
 * runs 20,000 conversations (the step-loop conversation: 20 tool calls, then
 * a text; a policy pack that allows the tool, so every call also writes a
 * decision) and, every 1,000, reports the SQLite file size (database + WAL)
 * and the V8 heap after a full collection: with retention on they level off,
 * without it they grow with every conversation.
 *
 *   node --expose-gc dist/bench/soak-bench.js [--conversations 20000] [--sample 1000] [--keep 1000] [--json]
 *   node --expose-gc dist/bench/soak-bench.js --only sqlite-retention,memory-retention
 *
 * Each case runs in its own child process (this file with `--case <name>`),
 * so heaps and files are per case; the cases run one after another. With
 * retention on, the config is `retention: { maxOperations: <keep>,
 * decisionLog: { maxEntries: <keep * 20> }, interval: 1s }`: the bundled
 * store-retention plugin prunes in the background while the conversations
 * run, as in a long-lived server. See bench/README.md, "Issue 12: bounded storage".
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createKernel, loadConfig } from '../index.js';
import { createLogger } from '../kernel/logger.js';
import { definePlugin } from '../kernel/plugin.js';
import { ToolSources } from '../kernel/tokens.js';
import type { ToolSource } from '../kernel/tools.js';
import type { Kernel } from '../kernel/kernel.js';

const CASES = ['sqlite-retention', 'sqlite-unbounded', 'memory-retention', 'memory-unbounded'] as const;
type CaseName = (typeof CASES)[number];
const TOOL_CALLS = 20;
const AGENT_ID = 'soak-agent';

const { values } = parseArgs({
  options: {
    case: { type: 'string' },
    only: { type: 'string' },
    conversations: { type: 'string', default: '20000' },
    sample: { type: 'string', default: '1000' },
    keep: { type: 'string', default: '1000' },
    json: { type: 'boolean', default: false },
  },
});
const conversations = whole('conversations', values.conversations!);
const sampleEvery = whole('sample', values.sample!);
const keep = whole('keep', values.keep!);

/** One sample, after `conversations` conversations. */
interface Sample {
  conversations: number;
  /** Database file plus WAL, bytes (0 for the memory store). */
  fileBytes: number;
  /** V8 used heap after a full collection, bytes. */
  heapBytes: number;
  rssBytes: number;
  /** Operations and decisions the store holds now. */
  operations: number;
  decisions: number;
  /** Conversations per second since the previous sample (wall clock). */
  rate: number;
  /** Background prune passes that removed something, so far (from the plugin's log). */
  prunes: number;
}

if (values.case !== undefined) await runCase(values.case as CaseName);
else await parent();

async function parent(): Promise<void> {
  const only = values.only ? values.only.split(',').map((s) => s.trim()) : [...CASES];
  for (const name of only) if (!CASES.includes(name as CaseName)) throw new Error(`unknown case "${name}" (have: ${CASES.join(', ')})`);
  const results: Record<string, Sample[]> = {};
  const load: string[] = [uptime()];
  for (const name of only) {
    process.stderr.write(`${name}: ${conversations.toLocaleString('en-US')} conversations, a sample every ${sampleEvery.toLocaleString('en-US')}\n`);
    results[name] = await child(name);
    load.push(uptime());
  }
  if (values.json) {
    process.stdout.write(JSON.stringify({ conversations, sampleEvery, keep, node: process.version, load, results }, null, 2) + '\n');
    return;
  }
  process.stdout.write(`node ${process.version}, ${os.cpus().length} CPUs; retention: maxOperations ${keep}, decisionLog.maxEntries ${keep * TOOL_CALLS}, interval 1s\n`);
  process.stdout.write(`load (uptime) before and after each case:\n${load.map((l) => `  ${l}`).join('\n')}\n\n`);
  const header = ['conversations', ...only.flatMap((n) => (n.startsWith('sqlite') ? [`${n} file MB`, `${n} heap MB`] : [`${n} heap MB`]))];
  process.stdout.write(`| ${header.join(' | ')} |\n| ${header.map(() => '---').join(' | ')} |\n`);
  const rows = results[only[0]!]!.length;
  for (let i = 0; i < rows; i++) {
    const cells = [results[only[0]!]![i]!.conversations.toLocaleString('en-US')];
    for (const n of only) {
      const s = results[n]![i]!;
      if (n.startsWith('sqlite')) cells.push(mb(s.fileBytes));
      cells.push(mb(s.heapBytes));
    }
    process.stdout.write(`| ${cells.join(' | ')} |\n`);
  }
  process.stdout.write('\n| case | conversations/s (median of samples) | operations held at the end | decisions held at the end | passes that pruned |\n| --- | --- | --- | --- | --- |\n');
  for (const n of only) {
    const samples = results[n]!;
    const last = samples[samples.length - 1]!;
    process.stdout.write(`| ${n} | ${median(samples.map((s) => s.rate)).toFixed(0)} | ${last.operations.toLocaleString('en-US')} | ${last.decisions.toLocaleString('en-US')} | ${last.prunes} |\n`);
  }
}

/** Runs one case in a child process with --expose-gc; resolves with its samples (one JSON line each on stdout). */
function child(name: string): Promise<Sample[]> {
  const self = fileURLToPath(import.meta.url);
  const args = ['--expose-gc', self, '--case', name, '--conversations', String(conversations), '--sample', String(sampleEvery), '--keep', String(keep)];
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${name} exited with ${code}`));
      resolve(out.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Sample));
    });
  });
}

async function runCase(name: CaseName): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the case with --expose-gc');
  const store = name.startsWith('sqlite') ? 'sqlite' : 'memory';
  const retention = name.endsWith('-retention');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hookgate-soak-'));
  const dbFile = path.join(dir, 'soak.db');
  mkdirSync(path.join(dir, 'policies'));
  writeFileSync(path.join(dir, 'policies', 'soak.yaml'), "name: soak\npolicies:\n  - id: soak.allow-noop\n    match: '^bench/noop$'\n    effect: allow\n");
  if (retention) {
    writeFileSync(path.join(dir, 'hookgate.config.yaml'), `retention:\n  maxOperations: ${keep}\n  decisionLog: { maxEntries: ${keep * TOOL_CALLS} }\n  interval: 1s\n`);
  }
  const env: NodeJS.ProcessEnv = { HOOKGATE_STORE__DRIVER: store, HOOKGATE_LOG__LEVEL: 'info' };
  if (store === 'sqlite') env.HOOKGATE_STORE__SQLITE__PATH = dbFile;
  let prunes = 0;
  const config = loadConfig({ cwd: dir, env });
  const logger = createLogger({
    level: 'info',
    sink: (line) => {
      if (line.includes('"storage pruned"')) prunes++;
      else if (line.includes('"level":"error"') || line.includes('"level":"warn"')) process.stderr.write(line + '\n');
    },
  });
  const kernel: Kernel = createKernel({ config, logger, plugins: [benchTools()], env: {} });
  await kernel.start();
  const turns = [...Array.from({ length: TOOL_CALLS }, (_, i) => ({ toolCalls: [{ identifier: 'bench', apiName: 'noop', args: { i } }] })), { text: 'done' }];
  kernel.agents.define({ id: AGENT_ID, model: { provider: 'scripted', turns }, tools: ['bench/*'], limits: { maxSteps: 100 } });
  let since = process.hrtime.bigint();
  try {
    for (let i = 1; i <= conversations; i++) {
      const record = await (await kernel.execAgent({ agentId: AGENT_ID, prompt: `Conversation ${i}: call the tool ${TOOL_CALLS} times.` })).completed();
      if (record.reason !== 'done') throw new Error(`conversation ${i} ended with ${record.reason ?? record.status}: ${record.error?.message ?? ''}`);
      // A server turns its event loop between requests; this loop alone never would (the scripted model, the no-op
      // tool and both stores answer without I/O), and the retention timer and the decision log's batched writes wait for it.
      await new Promise((resolve) => setImmediate(resolve));
      if (i % sampleEvery !== 0) continue;
      const elapsed = Number(process.hrtime.bigint() - since) / 1e9;
      gc();
      const sample: Sample = {
        conversations: i,
        fileBytes: store === 'sqlite' ? sizeOf(dbFile) + sizeOf(`${dbFile}-wal`) : 0,
        heapBytes: process.memoryUsage().heapUsed,
        rssBytes: process.memoryUsage().rss,
        operations: (await kernel.store.findOperationIds('', Number.MAX_SAFE_INTEGER)).length,
        decisions: (await kernel.store.listDecisions()).length,
        rate: sampleEvery / elapsed,
        prunes,
      };
      process.stdout.write(JSON.stringify(sample) + '\n');
      process.stderr.write(`  ${name} ${i}: file ${mb(sample.fileBytes)} MB, heap ${mb(sample.heapBytes)} MB, ${sample.operations} operations, ${sample.rate.toFixed(0)} conv/s\n`);
      since = process.hrtime.bigint();
    }
  } finally {
    await kernel.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One no-op tool, `bench/noop`, as the step-loop bench has. */
function benchTools() {
  const source: ToolSource = {
    id: 'bench',
    list: () => [{
      identifier: 'bench',
      apiName: 'noop',
      description: 'Does nothing.',
      parameters: { type: 'object', properties: { i: { type: 'number' } }, required: ['i'] },
      toolSource: 'builtin',
    }],
    execute: async () => 'ok',
  };
  return definePlugin({ id: 'bench-tools', description: 'one no-op tool for the soak benchmark', provides: [ToolSources], register: (ctx) => ctx.bindValue(ToolSources, source) });
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function uptime(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `loadavg ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`;
  }
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function whole(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: expected a whole number above 0, got ${text}`);
  return n;
}
