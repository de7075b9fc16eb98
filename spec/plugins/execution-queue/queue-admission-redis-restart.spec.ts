import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createKernel, type Kernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import type { HookgateConfig } from '../../../config/defaults.js';
import { isHookgateError } from '../../../kernel/errors.js';
import { stepJobId } from '../../../plugins/execution-queue/index.js';
import { freePort, redisServer, stopRedis } from './queue-fixtures.js';

const AGENT = `id: plain
model:
  provider: scripted
  turns:
    - text: answered
`;

const RESTARTS = 4;

/**
 * Issue 16 item 5: admissions right after a Redis restart. The admitting
 * process's client is still reconnecting (ioredis pauses up to 2 s between
 * attempts); the admission waits for it, boundedly, instead of refusing.
 * Beyond the bound (Redis stays down) it refuses with QUEUE_UNAVAILABLE
 * naming the address. Runs on a redis-server of its own, so nobody else's
 * Redis restarts.
 */
describe('execution-queue: admissions across a Redis restart', function () {
  this.timeout(90_000);
  let dir: string;
  let port: number;
  let redis: ChildProcess | undefined;
  let api: Kernel<HookgateConfig> | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-admit-')));
    await mkdir(path.join(dir, 'redis'));
    port = await freePort();
    redis = await redisServer(port, path.join(dir, 'redis'));
    await writeFile(path.join(dir, 'plain.yaml'), AGENT);
    await writeFile(path.join(dir, 'hookgate.config.yaml'), `execution: queue\nqueue: { redis: { url: redis://127.0.0.1:${port} }, prefix: admit }\nruntime: { leaseMs: 1500 }\nlog: { level: error }\n`);
    api = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
    await api.start();
    loadAgentFile(path.join(dir, 'plain.yaml'), api.agents);
  });
  afterEach(async () => {
    await api?.stop().catch(() => undefined);
    api = undefined;
    await stopRedis(redis);
    redis = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** Whether the step job of the operation's stored version is in Redis. */
  async function jobExists(operationId: string): Promise<boolean> {
    const op = await api!.getOperation(operationId);
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true });
    await client.connect();
    try {
      return (await client.exists(`admit:steps:${stepJobId({ operationId, version: op!.version })}`)) === 1;
    } finally {
      client.disconnect();
    }
  }

  it(`an admission made the moment a restarted Redis answers again waits for the reconnect and is enqueued (${RESTARTS} restarts)`, async () => {
    const first = await api!.execAgent({ agentId: 'plain', prompt: 'before' });
    assert.ok(await jobExists(first.operationId));
    for (let i = 0; i < RESTARTS; i++) {
      await stopRedis(redis);
      // Down long enough for the client's reconnect pauses to grow past a few hundred milliseconds.
      await new Promise((r) => setTimeout(r, 600 + 300 * i));
      redis = await redisServer(port, path.join(dir, 'redis'));
      const handle = await api!.execAgent({ agentId: 'plain', prompt: `right after restart ${i}` });
      assert.ok(await jobExists(handle.operationId), `restart ${i}: the step job is in the restarted Redis`);
    }
  });

  it('an admission while Redis stays down is refused after the bound with QUEUE_UNAVAILABLE naming the address; the operation stays stored for the sweep', async () => {
    await stopRedis(redis);
    redis = undefined;
    let refused: unknown;
    try {
      await api!.execAgent({ agentId: 'plain', prompt: 'while down' });
    } catch (err) {
      refused = err;
    }
    assert.ok(isHookgateError(refused, 'QUEUE_UNAVAILABLE'), `refused with QUEUE_UNAVAILABLE: ${String(refused)}`);
    assert.match(refused.message, new RegExp(`on Redis at redis://127\\.0\\.0\\.1:${port} \\(tried for 5 s\\)`));
    const stored = await api!.store.listOperations();
    assert.equal(stored.length, 1);
    assert.equal(stored[0]!.status, 'running', 'stored as running: a worker\'s sweep enqueues it once Redis is back');
  });
});
