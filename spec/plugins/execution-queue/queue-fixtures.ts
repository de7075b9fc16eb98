import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { CLI, ROOT, cliEnv } from '../../helpers/cli-process.js';
import { TEST_POSTGRES, dropSchema, requirePostgres, uniqueSchema } from '../../helpers/postgres-fixtures.js';

/** The Redis this machine kind runs (issue 16). */
export const REDIS_URL = 'redis://127.0.0.1:6379';

/** A key prefix no other run uses: parallel spec runs on one Redis never see each other's jobs. */
export function uniquePrefix(): string {
  return `hg-spec-${randomUUID().slice(0, 12)}`;
}

/** Deletes every key under `prefix` (the queue's jobs, sets and locks). */
export async function dropPrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
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

/** The stores every queue spec runs against: one SQLite file shared by processes, and PostgreSQL (issue 16, item 6: config only). */
export const QUEUE_STORES = ['sqlite', 'postgres'] as const;
export type QueueStoreKind = (typeof QUEUE_STORES)[number];

/**
 * For a describe block on `kind`: with PostgreSQL, fails the block when the
 * server is down and gives each test its own schema; `configLines()` returns
 * the config lines that put every process of the test on it (none for SQLite:
 * the default file under .hookgate). Call `drop()` at the end of the spec's
 * own afterEach, after its processes are gone.
 */
export function useQueueStore(kind: QueueStoreKind): { configLines(): string; drop(): Promise<void> } {
  let schema: string | undefined;
  if (kind === 'postgres') before(requirePostgres);
  return {
    configLines() {
      if (kind === 'sqlite') return '';
      schema = uniqueSchema('queue');
      const { host, port, database, user } = TEST_POSTGRES;
      return `store:\n  driver: postgres\n  postgres: { host: "${host}", port: ${port}, database: ${database}, user: ${user}, schema: ${schema}, poolSize: 4 }\n`;
    },
    async drop() {
      if (schema !== undefined) await dropSchema(schema);
      schema = undefined;
    },
  };
}

/** Writes hookgate.config.yaml for queue mode in `dir`: the SQLite file under .hookgate, a short lease, the prefix. */
export async function writeQueueConfig(dir: string, prefix: string, extra = ''): Promise<void> {
  await writeFile(
    path.join(dir, 'hookgate.config.yaml'),
    `execution: queue
queue:
  redis: { url: ${REDIS_URL} }
  prefix: ${prefix}
  concurrency: 4
runtime: { leaseMs: 1500 }
log: { level: warn }
${extra}`,
  );
}

/**
 * A tool plugin (loaded with plugins.extra) whose `probe/wait` waits on a
 * timer as a tool waiting on I/O would, and first appends
 * `<pid> <operationId> <toolCallId>` to probe.log next to it: which process
 * ran which call, and how often.
 */
const PROBE_MODULE = `import { appendFileSync } from 'node:fs';
import { definePlugin, ToolSources } from 'hookgate';
const log = new URL('./probe.log', import.meta.url);
export default definePlugin({
  id: 'probe-tools',
  provides: [ToolSources],
  register(ctx) {
    ctx.bindValue(ToolSources, {
      id: 'probe',
      list: () => [
        { identifier: 'probe', apiName: 'wait', toolSource: 'probe', description: 'waits ms milliseconds', parameters: { type: 'object', properties: { ms: { type: 'number' } } } },
        { identifier: 'probe', apiName: 'later', toolSource: 'probe', description: 'answers later (deferred)', parameters: { type: 'object', properties: {} } },
      ],
      execute: async (call, ctx) => {
        appendFileSync(log, process.pid + ' ' + ctx.operationId + ' ' + ctx.toolCallId + '\\n');
        if (call.apiName === 'later') return { deferred: true };
        await new Promise((r) => setTimeout(r, Number(call.args.ms ?? 0)));
        return 'waited';
      },
    });
  },
});
`;

/** Writes the probe plugin into `dir` (with `hookgate` resolvable there) and returns the plugins.extra config line. */
export async function writeProbePlugin(dir: string): Promise<string> {
  await mkdir(path.join(dir, 'node_modules'), { recursive: true });
  await symlink(ROOT, path.join(dir, 'node_modules', 'hookgate'), 'dir');
  await writeFile(path.join(dir, 'probe-tools.mjs'), PROBE_MODULE);
  return 'plugins:\n  extra: [./probe-tools.mjs]\n';
}

/** The probe's lines: which process ran which tool call. */
export async function probeCalls(dir: string): Promise<Array<{ pid: number; operationId: string; toolCallId: string }>> {
  const text = await readFile(path.join(dir, 'probe.log'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [pid, operationId, toolCallId] = l.split(' ');
      return { pid: Number(pid), operationId: operationId!, toolCallId: toolCallId! };
    });
}

/** A probe wait (a tool waiting on I/O for `waitMs`), then a write, each after a model turn, then the end: five steps. */
export function probeAgent(waitMs: number): string {
  return `id: writer
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: probe, apiName: wait, args: { ms: ${waitMs} } } ]
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: second.txt, content: two } } ]
    - text: both written
tools: [probe/*, fs/*]
`;
}

/** Two writes, each after a model turn that waits (as a hosted model would), then the end: five steps. */
export const WRITER_AGENT = `id: writer
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: first.txt, content: one } } ]
      delayMs: 60
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: second.txt, content: two } } ]
      delayMs: 60
    - text: both written
      delayMs: 60
tools: [fs/*]
`;

/** A `hookgate worker` child process and what it printed so far. */
export interface WorkerProcess {
  child: ChildProcess;
  output: () => { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

/** Starts `hookgate worker` in `dir` and resolves once it prints that it takes jobs (rejects if it exits first). */
export function startWorker(dir: string, env: NodeJS.ProcessEnv = {}, args: readonly string[] = []): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [CLI, 'worker', ...args], { cwd: dir, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (stdout.includes('hookgate worker ready')) resolve({ child, output: () => ({ stdout, stderr }), exited });
    });
    void exited.then((code) => reject(new Error(`hookgate worker exited (${code}) before it was ready: ${stderr}`)));
  });
}

/** SIGKILLs a worker and resolves once it is gone. */
export async function killWorker(worker: WorkerProcess): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  worker.child.kill('SIGKILL');
  await worker.exited;
}

/** Polls `check` every `everyMs` until it is true; rejects with `what` after `ms`. */
export async function until(check: () => Promise<boolean>, ms: number, what: string, everyMs = 100): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A loopback port nothing listens on now (for a redis-server of a spec's own). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A Redis of this spec's own (no persistence: a restart loses every job), started and resolved once it answers. */
export function redisServer(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('Ready to accept connections')) resolve(child);
    });
    child.on('close', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
  });
}

/** SIGKILLs a redis-server started by redisServer and resolves once it is gone. */
export async function stopRedis(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  // The start-up listener would reject a promise nobody awaits any more.
  child.removeAllListeners('close');
  const gone = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGKILL');
  await gone;
}

/** The example agent function (a tool call, persistent state) that `hookgate serve` specs serve. */
export const TRIAGE = path.join(ROOT, 'dist', 'examples', 'agent-api', 'triage-agent.js');

/** `hookgate serve` in queue mode: its URL once it listens. */
export function startServe(cwd: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', TRIAGE, '--port', '0'], { cwd, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const match = /hookgate serve listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ child, url: match[1]! });
    });
    child.on('close', (code) => reject(new Error(`hookgate serve exited (${code}) before listening: ${out}`)));
  });
}
