import assert from 'node:assert/strict';
import { RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { defineAgent, useWebhookWorld, webhookHook, type World } from './harness.js';

/**
 * `fallback: 'none'` delivery failures are critical. The dispatcher delivers
 * every sibling hook first, then throws one CriticalHookDeliveryError; the
 * runtime's step loop lets it fail the operation (status `error`, code
 * CRITICAL_HOOK_DELIVERY). This is the documented runtime behaviour: a hook
 * the caller marked as must-deliver is not silently dropped.
 */
describe('integration: critical webhook delivery', function () {
  this.timeout(15_000);
  let world: World;
  let receiver: RecordingReceiver;

  // A token variable that is certainly unset, so QStash delivery is a configuration error without any network use.
  useWebhookWorld((s) => ({ world, receiver } = s), { configure: (config) => void (config.webhooks.qstash.tokenEnv = 'HOOKGATE_E2E_UNSET_QSTASH_TOKEN') });

  async function runWith(critical: ReturnType<typeof webhookHook>) {
    const kernel = await world.boot();
    defineAgent(kernel, 'talker', [{ text: 'hello' }]);
    // How many healthy deliveries had arrived when the operation reported its end.
    let healthyAtFinish = -1;
    kernel.events.on((e) => {
      if (e.type === 'operation_finished') healthyAtFinish = receiver.to('/healthy').length;
    });
    const handle = await kernel.execAgent({
      agentId: 'talker',
      prompt: 'hi',
      hooks: [critical, webhookHook('healthy', 'afterStep', { url: receiver.url('/healthy') })],
    });
    const record = await handle.completed();
    return { kernel, record, healthyAtFinish };
  }

  it('qstash without a token and fallback none: the healthy sibling still receives, then the operation ends with CRITICAL_HOOK_DELIVERY', async () => {
    const { record, healthyAtFinish } = await runWith(webhookHook('must-deliver', 'afterStep', { url: receiver.url('/critical'), delivery: 'qstash', fallback: 'none' }));

    assert.equal(receiver.to('/critical').length, 0, 'no fetch fallback with fallback none');
    assert.equal(healthyAtFinish, 1, 'the sibling after the failed hook was delivered before the operation ended');
    assert.equal(receiver.to('/healthy')[0]!.body.stepIndex, 0);
    assert.equal(record.status, 'error');
    assert.equal(record.error?.code, 'CRITICAL_HOOK_DELIVERY');
    assert.match(record.error?.message ?? '', /must-deliver/);
    assert.ok(world.logLines.some((l) => l.includes('"hookId":"must-deliver"') && l.includes('"kind":"configuration"')));
  });

  it('fetch to a dead port with fallback none fails the same way after the sibling ran', async () => {
    const dead = await RecordingReceiver.start();
    const deadUrl = dead.url('/gone');
    await dead.close();
    const { record, healthyAtFinish } = await runWith(webhookHook('must-deliver', 'afterStep', { url: deadUrl, fallback: 'none', timeout: 2 }));

    assert.equal(healthyAtFinish, 1);
    assert.equal(record.status, 'error');
    assert.equal(record.error?.code, 'CRITICAL_HOOK_DELIVERY');
  });

  it('without fallback none the same failure is only logged and the operation completes', async () => {
    const dead = await RecordingReceiver.start();
    const deadUrl = dead.url('/gone');
    await dead.close();
    const { record } = await runWith(webhookHook('best-effort', 'afterStep', { url: deadUrl, timeout: 2 }));

    assert.equal(receiver.to('/healthy').length, 1);
    assert.equal(record.status, 'done');
  });
});
