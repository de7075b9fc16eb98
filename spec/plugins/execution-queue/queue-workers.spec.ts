import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, type Kernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import type { HookgateConfig } from '../../../config/defaults.js';
import { TERMINAL_STATUSES } from '../../../kernel/store.js';
import { readStore } from '../../helpers/cli-process.js';
import { dropPrefix, killWorker, probeAgent, probeCalls, startWorker, uniquePrefix, until, writeProbePlugin, QUEUE_STORES, useQueueStore, writeQueueConfig, type WorkerProcess } from './queue-fixtures.js';

const OPERATIONS = 24;
/** Long enough that a worker killed right after its probe line is still inside that tool call. */
const PROBE_WAIT_MS = 400;

/** Issue 16, item 2 and 5: steps as BullMQ jobs, run by `hookgate worker` processes on one SQLite file. */
for (const kind of QUEUE_STORES) describe(`execution-queue: hookgate worker processes on one shared store and a real Redis (${kind})`, function () {
  const store = useQueueStore(kind);
  this.timeout(120_000);
  let dir: string;
  let prefix: string;
  let api: Kernel<HookgateConfig> | undefined;
  const workers: WorkerProcess[] = [];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-')));
    prefix = uniquePrefix();
    await writeQueueConfig(dir, prefix, store.configLines() + await writeProbePlugin(dir));
    await writeFile(path.join(dir, 'writer.yaml'), probeAgent(PROBE_WAIT_MS));
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await killWorker(w);
    await api?.stop();
    api = undefined;
    await dropPrefix(prefix);
    await store.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** The API process: this spec's own kernel, which in queue mode only admits and enqueues. */
  async function apiKernel(): Promise<Kernel<HookgateConfig>> {
    const kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }) });
    await kernel.start();
    loadAgentFile(path.join(dir, 'writer.yaml'), kernel.agents);
    return kernel;
  }

  it('admission only enqueues: with no worker running, an admitted operation stays at its first step in the store', async () => {
    api = await apiKernel();
    const handle = await api.execAgent({ agentId: 'writer', prompt: 'write both' });
    await new Promise((r) => setTimeout(r, 400));
    const stored = await api.getOperation(handle.operationId);
    assert.equal(stored?.status, 'running');
    assert.equal(stored?.state.stepIndex, 0, 'no step ran in the admitting process');
    assert.equal((await api.listSteps(handle.operationId)).length, 0);
  });

  it(`two workers run ${OPERATIONS} operations with tool calls to the end; one SIGKILLed mid-run, the other finishes every operation and no tool result is published twice`, async () => {
    workers.push(await startWorker(dir), await startWorker(dir));
    api = await apiKernel();
    const ids: string[] = [];
    for (let i = 0; i < OPERATIONS; i++) ids.push((await api.execAgent({ agentId: 'writer', prompt: `write both (${i})` })).operationId);

    // Killed inside a tool call: right after the first worker logs the start of a probe call, while the call waits.
    const victim = workers[0]!;
    let inFlight: { operationId: string; toolCallId: string } | undefined;
    await until(async () => {
      const calls = await probeCalls(dir);
      inFlight = calls.filter((c) => c.pid === victim.child.pid).at(-1);
      return inFlight !== undefined && calls.length >= OPERATIONS / 4;
    }, 60_000, 'the first worker inside a tool call', 10);
    await killWorker(victim);
    const atKill = await Promise.all(ids.map((id) => api!.getOperation(id)));
    assert.ok(atKill.some((op) => !TERMINAL_STATUSES.has(op!.status)), 'the kill came before the end of the run');

    await until(async () => (await Promise.all(ids.map((id) => api!.getOperation(id)))).every((op) => op !== undefined && TERMINAL_STATUSES.has(op.status)), 90_000, 'every operation terminal');

    await readStore(dir, async (store) => {
      for (const id of ids) {
        const op = await store.getOperation(id);
        assert.equal(op?.status, 'done', `${id} ended ${op?.status} ${op?.error?.message ?? ''}`);
        assert.equal(op?.state.lastText, 'both written');
        const tools = (await store.listMessages(id)).filter((m) => m.role === 'tool');
        const callIds = tools.map((m) => (m as { toolCallId?: string }).toolCallId);
        assert.equal(tools.length, 2, `${id}: two tool results, each published once (got ${tools.length})`);
        assert.equal(new Set(callIds).size, 2, `${id}: no tool call answered twice`);
        const steps = await store.listSteps(id);
        assert.deepEqual(steps.map((s) => s.stepIndex), [0, 1, 2, 3, 4], `${id}: each step committed once, in order`);
      }
    });

    const calls = await probeCalls(dir);
    const survivorPid = workers[1]!.child.pid;
    assert.ok(calls.some((c) => c.pid === victim.child.pid) && calls.some((c) => c.pid === survivorPid), 'both workers ran steps before the kill');
    // At least once: the call the killed worker was inside never committed there, so the other worker ran it again.
    assert.ok(
      calls.some((c) => c.pid === survivorPid && c.toolCallId === inFlight!.toolCallId),
      `the tool call in flight at the kill (${inFlight!.toolCallId}) ran again in the surviving worker`,
    );

    // SIGTERM: the surviving worker stops taking jobs, lets what is in flight finish, exits 0.
    const survivor = workers[1]!;
    survivor.child.kill('SIGTERM');
    assert.equal(await survivor.exited, 0, survivor.output().stderr);
    assert.match(survivor.output().stdout, /hookgate worker: SIGTERM[\s\S]*hookgate worker: stopped/);
  });

  it('workers SIGKILLed again and again (three times in a run of 96 operations, each inside a tool call, a fresh worker started after each): every operation ends done, each tool result committed once', async () => {
    workers.push(await startWorker(dir), await startWorker(dir));
    api = await apiKernel();
    const ids: string[] = [];
    for (let i = 0; i < OPERATIONS * 4; i++) ids.push((await api.execAgent({ agentId: 'writer', prompt: `write both (${i})` })).operationId);
    let seen = 0;
    for (let kill = 0; kill < 3; kill++) {
      // The victim: whichever live worker starts a tool call next (it is inside that call when killed).
      let victim: WorkerProcess | undefined;
      await until(async () => {
        const fresh = (await probeCalls(dir)).slice(seen);
        victim = workers.find((w) => w.child.exitCode === null && w.child.signalCode === null && fresh.some((c) => c.pid === w.child.pid));
        return victim !== undefined;
      }, 60_000, `a worker inside a tool call (kill ${kill + 1})`, 10).catch(async (err: unknown) => {
        const ops = await Promise.all(ids.map((id) => api!.getOperation(id)));
        throw new Error(`${String(err)}: ${ops.map((o) => `${o?.status}@${o?.state.stepIndex}`).join(' ')} | ${workers.map((w) => `${w.child.pid}:${w.child.exitCode ?? w.child.signalCode ?? 'live'} ${w.output().stderr.slice(-800)}`).join(' | ')}`);
      });
      await killWorker(victim!);
      assert.ok((await Promise.all(ids.map((id) => api!.getOperation(id)))).some((op) => !TERMINAL_STATUSES.has(op!.status)), `kill ${kill + 1} came before the end of the run`);
      seen = (await probeCalls(dir)).length;
      workers.push(await startWorker(dir));
    }
    await until(async () => (await Promise.all(ids.map((id) => api!.getOperation(id)))).every((op) => op !== undefined && TERMINAL_STATUSES.has(op.status)), 90_000, 'every operation terminal');
    await readStore(dir, async (store) => {
      for (const id of ids) {
        const op = await store.getOperation(id);
        assert.equal(op?.status, 'done', `${id} ended ${op?.status} ${op?.error?.message ?? ''}`);
        const tools = (await store.listMessages(id)).filter((m) => m.role === 'tool');
        assert.equal(new Set(tools.map((m) => (m as { toolCallId?: string }).toolCallId)).size, 2);
        assert.equal(tools.length, 2, `${id}: each tool result committed once`);
        assert.deepEqual((await store.listSteps(id)).map((s) => s.stepIndex), [0, 1, 2, 3, 4]);
      }
    });
  });
});
