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
import { freePort, killWorker, probeAgent, probeCalls, redisServer, startWorker, stopRedis, until, QUEUE_STORES, useQueueStore, writeProbePlugin, type WorkerProcess } from './queue-fixtures.js';

const OPERATIONS = 16;

/** Issue 16 item 5: Redis restarted mid-run (every job lost with it): workers reconnect, the sweep enqueues again, the run finishes. */
for (const kind of QUEUE_STORES) describe(`execution-queue: Redis restarted mid-run (${kind})`, function () {
  const store = useQueueStore(kind);
  this.timeout(120_000);
  let dir: string;
  let redis: ChildProcess | undefined;
  let api: Kernel<HookgateConfig> | undefined;
  const workers: WorkerProcess[] = [];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-redis-')));
    await mkdir(path.join(dir, 'redis'));
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await killWorker(w);
    await api?.stop().catch(() => undefined);
    api = undefined;
    await stopRedis(redis);
    await store.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('after a Redis restart that loses every job, the two workers reconnect and every operation still ends done, each tool result committed once', async () => {
    const port = await freePort();
    redis = await redisServer(port, path.join(dir, 'redis'));
    const plugin = await writeProbePlugin(dir);
    await writeFile(
      path.join(dir, 'hookgate.config.yaml'),
      `execution: queue\nqueue: { redis: { url: redis://127.0.0.1:${port} }, prefix: restart, concurrency: 4 }\nruntime: { leaseMs: 1500 }\nlog: { level: error }\n${store.configLines()}${plugin}`,
    );
    await writeFile(path.join(dir, 'writer.yaml'), probeAgent(300));
    workers.push(await startWorker(dir), await startWorker(dir));
    api = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
    await api.start();
    loadAgentFile(path.join(dir, 'writer.yaml'), api.agents);
    const ids: string[] = [];
    for (let i = 0; i < OPERATIONS; i++) ids.push((await api.execAgent({ agentId: 'writer', prompt: `op ${i}` })).operationId);

    await until(async () => (await probeCalls(dir)).length >= OPERATIONS / 4, 60_000, 'a quarter of the probe calls');
    await stopRedis(redis);
    await new Promise((r) => setTimeout(r, 1000));
    redis = await redisServer(port, path.join(dir, 'redis'));
    const atRestart = await Promise.all(ids.map((id) => api!.getOperation(id)));
    assert.ok(atRestart.some((op) => !TERMINAL_STATUSES.has(op!.status)), 'the restart came before the end of the run');

    try {
      await until(async () => (await Promise.all(ids.map((id) => api!.getOperation(id)))).every((op) => op !== undefined && TERMINAL_STATUSES.has(op.status)), 60_000, 'every operation terminal');
    } catch (err) {
      const ops = await Promise.all(ids.map((id) => api!.getOperation(id)));
      throw new Error(`${String(err)}; statuses ${ops.map((o) => `${o?.status}@${o?.version}`).join(' ')}; workers: ${workers.map((w) => w.output().stderr.slice(-1500)).join(' | ')}`);
    }
    await readStore(dir, async (store) => {
      for (const id of ids) {
        const op = await store.getOperation(id);
        assert.equal(op?.status, 'done', `${id} ended ${op?.status} ${op?.error?.message ?? ''}`);
        const tools = (await store.listMessages(id)).filter((m) => m.role === 'tool');
        assert.equal(tools.length, 2, `${id}: two tool results, each committed once`);
        assert.deepEqual((await store.listSteps(id)).map((s) => s.stepIndex), [0, 1, 2, 3, 4]);
      }
    });
    for (const w of workers) assert.equal(w.child.exitCode, null, `a worker survived the outage: ${w.output().stderr}`);
  });
});
