import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { allow, type RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { control, defineAgent, fsCall, useWebhookWorld, type World } from './harness.js';

/**
 * Header templates resolve at every send from the kernel's current `env`:
 * a value rotated between two tool calls is used on the second request, and
 * the stored hook keeps the template.
 */
describe('integration: header template env rotation', function () {
  this.timeout(15_000);
  let world: World;
  let receiver: RecordingReceiver;

  useWebhookWorld((s) => ({ world, receiver } = s), { env: { TOKEN: 'first-token-111' } });

  it('a TOKEN changed between two tool calls reaches the receiver on the second call', async () => {
    const kernel = await world.boot();
    await mkdir(world.sandbox, { recursive: true });
    defineAgent(kernel, 'lister', [fsCall('listDir', { path: '.' }), fsCall('listDir', { path: '.' }), { text: 'finished' }]);
    receiver.route('/gate', () => {
      // Rotate while the first call is being decided: the next send must read the new value.
      world.env.TOKEN = 'second-token-222';
      return allow();
    });
    const hook = control('gate', 'beforeToolCall', receiver.url('/gate'), { headers: { Authorization: 'Bearer ${TOKEN}' }, allowedEnvVars: ['TOKEN'] });
    const handle = await kernel.execAgent({ agentId: 'lister', prompt: 'list twice', hooks: [hook] });
    await handle.completed();

    assert.deepEqual(
      receiver.to('/gate').map((r) => r.headers.authorization),
      ['Bearer first-token-111', 'Bearer second-token-222'],
    );
    const [stored] = (await kernel.store.loadHooks(handle.operationId)) as Array<{ webhook: { headers: Record<string, string> } }>;
    assert.equal(stored!.webhook.headers.Authorization, 'Bearer ${TOKEN}', 'the stored hook keeps the template');
  });
});
