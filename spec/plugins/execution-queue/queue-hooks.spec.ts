import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, type Kernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import type { HookgateConfig } from '../../../config/defaults.js';
import { RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { runHookgate } from '../../helpers/cli-process.js';
import { dropPrefix, killWorker, probeCalls, startWorker, uniquePrefix, until, writeProbePlugin, QUEUE_STORES, useQueueStore, writeQueueConfig, type WorkerProcess } from './queue-fixtures.js';

const CAREFUL_AGENT = `id: careful
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: probe, apiName: wait, args: { ms: 10 } } ]
    - text: approved and waited
tools: [probe/*]
approval: { tools: [probe/wait] }
`;

const ENV_TOKEN = 'env-hook-token-0123456789';

/** Issue 16 items 2 and 3: hooks and human decisions in queue mode (document 000's queue mode). */
for (const kind of QUEUE_STORES) describe(`execution-queue: hooks and approvals across processes (${kind})`, function () {
  const store = useQueueStore(kind);
  this.timeout(90_000);
  let dir: string;
  let prefix: string;
  let receiver: RecordingReceiver;
  let api: Kernel<HookgateConfig> | undefined;
  let worker: WorkerProcess | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-hooks-')));
    prefix = uniquePrefix();
    await writeQueueConfig(dir, prefix, store.configLines() + await writeProbePlugin(dir));
    await writeFile(path.join(dir, 'careful.yaml'), CAREFUL_AGENT);
    receiver = await RecordingReceiver.start();
  });
  afterEach(async () => {
    if (worker) await killWorker(worker);
    worker = undefined;
    await api?.stop();
    api = undefined;
    await receiver.close();
    await dropPrefix(prefix);
    await store.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('an approval given by another process (hookgate approve) is run by a worker; the worker delivers the persisted caller webhook and its own environment hook, delivers a hook with a handler and a webhook as its webhook, never calls the admitting process\'s handler', async () => {
    worker = await startWorker(dir, {
      AGENT_HOOK_WEBHOOK_URL: receiver.url('/env'),
      AGENT_HOOK_WEBHOOK_TOKEN: ENV_TOKEN,
      AGENT_HOOK_WEBHOOK_EVENTS: 'afterToolCall',
    });
    // The admitting process has no environment hooks of its own.
    api = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
    await api.start();
    loadAgentFile(path.join(dir, 'careful.yaml'), api.agents);
    let handlerCalls = 0;
    const handle = await api.execAgent({
      agentId: 'careful',
      prompt: 'wait once approved',
      hooks: [
        { id: 'caller-observer', type: 'afterToolCall', webhook: { url: receiver.url('/caller') } },
        // Both a handler and a webhook: delivered as its webhook (document 000's queue mode), the handler never called.
        { id: 'both', type: 'afterToolCall', handler: () => void (handlerCalls += 1), webhook: { url: receiver.url('/both') } },
      ],
    });
    const operationId = handle.operationId;
    await until(async () => (await api!.getOperation(operationId))?.status === 'waiting_approval', 30_000, 'the operation to park for approval');
    assert.deepEqual(await probeCalls(dir), [], 'nothing ran before the approval');

    const approved = await runHookgate(dir, ['approve', operationId]);
    assert.equal(approved.code, 0, approved.stderr + approved.stdout);
    const op = await api.getOperation(operationId);
    assert.equal(op?.status, 'done');
    assert.equal(op?.state.lastText, 'approved and waited');

    const calls = await probeCalls(dir);
    assert.deepEqual(calls.map((c) => c.pid), [worker.child.pid], 'the approved call ran once, in the worker');
    await receiver.waitFor((r) => r.some((x) => x.path === '/caller') && r.some((x) => x.path === '/env') && r.some((x) => x.path === '/both'));
    assert.deepEqual(receiver.to('/both').map((r) => r.body.hookId), ['both']);
    const caller = receiver.to('/caller');
    assert.equal(caller.length, 1);
    assert.equal(caller[0]!.body.hookId, 'caller-observer');
    const env = receiver.to('/env');
    assert.equal(env.length, 1);
    assert.equal(env[0]!.body.hookId, 'server-env-webhook:afterToolCall');
    assert.equal(env[0]!.headers.authorization, `Bearer ${ENV_TOKEN}`);
    assert.equal(handlerCalls, 0, 'a handler does not travel with the operation');
  });
});
