import assert from 'node:assert/strict';
import { access, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, type Kernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import type { HookgateConfig } from '../../../config/defaults.js';
import { RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { dropPrefix, killWorker, probeCalls, startWorker, uniquePrefix, until, writeProbePlugin, QUEUE_STORES, useQueueStore, writeQueueConfig, type WorkerProcess } from './queue-fixtures.js';

/** A slow probe call (a tool waiting on I/O for 4 s), then a write that must never run once aborted. */
const SLOW_AGENT = `id: slow
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: probe, apiName: wait, args: { ms: 4000 } } ]
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: after-abort.txt, content: never } } ]
    - text: never reached
tools: [probe/*, fs/*]
`;

const SHORT_CALLS = 8;

/** Eight short probe calls, each after a model turn: a worker commits often, so an abort races its commits. */
const BUSY_AGENT = `id: busy
model:
  provider: scripted
  turns:
${Array.from({ length: SHORT_CALLS }, () => '    - toolCalls: [ { identifier: probe, apiName: wait, args: { ms: 15 } } ]\n').join('')}    - text: all done
tools: [probe/*]
`;

/**
 * Issue 16, crash safety: an abort given to the admitting process while a
 * worker runs the operation's step. It seizes the lease (the worker starts no
 * further tool and drops its step), commits the end by compare-and-swap and
 * tries again after a racing commit: the operation ends `interrupted`
 * exactly once (one onComplete), no tool starts after the abort resolved,
 * and nothing the worker commits later brings it back.
 */
for (const kind of QUEUE_STORES) describe(`execution-queue: abort while a worker runs the operation (${kind})`, function () {
  const store = useQueueStore(kind);
  this.timeout(120_000);
  let dir: string;
  let prefix: string;
  let receiver: RecordingReceiver;
  let api: Kernel<HookgateConfig> | undefined;
  const workers: WorkerProcess[] = [];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-abort-')));
    prefix = uniquePrefix();
    await writeQueueConfig(dir, prefix, store.configLines() + await writeProbePlugin(dir));
    await writeFile(path.join(dir, 'slow.yaml'), SLOW_AGENT);
    await writeFile(path.join(dir, 'busy.yaml'), BUSY_AGENT);
    receiver = await RecordingReceiver.start();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await killWorker(w);
    await api?.stop();
    api = undefined;
    await receiver.close();
    await dropPrefix(prefix);
    await store.drop();
    await rm(dir, { recursive: true, force: true });
  });

  async function startApi(): Promise<Kernel<HookgateConfig>> {
    const kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
    await kernel.start();
    loadAgentFile(path.join(dir, 'slow.yaml'), kernel.agents);
    loadAgentFile(path.join(dir, 'busy.yaml'), kernel.agents);
    return kernel;
  }

  const onComplete = (operationId: string) => receiver.to('/complete').filter((r) => r.body.operationId === operationId);

  it('abort while the worker waits in a slow tool: interrupted at once, the tool\'s result is never published and the next tool never runs', async () => {
    workers.push(await startWorker(dir));
    api = await startApi();
    const { operationId } = await api.execAgent({ agentId: 'slow', prompt: 'wait', hooks: [{ id: 'done', type: 'onComplete', webhook: { url: receiver.url('/complete') } }] });
    await until(async () => (await probeCalls(dir)).length === 1, 30_000, 'the worker to start the slow tool');

    await api.abort(operationId);
    const ended = await api.getOperation(operationId);
    assert.equal(ended?.status, 'interrupted');
    assert.equal(ended?.reason, 'interrupted');

    // Longer than the slow tool and two leases: the worker's step ends and anything it would commit has been tried.
    await new Promise((r) => setTimeout(r, 6_000));
    const later = await api.getOperation(operationId);
    assert.equal(later?.status, 'interrupted', 'nothing the worker committed brought the operation back');
    assert.equal(later?.version, ended?.version, 'nothing was committed after the abort');
    const messages = await api.store.listMessages(operationId);
    assert.deepEqual(messages.filter((m) => m.role === 'tool'), [], 'the slow tool\'s result was never published');
    assert.equal((await probeCalls(dir)).length, 1, 'no tool started after the abort');
    await assert.rejects(access(path.join(dir, 'after-abort.txt')), 'the write after the slow tool never ran');
    await receiver.waitFor((r) => r.some((x) => x.path === '/complete'));
    assert.deepEqual(onComplete(operationId).map((r) => r.body.reason), ['interrupted'], 'onComplete once, for the abort');
    assert.equal(workers[0]!.child.exitCode, null, 'the worker lives on');
  });

  it('aborts racing the commits of two workers, repeated: each operation ends interrupted exactly once, no abort is refused, no tool starts after its abort resolved', async () => {
    workers.push(await startWorker(dir), await startWorker(dir));
    api = await startApi();
    const kernel = api;
    const ROUNDS = 12;
    const ids: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      ids.push((await kernel.execAgent({ agentId: 'busy', prompt: `run ${i}`, hooks: [{ id: 'done', type: 'onComplete', webhook: { url: receiver.url('/complete') } }] })).operationId);
    }
    const callsOf = async (id: string) => (await probeCalls(dir)).filter((c) => c.operationId === id).length;
    // Each operation is aborted once it has started 1 to 4 calls: at a different point of its step loop each time.
    const atAbort = await Promise.all(
      ids.map(async (id, i) => {
        await until(async () => (await callsOf(id)) >= 1 + (i % 4), 60_000, `operation ${i} to start ${1 + (i % 4)} calls`, 5);
        await kernel.abort(id);
        return { calls: await callsOf(id), version: (await kernel.getOperation(id))!.version };
      }),
    );

    await new Promise((r) => setTimeout(r, 4_000));
    await receiver.waitFor((r) => ids.every((id) => r.some((x) => x.path === '/complete' && x.body.operationId === id)));
    for (const [i, id] of ids.entries()) {
      const op = await kernel.getOperation(id);
      assert.equal(op?.status, 'interrupted', `operation ${i}`);
      assert.equal(op?.version, atAbort[i]!.version, `operation ${i}: nothing committed after its abort`);
      assert.equal(await callsOf(id), atAbort[i]!.calls, `operation ${i}: no tool started after its abort resolved`);
      assert.ok(atAbort[i]!.calls < SHORT_CALLS, `operation ${i} was aborted mid-run`);
      const tools = (await kernel.store.listMessages(id)).filter((m) => m.role === 'tool');
      assert.equal(new Set(tools.map((m) => m.toolCallId)).size, tools.length, `operation ${i}: no tool result published twice`);
      assert.deepEqual(onComplete(id).map((r) => r.body.reason), ['interrupted'], `operation ${i}: onComplete once`);
    }
    for (const w of workers) assert.equal(w.child.exitCode, null, `a worker lives on: ${w.output().stderr}`);
  });
});
