/**
 * SQLite commit benchmark: the cost of one `commitStep` of store-sqlite, the
 * write the step loop makes after every model or tool step.
 *
 *   node dist/bench/sqlite-commit.js [--conversations 200] [--warmup 20] [--json]
 *
 * A fresh file in a temp folder (removed at the end), WAL, synchronous=NORMAL,
 * as the plugin opens it. Each conversation is one createOperation and 42
 * commits shaped like the step loop's: 41 with the state, one step and one
 * message (assistant tool call / tool result, alternating), and a final one
 * with status `done`. Reports wall and CPU time per commit over all timed
 * commits, and the p50/p99 of single commits (the p99 shows checkpoints). See
 * bench/README.md, section "SQLite commit".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { StepCommit } from '../kernel/store.js';
import { SqliteStore } from '../plugins/store-sqlite/sqlite-store.js';
import { initialState, stepCommit } from './bench-step-commits.js';

const STEPS = 41;

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
  },
});

const turns = Array.from({ length: 20 }, (_, i) => ({ toolCalls: [{ identifier: 'bench', apiName: 'noop', args: { i } }] }));
const agent = { id: 'bench-agent', model: { provider: 'scripted', turns: [...turns, { text: 'done' }] }, tools: ['bench/*'], limits: { maxSteps: 100 } };

/** Runs one conversation; with `samples`, records each commit's wall time in microseconds. */
async function conversation(store: SqliteStore, index: number, samples?: number[]): Promise<number> {
  const id = `op_bench_${index}`;
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

const conversations = Number(values.conversations);
const warmup = Number(values.warmup);
const dir = mkdtempSync(path.join(os.tmpdir(), 'hookgate-sqlite-commit-'));
const store = new SqliteStore({ path: path.join(dir, 'bench.db') });
try {
  await store.migrate();
  for (let i = 0; i < warmup; i++) await conversation(store, -1 - i);
  const samples: number[] = [];
  let commits = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < conversations; i++) commits += await conversation(store, i, samples);
  const wallMicros = Number(process.hrtime.bigint() - t0) / 1e3;
  const cpu = process.cpuUsage(cpu0);
  samples.sort((a, b) => a - b);
  const result = {
    commits,
    wallMicrosPerCommit: +(wallMicros / commits).toFixed(1),
    cpuMicrosPerCommit: +((cpu.user + cpu.system) / commits).toFixed(1),
    p50Micros: +percentile(samples, 50).toFixed(1),
    p99Micros: +percentile(samples, 99).toFixed(1),
    maxMicros: +samples[samples.length - 1]!.toFixed(1),
  };
  if (values.json) console.log(JSON.stringify(result));
  else {
    console.log(`${result.commits} commits: ${result.wallMicrosPerCommit} us/commit wall, ${result.cpuMicrosPerCommit} us/commit cpu`);
    console.log(`single commit: p50 ${result.p50Micros} us, p99 ${result.p99Micros} us, max ${result.maxMicros} us`);
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
