import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { Kernel } from '../../../kernel/kernel.js';
import { allow, deny, RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { control, defineAgent, fsCall, toolMessages, webhookHook, World } from './harness.js';

const TOKEN = 'env-token-Q7w9Z2';

/**
 * Environment hooks (AGENT_HOOK_WEBHOOK_*) through the real kernel, with the
 * environment given as the kernel's `env` object: read at every evaluation,
 * evaluated after the caller's hooks, never persisted, never frozen across
 * an approval or a restart.
 */
describe('integration: environment webhook hooks', function () {
  this.timeout(15_000);
  let world: World;
  let receiver: RecordingReceiver;

  const envHook = (): NodeJS.ProcessEnv => ({
    AGENT_HOOK_WEBHOOK_URL: receiver.url('/env'),
    AGENT_HOOK_WEBHOOK_TOKEN: TOKEN,
    AGENT_HOOK_WEBHOOK_EVENTS: 'beforeToolCall',
    AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING: 'toolCall',
  });

  /** The env receiver denies writeFile and allows anything else. */
  const denyWrites = () => receiver.route('/env', (req) => (req.body?.apiName === 'writeFile' ? deny('env policy: no writes') : allow()));

  beforeEach(async () => {
    receiver = await RecordingReceiver.start();
  });

  afterEach(async () => {
    await world.cleanup();
    await receiver.close();
  });

  /** listDir (no approval needed), then writeFile (needs approval), then text. */
  async function parkOnWrite(kernel: Kernel, hooks: Parameters<Kernel['execAgent']>[0]['hooks'] = []): Promise<string> {
    await mkdir(world.sandbox, { recursive: true });
    defineAgent(kernel, 'careful', [fsCall('listDir', { path: '.' }), fsCall('writeFile', { path: 'w.txt', content: 'written' }), { text: 'finished' }], {
      approval: ['fs/writeFile'],
    });
    const handle = await kernel.execAgent({ agentId: 'careful', prompt: 'go', hooks });
    assert.equal((await handle.settled()).status, 'waiting_approval');
    return handle.operationId;
  }

  it('a deny from the environment receiver blocks the tool, after the caller control, with the bearer token', async () => {
    world = await World.create({ env: envHook() });
    const kernel = await world.boot();
    receiver.route('/caller', allow()).route('/env', deny('env policy: no writes'));
    defineAgent(kernel, 'writer', [fsCall('writeFile', { path: 'w.txt', content: 'x' }), { text: 'finished' }]);
    const handle = await kernel.execAgent({ agentId: 'writer', prompt: 'go', hooks: [control('caller', 'beforeToolCall', receiver.url('/caller'))] });
    await handle.completed();

    assert.deepEqual(receiver.requests.map((r) => r.path), ['/caller', '/env'], 'caller controls first, then the environment control');
    assert.equal(receiver.to('/env')[0]!.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(receiver.to('/env')[0]!.body.hookId, 'server-env-webhook:beforeToolCall');
    assert.equal(await world.fileExists('w.txt'), false);
    const [tool] = await toolMessages(kernel, handle.operationId);
    assert.equal(tool!.toolResult?.error, 'hook_denied');
    assert.equal(tool!.content, 'env policy: no writes');
  });

  it('removing the URL between park and approve: no environment control is asked after approval', async () => {
    world = await World.create({ env: envHook() });
    const kernel = await world.boot();
    denyWrites();
    const operationId = await parkOnWrite(kernel);
    assert.equal(receiver.to('/env').length, 1, 'the env control was asked about listDir');

    delete world.env.AGENT_HOOK_WEBHOOK_URL;
    await (await kernel.approve(operationId)).completed();

    assert.equal(receiver.to('/env').length, 1, 'nothing asked after the approval');
    assert.equal(await world.readSandbox('w.txt'), 'written');
  });

  it('adding the URL between park and approve: the new environment control decides after approval', async () => {
    world = await World.create({ env: {} });
    const kernel = await world.boot();
    denyWrites();
    const operationId = await parkOnWrite(kernel);
    assert.equal(receiver.requests.length, 0);

    Object.assign(world.env, envHook());
    await (await kernel.approve(operationId)).completed();

    assert.equal(receiver.to('/env').length, 1);
    assert.equal(receiver.to('/env')[0]!.body.apiName, 'writeFile');
    assert.equal(await world.fileExists('w.txt'), false);
    const tool = (await toolMessages(kernel, operationId)).at(-1)!;
    assert.equal(tool.toolResult?.error, 'hook_denied');
  });

  it('removing the URL before a restarted kernel approves: the old environment policy is not restored', async () => {
    world = await World.create({ env: envHook() });
    const kernelA = await world.boot();
    denyWrites();
    const operationId = await parkOnWrite(kernelA);
    await kernelA.stop();

    delete world.env.AGENT_HOOK_WEBHOOK_URL;
    const kernelB = await world.boot();
    await (await kernelB.approve(operationId)).completed();

    assert.equal(receiver.to('/env').length, 1);
    assert.equal(await world.readSandbox('w.txt'), 'written');
  });

  it('environment hooks are never in store.loadHooks nor in getSerializedHooks', async () => {
    world = await World.create({ env: envHook() });
    const kernel = await world.boot();
    denyWrites();
    const operationId = await parkOnWrite(kernel, [webhookHook('audit', 'afterStep', { url: receiver.url('/audit') })]);

    const stored = await kernel.store.loadHooks(operationId);
    const serialized = kernel.hooks.getSerializedHooks(operationId);
    assert.deepEqual(stored.map((h) => (h as { id: string }).id), ['audit']);
    assert.deepEqual(serialized?.map((h) => h.id), ['audit']);
    for (const text of [JSON.stringify(stored), JSON.stringify(serialized)]) {
      assert.ok(!text.includes('server-env-webhook'));
      assert.ok(!text.includes('/env'));
      assert.ok(!text.includes(TOKEN));
      assert.ok(!text.includes('AGENT_HOOK_WEBHOOK'));
    }
  });
});
