import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AgentHook } from '../../../kernel/hooks/hook-types.js';
import type { RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { defineAgent, fsCall, useWebhookWorld, webhookHook, type World } from './harness.js';

/**
 * Issue 9, item 19: afterToolCall notification payloads trim only raw skill
 * Work data (document 000, the reference's redactResultForEvents), through the
 * real kernel, the builtin fs tools and a loopback receiver.
 */
describe('integration: afterToolCall notifications trim only skill Work data', function () {
  this.timeout(15_000);
  let world: World;
  let receiver: RecordingReceiver;

  useWebhookWorld((s) => ({ world, receiver } = s));

  it('a tool result\'s own data reaches the receiver as it is', async () => {
    const kernel = await world.boot();
    await mkdir(world.sandbox, { recursive: true });
    await writeFile(path.join(world.sandbox, 'only.txt'), 'x');
    defineAgent(kernel, 'lister', [fsCall('listDir', { path: '.' }), { text: 'done' }]);
    const handle = await kernel.execAgent({ agentId: 'lister', prompt: 'go', hooks: [webhookHook('audit', 'afterToolCall', { url: receiver.url('/audit') })] });
    assert.equal((await handle.completed()).status, 'done');
    await receiver.waitFor(() => receiver.to('/audit').length === 1);
    const { result } = receiver.to('/audit')[0]!.body as { result: { data: unknown; success: boolean } };
    assert.equal(result.success, true);
    assert.deepEqual(result.data, { path: '.', entries: [{ name: 'only.txt', type: 'file' }] });
  });

  it('a skill Work registration arrives with data: null and no args; the local handler still sees all of it', async () => {
    const kernel = await world.boot();
    defineAgent(kernel, 'skilled', [fsCall('listDir', { path: '.' }), { text: 'done' }]);
    const raw = { type: 'skill', name: 'quarterly-report', data: { rows: 'r'.repeat(200) }, args: { query: 'everything' } };
    let seenLocally: unknown;
    const hooks: AgentHook[] = [
      { id: 'skill', type: 'beforeToolCall', handler: (e) => void (e as { mock: (r: unknown) => boolean }).mock({ content: 'report ready', data: { pages: 3 }, workRegistration: raw }) } as AgentHook,
      { id: 'local', type: 'afterToolCall', handler: (e) => void (seenLocally = (e as { result: { workRegistration?: unknown } }).result.workRegistration) } as AgentHook,
      webhookHook('audit', 'afterToolCall', { url: receiver.url('/audit') }),
    ];
    const handle = await kernel.execAgent({ agentId: 'skilled', prompt: 'go', hooks });
    assert.equal((await handle.completed()).status, 'done');
    await receiver.waitFor(() => receiver.to('/audit').length === 1);
    const { result, mocked } = receiver.to('/audit')[0]!.body as { result: Record<string, unknown>; mocked: boolean };
    assert.equal(mocked, true);
    assert.equal(result.content, 'report ready');
    assert.deepEqual(result.data, { pages: 3 });
    assert.deepEqual(result.workRegistration, { type: 'skill', name: 'quarterly-report', data: null });
    assert.deepEqual(seenLocally, raw);
  });
});
