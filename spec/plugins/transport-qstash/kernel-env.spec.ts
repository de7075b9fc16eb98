import assert from 'node:assert/strict';
import { defineAgent, useWebhookWorld, webhookHook, type World } from '../../integration/webhooks/harness.js';
import type { RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { FakeQStashServer } from './fake-qstash-server.js';

const TOKEN_ENV = 'HOOKGATE_SPEC_QSTASH_TOKEN';
const KERNEL_TOKEN = 'qstash-kernel-env-token-41b7';
const PROCESS_TOKEN = 'qstash-process-env-token-93d0';

/**
 * Issue 9, item 20: the QStash transport reads its token from the kernel's
 * environment (`createKernel({ env })`), like header templates and environment
 * hooks do, never from `process.env` directly. Through the real kernel and
 * plugin, a fake QStash API and a loopback destination.
 */
describe('transport-qstash: the token comes from the kernel environment', function () {
  this.timeout(15_000);
  let world: World;
  let receiver: RecordingReceiver;
  let qstash: FakeQStashServer;
  const kernelEnv: NodeJS.ProcessEnv = {};

  before(async () => {
    qstash = await FakeQStashServer.start(KERNEL_TOKEN);
  });
  after(async () => {
    await qstash.close();
  });
  beforeEach(() => {
    qstash.published.length = 0;
    for (const key of Object.keys(kernelEnv)) delete kernelEnv[key];
  });
  afterEach(() => {
    delete process.env[TOKEN_ENV];
  });

  useWebhookWorld(
    (s) => ({ world, receiver } = s),
    () => ({
      env: kernelEnv,
      configure: (config) => {
        config.webhooks.qstash.url = qstash.url;
        config.webhooks.qstash.tokenEnv = TOKEN_ENV;
      },
    }),
  );

  async function runWithQueuedHook(fallback: 'fetch' | 'none'): Promise<string> {
    const kernel = await world.boot();
    defineAgent(kernel, 'quiet', [{ text: 'done' }]);
    const hook = webhookHook('queued', 'afterStep', { url: receiver.url('/queued'), delivery: 'qstash', fallback });
    const handle = await kernel.execAgent({ agentId: 'quiet', prompt: 'go', hooks: [hook] });
    return (await handle.completed()).status;
  }

  it('publishes with the token from createKernel({ env }) while process.env has none', async () => {
    kernelEnv[TOKEN_ENV] = KERNEL_TOKEN;
    assert.equal(await runWithQueuedHook('none'), 'done');
    assert.equal(qstash.published.length, 1);
    assert.equal(qstash.published[0]!.headers.authorization, `Bearer ${KERNEL_TOKEN}`);
    await qstash.delivered();
    assert.equal(receiver.to('/queued').length, 1);
    assert.ok(!world.logLines.some((l) => l.includes('falling back')), 'no fallback was needed');
  });

  it('ignores a token that is only in process.env: the publish is not attempted and the fetch fallback delivers', async () => {
    process.env[TOKEN_ENV] = PROCESS_TOKEN;
    assert.equal(await runWithQueuedHook('fetch'), 'done');
    assert.equal(qstash.published.length, 0);
    assert.ok(world.logLines.some((l) => l.includes('falling back to fetch') && l.includes('configuration')));
    await receiver.waitFor(() => receiver.to('/queued').length === 1);
    assert.ok(!world.logLines.join('\n').includes(PROCESS_TOKEN));
  });
});
