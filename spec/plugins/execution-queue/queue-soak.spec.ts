import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, type Kernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import type { HookgateConfig } from '../../../config/defaults.js';
import { TERMINAL_STATUSES } from '../../../kernel/store.js';
import { readStore } from '../../helpers/cli-process.js';
import {
  freePort, killWorker, probeCalls, redisServer, startServe, startWorker, stopRedis, TRIAGE, until, useQueueStore, writeProbePlugin, type WorkerProcess,
} from './queue-fixtures.js';

/** Messages sent over HTTP to `hookgate serve` (the Triage agent function: one tool call each). */
const MESSAGES = 100;
/** Operations admitted by a library process whose one tool call (a 3 s wait, as on I/O) waits for an approval the spec gives. */
const APPROVALS = 100;
/** Worker SIGKILLs during the run (a fresh worker started after each). */
const KILLS = 4;

const CAREFUL_AGENT = `id: careful
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: probe, apiName: wait, args: { ms: 3000 } } ]
    - text: approved and waited
tools: [probe/*]
approval: { tools: [probe/wait] }
`;

/**
 * Issue 16's "done when" on real engines: `hookgate serve` and two `hookgate
 * worker` processes on PostgreSQL (own schema) and a Redis of the spec's own,
 * 200 operations with tool calls and approvals, workers SIGKILLed again and
 * again, Redis restarted once (every job lost); then, in the database: every
 * operation done, each tool result stored once, every admitted submission
 * completed, and each conversation's stream complete.
 */
describe('execution-queue soak: hookgate serve and two workers on PostgreSQL, SIGKILLs and a Redis restart', function () {
  this.timeout(300_000);
  const store = useQueueStore('postgres');
  let dir: string;
  let redis: ChildProcess | undefined;
  let serve: ChildProcess | undefined;
  let api: Kernel<HookgateConfig> | undefined;
  const workers: WorkerProcess[] = [];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-soak-')));
    await mkdir(path.join(dir, 'redis'));
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await killWorker(w);
    if (serve && serve.exitCode === null) {
      serve.removeAllListeners('close');
      const gone = new Promise((r) => serve!.once('close', r));
      serve.kill('SIGKILL');
      await gone;
    }
    await api?.stop().catch(() => undefined);
    api = undefined;
    await stopRedis(redis);
    await store.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it(`${MESSAGES} messages over HTTP and ${APPROVALS} approved operations: ${KILLS} worker SIGKILLs and a Redis restart later, every operation is done, each tool result stored once, no submission missing, every stream complete`, async () => {
    const port = await freePort();
    redis = await redisServer(port, path.join(dir, 'redis'));
    const plugin = await writeProbePlugin(dir);
    await writeFile(
      path.join(dir, 'hookgate.config.yaml'),
      `execution: queue\nqueue: { redis: { url: redis://127.0.0.1:${port} }, prefix: soak, concurrency: 4 }\nruntime: { leaseMs: 1500 }\nlog: { level: error }\n${store.configLines()}${plugin}`,
    );
    await writeFile(path.join(dir, 'careful.yaml'), CAREFUL_AGENT);
    const startOne = () => startWorker(dir, {}, [TRIAGE, path.join(dir, 'careful.yaml')]);
    workers.push(await startOne(), await startOne());
    const started = await startServe(dir);
    serve = started.child;
    api = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
    await api.start();
    loadAgentFile(path.join(dir, 'careful.yaml'), api.agents);

    const submissions: string[] = [];
    const careful: string[] = [];
    // The approver: approves each parked operation once an approve call went through (one refused during the Redis outage is retried).
    const approved = new Set<string>();
    let approving = true;
    const approver = (async () => {
      while (approving) {
        for (const id of careful) {
          if (approved.has(id) || (await api!.getOperation(id))?.status !== 'waiting_approval') continue;
          await api!.approve(id).then(() => approved.add(id), () => undefined);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const allOperations = () => readStore(dir, (s) => s.listOperations({ limit: 10_000 }));
    const unfinished = async () => (await allOperations()).filter((op) => !TERMINAL_STATUSES.has(op.status)).length;
    /** Status counts, for failure messages: `careful done: 50, Triage running: 3`. */
    const tally = async () => {
      const counts = new Map<string, number>();
      for (const op of await allOperations()) {
        const key = `${op.agentId} ${op.status}${op.error ? ` (${op.error.message})` : ''}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return [...counts].map(([k, n]) => `${k}: ${n}`).join(', ');
    };

    // The run comes in KILLS waves (the machine finishes a wave in seconds); a worker is SIGKILLed inside each wave, Redis restarted after the first kill.
    let kills = 0;
    let restarted = false;
    for (let wave = 0; wave < KILLS; wave++) {
      for (let i = wave * (MESSAGES / KILLS); i < (wave + 1) * (MESSAGES / KILLS); i++) {
        const sent = await fetch(`${started.url}/agents/Triage/issue-${i}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ kind: 'user', body: `Login fails (${i}).`, initialData: { title: `Issue ${i}` } }),
        });
        const body = await sent.text();
        assert.equal(sent.status, 202, body);
        submissions.push((JSON.parse(body) as { submissionId: string }).submissionId);
      }
      const firstOfWave = careful.length;
      for (let i = 0; i < APPROVALS / KILLS; i++) careful.push((await api.execAgent({ agentId: 'careful', prompt: `wait once approved (${careful.length})` })).operationId);
      // The victim: the live worker that last started a probe call of this wave (inside that 3 s call when killed), else the oldest live one.
      const ofWave = new Set(careful.slice(firstOfWave));
      const live = () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
      let victim: WorkerProcess | undefined;
      await until(async () => {
        const calls = (await probeCalls(dir)).filter((c) => ofWave.has(c.operationId));
        victim = live().find((w) => w.child.pid === calls.at(-1)?.pid);
        return victim !== undefined;
      }, 3_000, 'a worker inside a tool call', 20).catch(() => (victim = live()[0]));
      assert.ok((await unfinished()) > 0, `kill ${kills + 1} came before the end of the run: ${await tally()}; probe calls ${(await probeCalls(dir)).length}; ${JSON.stringify(await readStore(dir, (st) => st.listMessages(careful[0]!)))}`);
      await killWorker(victim!);
      kills += 1;
      workers.push(await startOne());
      if (!restarted) {
        await stopRedis(redis);
        await new Promise((r) => setTimeout(r, 1000));
        redis = await redisServer(port, path.join(dir, 'redis'));
        restarted = true;
        // Admission right after the restart is refused (QUEUE_UNAVAILABLE) until the admitting processes' clients reconnect.
        await new Promise((r) => setTimeout(r, 3000));
      }
    }

    try {
      await until(async () => (await unfinished()) === 0 && (await allOperations()).length >= MESSAGES + APPROVALS, 180_000, 'every operation terminal', 500);
    } finally {
      approving = false;
      await approver;
    }

    const probe = await probeCalls(dir);
    const byPid = new Map<number, number>();
    for (const c of probe) byPid.set(c.pid, (byPid.get(c.pid) ?? 0) + 1);
    assert.ok([...byPid.keys()].every((pid) => workers.some((w) => w.child.pid === pid)), `every probe call ran in a worker: ${JSON.stringify([...byPid])} workers ${workers.map((w) => w.child.pid).join(' ')} spec ${process.pid}`);
    await readStore(dir, async (s) => {
      const ops = await s.listOperations({ limit: 10_000 });
      assert.equal(ops.length, MESSAGES + APPROVALS, 'one operation per message and per execAgent');
      for (const op of ops) {
        assert.equal(op.status, 'done', `${op.id} (${op.agentId}) ended ${op.status} ${op.error?.message ?? ''}`);
        const tools = (await s.listMessages(op.id)).filter((m) => m.role === 'tool');
        const callIds = tools.map((m) => (m as { toolCallId?: string }).toolCallId);
        assert.equal(tools.length, 1, `${op.id}: its one tool result stored once (got ${tools.length})`);
        assert.equal(new Set(callIds).size, 1);
      }
      for (const id of careful) {
        assert.ok(approved.has(id), `${id} was approved`);
        assert.equal((await s.getOperation(id))?.state.lastText, 'approved and waited');
        assert.ok(probe.some((c) => c.operationId === id), `${id}: the approved call ran in a worker`);
      }
      for (const id of submissions) {
        const sub = await s.getSubmission(id);
        assert.equal(sub?.status, 'completed', `submission ${id} is ${sub?.status ?? 'missing'}`);
      }
    });
    for (let i = 0; i < MESSAGES; i++) {
      const chunks = (await (await fetch(`${started.url}/agents/Triage/issue-${i}`)).json()) as Array<{ type: string; delta?: string }>;
      const types = chunks.map((c) => c.type);
      assert.equal(types.filter((t) => t === 'submission-settled').length, 1, `issue-${i}: the stream ends settled once: ${types.join(' ')}`);
      assert.equal(types.filter((t) => t === 'tool-output').length, 1, `issue-${i}: one tool output in the stream: ${types.join(' ')}`);
      assert.match(chunks.filter((c) => c.type === 'message-delta').map((c) => c.delta).join(''), /Labelled it a bug/);
    }
    assert.equal(kills, KILLS);
    assert.ok(restarted);
  });
});
