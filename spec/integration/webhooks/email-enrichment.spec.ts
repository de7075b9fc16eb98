import assert from 'node:assert/strict';
import type { RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { defineAgent, useWebhookWorld, webhookHook, type World } from './harness.js';

/** `userEmail` in notification payloads comes from the store's users table, looked up by the run's userId. */
describe('integration: webhook payload email enrichment', function () {
  this.timeout(15_000);
  let world: World;
  let receiver: RecordingReceiver;

  useWebhookWorld((s) => ({ world, receiver } = s));

  it('a run with userId u1 sends notifications carrying u1\'s stored email', async () => {
    const kernel = await world.boot();
    await kernel.store.upsertUser({ id: 'u1', email: 'u1@example.test' });
    defineAgent(kernel, 'talker', [{ text: 'hello' }]);
    const handle = await kernel.execAgent({
      agentId: 'talker',
      prompt: 'hi',
      userId: 'u1',
      hooks: [webhookHook('steps', 'afterStep', { url: receiver.url('/steps') }), webhookHook('done', 'onComplete', { url: receiver.url('/done') })],
    });
    await handle.completed();
    await receiver.waitFor(() => receiver.to('/done').length === 1);

    const step = receiver.to('/steps')[0]!.body;
    assert.equal(step.userId, 'u1');
    assert.equal(step.userEmail, 'u1@example.test');
    assert.equal(step.hookType, 'afterStep');
    assert.equal(receiver.to('/done')[0]!.body.userEmail, 'u1@example.test');
    assert.equal(receiver.to('/done')[0]!.body.finalState, undefined, 'finalState is never serialized');
  });

  it('a user without a stored email gets no userEmail', async () => {
    const kernel = await world.boot();
    defineAgent(kernel, 'talker', [{ text: 'hello' }]);
    const handle = await kernel.execAgent({ agentId: 'talker', prompt: 'hi', userId: 'nobody', hooks: [webhookHook('steps', 'afterStep', { url: receiver.url('/steps') })] });
    await handle.completed();

    const step = receiver.to('/steps')[0]!.body;
    assert.equal(step.userId, 'nobody');
    assert.equal('userEmail' in step, false);
  });
});
