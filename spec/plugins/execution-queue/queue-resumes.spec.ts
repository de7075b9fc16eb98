import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, type Kernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import type { HookgateConfig } from '../../../config/defaults.js';
import { dropPrefix, killWorker, probeCalls, startWorker, uniquePrefix, until, writeProbePlugin, QUEUE_STORES, useQueueStore, writeQueueConfig, type WorkerProcess } from './queue-fixtures.js';

const LATER_AGENT = `id: patient
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: probe, apiName: later, args: {} } ]
    - text: the answer came
tools: [probe/*]
`;

const CHILD_AGENT = `id: child
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: probe, apiName: wait, args: { ms: 10 } } ]
    - text: child answer
tools: [probe/*]
`;

const PARENT_AGENT = `id: parent
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: agents, apiName: child, args: { instruction: go } } ]
    - text: parent done
subagents: [./child.yaml]
`;

/** Issue 16 item 2: what resumes an operation in queue mode (a deferred completion, a sub-agent's answer) enqueues its next step. */
for (const kind of QUEUE_STORES) describe(`execution-queue: deferred completions and sub-agents across processes (${kind})`, function () {
  const store = useQueueStore(kind);
  this.timeout(90_000);
  let dir: string;
  let prefix: string;
  let api: Kernel<HookgateConfig> | undefined;
  let worker: WorkerProcess | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-resumes-')));
    prefix = uniquePrefix();
    await writeQueueConfig(dir, prefix, store.configLines() + await writeProbePlugin(dir));
    await writeFile(path.join(dir, 'patient.yaml'), LATER_AGENT);
    await writeFile(path.join(dir, 'child.yaml'), CHILD_AGENT);
    await writeFile(path.join(dir, 'parent.yaml'), PARENT_AGENT);
  });
  afterEach(async () => {
    if (worker) await killWorker(worker);
    worker = undefined;
    await api?.stop();
    api = undefined;
    await dropPrefix(prefix);
    await store.drop();
    await rm(dir, { recursive: true, force: true });
  });

  async function apiKernel(agentFile: string): Promise<Kernel<HookgateConfig>> {
    const kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
    await kernel.start();
    loadAgentFile(path.join(dir, agentFile), kernel.agents);
    return kernel;
  }

  it('a deferred result completed in the admitting process is published once and the worker runs the rest', async () => {
    worker = await startWorker(dir);
    api = await apiKernel('patient.yaml');
    const handle = await api.execAgent({ agentId: 'patient', prompt: 'ask and wait' });
    await until(async () => (await api!.getOperation(handle.operationId))?.status === 'waiting_tool', 30_000, 'the deferred call to park the operation');
    const [call] = await probeCalls(dir);
    assert.equal(call?.pid, worker.child.pid, 'the deferred tool ran in the worker');

    assert.deepEqual(await api.completeToolCall(handle.operationId, call!.toolCallId, 'forty-two'), { published: true });
    assert.deepEqual(await api.completeToolCall(handle.operationId, call!.toolCallId, 'again'), { published: false }, 'a duplicate completion changes nothing');
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'the answer came');
    const tools = (await api.listMessages(handle.operationId)).filter((m) => m.role === 'tool');
    assert.deepEqual(tools.map((m) => m.content), ['forty-two']);
  });

  it('a sub-agent started in a worker runs through the queue, and its answer resumes the parent', async () => {
    worker = await startWorker(dir, {}, ['parent.yaml']);
    api = await apiKernel('parent.yaml');
    const handle = await api.execAgent({ agentId: 'parent', prompt: 'delegate' });
    const final = await handle.completed();
    assert.equal(final.status, 'done', final.error?.message);
    assert.equal(final.state.lastText, 'parent done');
    const [child] = await api.listOperations({ parentOperationId: handle.operationId });
    assert.equal(child?.status, 'done');
    assert.equal(child?.state.lastText, 'child answer');
    const tool = (await api.listMessages(handle.operationId)).filter((m) => m.role === 'tool');
    assert.equal(tool.length, 1);
    assert.equal(tool[0]!.content, 'child answer');
    assert.deepEqual((await probeCalls(dir)).map((c) => [c.pid, c.operationId]), [[worker.child.pid, child!.id]]);
  });
});
