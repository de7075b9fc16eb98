import assert from 'node:assert/strict';
import { deny, type RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { control, defineAgent, fsCall, toolMessages, useWebhookWorld, type World } from './harness.js';

/**
 * A restart between the approval request and the result control: kernel A
 * parks and stops, kernel B (same data dir, same SQLite file) approves. The
 * caller's webhook hooks come back from the store, so the after-control is
 * asked and its deny applied.
 */
describe('integration: caller webhook hooks survive approval and restart', function () {
  this.timeout(15_000);
  let world: World;
  let receiver: RecordingReceiver;

  useWebhookWorld((s) => ({ world, receiver } = s));

  it('kernel B approves and the restored afterToolCall control denies the result', async () => {
    const turns = [fsCall('writeFile', { path: 'approved.txt', content: 'after approval' }), { text: 'finished' }];
    const kernelA = await world.boot();
    defineAgent(kernelA, 'careful', turns, { approval: ['fs/writeFile'] });
    receiver.route('/check', deny('denied after restart'));
    const handle = await kernelA.execAgent({ agentId: 'careful', prompt: 'write', hooks: [control('review', 'afterToolCall', receiver.url('/check'))] });
    const parked = await handle.settled();
    assert.equal(parked.status, 'waiting_approval');
    assert.equal(await world.fileExists('approved.txt'), false);
    await kernelA.stop();

    const kernelB = await world.boot();
    defineAgent(kernelB, 'careful', turns, { approval: ['fs/writeFile'] });
    const resumed = await kernelB.approve(handle.operationId);
    const record = await resumed.completed();

    assert.equal(record.status, 'done');
    assert.equal(receiver.to('/check').length, 1, 'the restored control was asked once');
    assert.equal(receiver.to('/check')[0]!.body.hookId, 'review');
    assert.equal(receiver.to('/check')[0]!.body.operationId, handle.operationId);
    assert.equal(await world.readSandbox('approved.txt'), 'after approval', 'the approved tool ran');
    const [tool] = await toolMessages(kernelB, handle.operationId);
    assert.equal(tool!.content, 'denied after restart');
    assert.equal(tool!.toolResult?.error, 'hook_denied');
    const last = world.model.requests.filter((r) => r.operationId === handle.operationId).at(-1)!;
    assert.equal(last.messages.find((m) => m.role === 'tool')?.content, 'denied after restart');
  });
});
