/**
 * Queue mode throughput (issue 16): operations per second with 1 and with 2
 * `hookgate worker` processes on one SQLite file and the local Redis, on
 * operations whose tools wait on I/O (a timer standing in for a network
 * call). Each operation is five steps: a model turn, a tool call that waits
 * `--wait-ms`, a model turn, the same tool again, the final answer. The
 * clock runs from the first admission to the last operation done; admission
 * is this process (the API process), which only enqueues. Each admission
 * (`execAgent`: store the operation, enqueue its first step) is timed on its
 * own while the workers are already busy with the earlier ones: admissions
 * per second over the admission phase, and their p50 / p99 latency.
 *
 *   node dist/bench/queue-bench.js [--operations 200] [--wait-ms 100] [--concurrency 8] [--workers 1,2]
 *
 * Progress on stderr, the table on stdout; exit 1 only when an operation did not end `done`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createKernel } from '../index.js';
import { loadConfig } from '../config/load-config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const REDIS_URL = 'redis://127.0.0.1:6379';

const { values } = parseArgs({
  options: {
    operations: { type: 'string', default: '200' },
    'wait-ms': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '8' },
    workers: { type: 'string', default: '1,2' },
  },
});
const OPERATIONS = Number(values.operations);
const WAIT_MS = Number(values['wait-ms']);
const CONCURRENCY = Number(values.concurrency);
const WORKER_COUNTS = String(values.workers).split(',').map(Number);

const PROBE_MODULE = `import { definePlugin, ToolSources } from 'hookgate';
export default definePlugin({
  id: 'bench-io-tools',
  provides: [ToolSources],
  register(ctx) {
    ctx.bindValue(ToolSources, {
      id: 'io',
      list: () => [{ identifier: 'io', apiName: 'wait', toolSource: 'io', description: 'waits', parameters: { type: 'object', properties: { ms: { type: 'number' } } } }],
      execute: async (call) => { await new Promise((r) => setTimeout(r, Number(call.args.ms))); return 'waited'; },
    });
  },
});
`;

const AGENT = {
  id: 'io-bound',
  model: {
    provider: 'scripted',
    turns: [
      { toolCalls: [{ identifier: 'io', apiName: 'wait', args: { ms: WAIT_MS } }] },
      { toolCalls: [{ identifier: 'io', apiName: 'wait', args: { ms: WAIT_MS } }] },
      { text: 'done' },
    ],
  },
  tools: ['io/*'],
};

function startWorker(dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, 'worker'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('hookgate worker ready')) resolve(child);
    });
    child.on('close', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
  });
}

async function dropPrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

interface RoundResult {
  workers: number;
  seconds: number;
  opsPerSecond: number;
  notDone: number;
  admissionsPerSecond: number;
  admissionP50Ms: number;
  admissionP99Ms: number;
}

/** The `q` quantile (0..1) of `sorted` (ascending), nearest rank. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

async function round(workers: number): Promise<RoundResult> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-bench-')));
  const prefix = `hg-bench-${randomUUID().slice(0, 12)}`;
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(ROOT, path.join(dir, 'node_modules', 'hookgate'), 'dir');
  await writeFile(path.join(dir, 'io-tools.mjs'), PROBE_MODULE);
  await writeFile(
    path.join(dir, 'hookgate.config.yaml'),
    `execution: queue\nqueue: { redis: { url: ${REDIS_URL} }, prefix: ${prefix}, concurrency: ${CONCURRENCY} }\nlog: { level: error }\nplugins: { extra: [./io-tools.mjs] }\n`,
  );
  const children: ChildProcess[] = [];
  const kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
  try {
    for (let i = 0; i < workers; i++) children.push(await startWorker(dir));
    await kernel.start();
    kernel.agents.define(AGENT);
    const started = performance.now();
    const latencies: number[] = [];
    for (let i = 0; i < OPERATIONS; i++) {
      const before = performance.now();
      await kernel.execAgent({ agentId: AGENT.id, prompt: `operation ${i}` });
      latencies.push(performance.now() - before);
    }
    const admissionSeconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    let finished = 0;
    while (finished < OPERATIONS) {
      await new Promise((r) => setTimeout(r, 25));
      finished = (await kernel.listOperations({ status: 'done' })).length + (await kernel.listOperations({ status: 'error' })).length;
    }
    const seconds = (performance.now() - started) / 1000;
    const notDone = OPERATIONS - (await kernel.listOperations({ status: 'done' })).length;
    return {
      workers,
      seconds,
      opsPerSecond: OPERATIONS / seconds,
      notDone,
      admissionsPerSecond: OPERATIONS / admissionSeconds,
      admissionP50Ms: quantile(latencies, 0.5),
      admissionP99Ms: quantile(latencies, 0.99),
    };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.on('close', r)))));
    await kernel.stop();
    await dropPrefix(prefix);
    await rm(dir, { recursive: true, force: true });
  }
}

const results = [];
for (const workers of WORKER_COUNTS) {
  process.stderr.write(`${workers} worker(s): ${OPERATIONS} operations, tools waiting ${WAIT_MS} ms, ${CONCURRENCY} steps at once per worker...\n`);
  results.push(await round(workers));
}
const base = results[0]!.opsPerSecond;
process.stdout.write(`load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
process.stdout.write('| workers | seconds | operations/s | vs first | admissions/s | admission p50 | admission p99 |\n|---|---|---|---|---|---|---|\n');
for (const r of results) {
  process.stdout.write(
    `| ${r.workers} | ${r.seconds.toFixed(2)} | ${r.opsPerSecond.toFixed(1)} | ${(r.opsPerSecond / base).toFixed(2)}x | ${r.admissionsPerSecond.toFixed(0)} | ${r.admissionP50Ms.toFixed(1)} ms | ${r.admissionP99Ms.toFixed(1)} ms |\n`,
  );
}
process.exitCode = results.some((r) => r.notDone > 0) ? 1 : 0;
