/**
 * Store contract benchmark: steps committed per second, store-sqlite and
 * store-postgres side by side (issue 16), on the same conversations.
 *
 *   node dist/bench/store-commit.js [--conversations 100] [--warmup 10] [--concurrency 1,8] [--stores sqlite,postgres] [--json]
 *
 * A conversation is one createOperation and 42 commits shaped like the step
 * loop's (as bench/sqlite-commit.ts): 41 with the state, one step and one
 * message, then one with status `done`. With concurrency N, N conversations
 * run at once (N operations, as N runners in one process would; SQLite
 * serializes them on its one connection, PostgreSQL spreads them over its
 * pool). SQLite: a fresh file in a temp folder. PostgreSQL: a fresh schema on
 * the server of HOOKGATE_BENCH_PG_HOST / _PORT / _DATABASE / _USER (default
 * 127.0.0.1:5432, database test, user postgres), dropped at the end.
 * Reports commits per second and the p50/p99 of single commits. See
 * bench/README.md, section "Store commit: SQLite and PostgreSQL".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { StepCommit, Store } from '../kernel/store.js';
import { SqliteStore } from '../plugins/store-sqlite/sqlite-store.js';
import { initialState, stepCommit } from './bench-step-commits.js';
import { PostgresStore } from '../plugins/store-postgres/postgres-store.js';

const STEPS = 41;

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '1,8' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    json: { type: 'boolean', default: false },
  },
});

const server = {
  host: process.env.HOOKGATE_BENCH_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.HOOKGATE_BENCH_PG_PORT ?? 5432),
  database: process.env.HOOKGATE_BENCH_PG_DATABASE ?? 'test',
  user: process.env.HOOKGATE_BENCH_PG_USER ?? 'postgres',
};
const agent = { id: 'bench-agent', model: 'scripted', tools: ['bench/*'] };

async function conversation(store: Store, id: string, samples?: number[]): Promise<number> {
  const state = initialState();
  await store.createOperation({ id, agentId: agent.id, agent, context: {}, state }, [{ role: 'user', content: 'call the tool 20 times' }], []);
  const commits = [...Array.from({ length: STEPS }, (_, s) => stepCommit(id, s, state)), { state: { ...state, stepIndex: STEPS }, status: 'done', reason: 'done' } as StepCommit];
  for (const commit of commits) {
    const t0 = process.hrtime.bigint();
    await store.commitStep(id, commit);
    samples?.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  return commits.length;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** `conversations` conversations, `concurrency` at a time; commits per second over all of them. */
async function measure(store: Store, label: string, concurrency: number, conversations: number, warmup: number) {
  for (let i = 0; i < warmup; i++) await conversation(store, `op_warm_${label}_${concurrency}_${i}`);
  const samples: number[] = [];
  let next = 0;
  let commits = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < conversations) {
      const done = await conversation(store, `op_${label}_${concurrency}_${next++}`, samples);
      commits += done;
    }
  }));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  samples.sort((a, b) => a - b);
  return { store: label, concurrency, commits, commitsPerSecond: Math.round(commits / seconds), p50Micros: Math.round(percentile(samples, 50)), p99Micros: Math.round(percentile(samples, 99)) };
}

const conversations = Number(values.conversations);
const warmup = Number(values.warmup);
const levels = values.concurrency.split(',').map(Number);
const results = [];
for (const kind of values.stores.split(',')) {
  const dir = kind === 'sqlite' ? mkdtempSync(path.join(os.tmpdir(), 'hookgate-store-commit-')) : undefined;
  const schema = `hg_bench_${process.pid}_${Date.now().toString(36)}`;
  const store: Store = kind === 'sqlite'
    ? new SqliteStore({ path: path.join(dir!, 'bench.db') })
    : new PostgresStore({ ...server, schema, poolSize: Math.max(...levels) });
  try {
    await store.migrate();
    for (const level of levels) results.push(await measure(store, kind, level, conversations, warmup));
  } finally {
    await store.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (kind === 'postgres') {
      const client = new pg.Client(server);
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  }
}
if (values.json) console.log(JSON.stringify(results));
else for (const r of results) console.log(`${r.store.padEnd(8)} concurrency ${String(r.concurrency).padStart(2)}: ${r.commitsPerSecond} commits/s (${r.commits} commits), single commit p50 ${r.p50Micros} us, p99 ${r.p99Micros} us`);
