import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Kernel } from '../../../kernel/kernel.js';
import { deny, type RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { control, defineAgent, fsCall, toolMessages, useWebhookWorld, webhookHook, type World } from './harness.js';

/**
 * afterToolCall controls through the real kernel: the tool runs (its side
 * effect stays), but a deny replaces the result before it is stored, streamed
 * or shown to the model.
 */
describe('integration: afterToolCall control webhooks', function () {
  this.timeout(15_000);
  let world: World;
  let kernel: Kernel;
  let receiver: RecordingReceiver;

  useWebhookWorld((s) => ({ world, receiver } = s));
  beforeEach(async () => {
    kernel = await world.boot();
  });

  it('a deny after writeFile keeps the file but stores and shows the model only the denial', async () => {
    defineAgent(kernel, 'writer', [fsCall('writeFile', { path: 'out.txt', content: 'side effect' }), { text: 'finished' }]);
    receiver.route('/check', deny('result withheld by review'));
    const handle = await kernel.execAgent({
      agentId: 'writer',
      prompt: 'write',
      hooks: [control('review', 'afterToolCall', receiver.url('/check')), webhookHook('observer', 'afterToolCall', { url: receiver.url('/observe') })],
    });
    const record = await handle.completed();

    assert.equal(record.status, 'done');
    assert.equal(await world.readSandbox('out.txt'), 'side effect', 'the side effect is not undone');

    // The control saw the raw result...
    const raw = receiver.to('/check')[0]!.body.result;
    assert.equal(raw.success, true);
    assert.match(raw.content, /^wrote 11 bytes/);

    // ...but everything after it carries the denial.
    const [tool] = await toolMessages(kernel, handle.operationId);
    assert.equal(tool!.content, 'result withheld by review');
    assert.equal(tool!.toolResult?.error, 'hook_denied');
    assert.deepEqual(tool!.toolResult?.state, { type: 'blocked', reason: 'result withheld by review' });

    const second = world.model.requests.filter((r) => r.operationId === handle.operationId)[1]!;
    const seen = second.messages.find((m) => m.role === 'tool')!;
    assert.equal(seen.content, 'result withheld by review');
    assert.ok(!JSON.stringify(second.messages).includes('wrote 11 bytes'), 'the model never sees the raw output');

    await receiver.waitFor(() => receiver.to('/observe').length === 1);
    assert.equal(receiver.to('/observe')[0]!.body.result.content, 'result withheld by review', 'observers get the published (denied) result');
  });

  it('a denied readFile output reaches no stored message, event or model request', async () => {
    await mkdir(world.sandbox, { recursive: true });
    await writeFile(path.join(world.sandbox, 'private.txt'), 'RAW-OUTPUT-7f3a9c');
    defineAgent(kernel, 'reader', [fsCall('readFile', { path: 'private.txt' }), { text: 'finished' }]);
    receiver.route('/check', deny());
    const handle = await kernel.execAgent({ agentId: 'reader', prompt: 'read', hooks: [control('review', 'afterToolCall', receiver.url('/check'))] });
    await handle.completed();

    assert.equal(receiver.to('/check')[0]!.body.result.content, 'RAW-OUTPUT-7f3a9c', 'the control gets the full result');
    const [tool] = await toolMessages(kernel, handle.operationId);
    assert.equal(tool!.content, 'Blocked by afterToolCall hook.');
    assert.equal(tool!.toolResult?.error, 'hook_denied');

    const published = JSON.stringify({
      messages: await kernel.listMessages(handle.operationId),
      steps: await kernel.listSteps(handle.operationId),
      operation: await kernel.getOperation(handle.operationId),
      events: world.eventLines,
      model: world.model.requests,
    });
    assert.ok(!published.includes('RAW-OUTPUT-7f3a9c'));
  });
});
