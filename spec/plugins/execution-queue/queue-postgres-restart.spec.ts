import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, type Kernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import type { HookgateConfig } from '../../../config/defaults.js';
import { TERMINAL_STATUSES, type OperationRecord } from '../../../kernel/store.js';
import { PrivatePostgres } from '../../helpers/private-postgres.js';
import { RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { dropPrefix, freePort, killWorker, probeAgent, probeCalls, startWorker, uniquePrefix, until, writeProbePlugin, writeQueueConfig, type WorkerProcess } from './queue-fixtures.js';

const OPERATIONS = 12;

/**
 * Issue 16 item 5: PostgreSQL restarted mid-run. A step that meets the
 * store away neither fails nor finishes its operation: its job goes back to
 * the queue and runs again from the last commit once the server answers
 * (at least once; the compare-and-swap keeps every result stored once). The
 * admitting process and two workers reconnect and every operation ends
 * done. On a PostgreSQL cluster of the spec's own, so nobody else's server
 * restarts.
 */
describe('execution-queue: PostgreSQL restarted mid-run', function () {
  this.timeout(180_000);
  let dir: string;
  let pgDir: string;
  let prefix: string;
  let server: PrivatePostgres | undefined;
  let api: Kernel<HookgateConfig> | undefined;
  let receiver: RecordingReceiver | undefined;
  const workers: WorkerProcess[] = [];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-pg-')));
    pgDir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-private-pg-')));
    prefix = uniquePrefix();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await killWorker(w);
    await api?.stop().catch(() => undefined);
    api = undefined;
    // Always stopped, even when the spec failed mid-restart.
    await server?.stop();
    server = undefined;
    await receiver?.close();
    receiver = undefined;
    await dropPrefix(prefix);
    await rm(dir, { recursive: true, force: true });
    await rm(pgDir, { recursive: true, force: true });
  });

  it('after a restart mid-run, the workers and the admitting process reconnect and every operation ends done, each tool result stored once', async () => {
    const port = await freePort();
    server = new PrivatePostgres(pgDir, port);
    await server.init();
    await server.start();
    const storeLines = `store:\n  driver: postgres\n  postgres: { host: 127.0.0.1, port: ${port}, database: postgres, user: postgres, schema: restart, poolSize: 4 }\n`;
    await writeQueueConfig(dir, prefix, storeLines + await writeProbePlugin(dir));
    await writeFile(path.join(dir, 'writer.yaml'), probeAgent(400));
    workers.push(await startWorker(dir), await startWorker(dir));
    api = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
    await api.start();
    loadAgentFile(path.join(dir, 'writer.yaml'), api.agents);
    const ids: string[] = [];
    receiver = await RecordingReceiver.start();
    const hooks = [{ id: 'end', type: 'onComplete' as const, webhook: { url: receiver.url('/complete') } }];
    for (let i = 0; i < OPERATIONS; i++) ids.push((await api.execAgent({ agentId: 'writer', prompt: `op ${i}`, hooks })).operationId);

    await until(async () => (await probeCalls(dir)).length >= OPERATIONS / 3, 60_000, 'a third of the probe calls');
    await server.stop();
    await new Promise((r) => setTimeout(r, 1500));
    await server.start();

    const kernel = api;
    const all = async (): Promise<Array<OperationRecord | undefined>> => Promise.all(ids.map((id) => kernel.getOperation(id)));
    try {
      await until(async () => (await all().catch(() => [undefined])).every((op) => op !== undefined && TERMINAL_STATUSES.has(op.status)), 120_000, 'every operation terminal', 250);
    } catch (err) {
      const ops = await all().catch(() => []);
      throw new Error(`${String(err)}; statuses ${ops.map((o) => `${o?.status}@${o?.version}`).join(' ')}; workers: ${workers.map((w) => w.output().stderr.slice(-1500)).join(' | ')}`);
    }
    for (const id of ids) {
      const op = await kernel.getOperation(id);
      assert.equal(op?.status, 'done', `${id} ended ${op?.status} ${op?.error?.message ?? ''}`);
      const tools = (await kernel.store.listMessages(id)).filter((m) => m.role === 'tool');
      assert.equal(tools.length, 2, `${id}: two tool results, each stored once`);
      assert.deepEqual((await kernel.store.listSteps(id)).map((s) => s.stepIndex), [0, 1, 2, 3, 4]);
    }
    await receiver.waitFor((r) => ids.every((id) => r.some((x) => x.body.operationId === id)), 20_000);
    const completions = receiver.to('/complete');
    for (const id of ids) {
      assert.deepEqual(completions.filter((r) => r.body.operationId === id).map((r) => r.body.reason), ['done'], `${id}: one onComplete, for its real end`);
    }
    for (const w of workers) assert.equal(w.child.exitCode, null, `a worker survived the restart: ${w.output().stderr}`);
    // The restart met steps in flight, which were handed back, never failed nor finished while the store was away.
    const logs = workers.map((w) => w.output().stderr + w.output().stdout).join('\n');
    assert.match(logs, /the store could not be reached during a queued step/, 'a worker met the outage mid-step');
    assert.doesNotMatch(logs, /"operation failed"|could not persist the terminal state/);
  });
});
