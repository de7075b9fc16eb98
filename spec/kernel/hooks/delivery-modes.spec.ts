import assert from 'node:assert/strict';
import type { HookgateConfig } from '../../../config/defaults.js';
import { loadConfig } from '../../../config/load-config.js';
import { HookDispatcher, type DeliveryMode } from '../../../kernel/hooks/hook-dispatcher.js';
import type { AgentHook } from '../../../kernel/hooks/hook-types.js';
import { createWebhookSupport } from '../../../kernel/hooks/webhook-support.js';
import { createLogger, SecretScrubber } from '../../../kernel/logger.js';
import { FetchWebhookTransport } from '../../../plugins/transport-fetch/index.js';
import { RecordingReceiver } from '../../helpers/webhook-receiver.js';

describe('hooks: local and queue delivery modes', () => {
  let receiver: RecordingReceiver;
  let config: HookgateConfig;

  before(async () => {
    receiver = await RecordingReceiver.start();
    config = loadConfig({ cwd: '/tmp', env: {} });
  });
  after(() => receiver.close());
  beforeEach(() => receiver.requests.splice(0));

  function dispatcher(mode: DeliveryMode): HookDispatcher {
    const logger = createLogger({ level: 'silent' });
    const webhooks = createWebhookSupport({ config, transports: [new FetchWebhookTransport()], logger, scrubber: new SecretScrubber(), env: {} });
    return new HookDispatcher({ logger, mode, webhooks });
  }

  const event = { operationId: 'op-1', agentId: 'a', stepIndex: 0, timestamp: new Date().toISOString(), stepType: 'call_llm' as const };

  function hooks(calls: string[]): AgentHook[] {
    return [
      { id: 'both', type: 'beforeStep', handler: () => void calls.push('both'), webhook: { url: receiver.url('/both') } },
      { id: 'handler-only', type: 'beforeStep', handler: () => void calls.push('handler-only') },
      { id: 'webhook-only', type: 'beforeStep', webhook: { url: receiver.url('/webhook-only') } },
    ];
  }

  it('local mode calls handlers (a hook with both uses its handler) and sends webhook-only hooks', async () => {
    const calls: string[] = [];
    const d = dispatcher('local');
    d.register('op-1', hooks(calls));
    await d.dispatch('op-1', 'beforeStep', event);
    assert.deepEqual(calls, ['both', 'handler-only']);
    assert.deepEqual(receiver.requests.map((r) => r.path), ['/webhook-only']);
  });

  it('queue mode sends the serialized webhooks only: handlers never run, handler-only hooks are skipped', async () => {
    const calls: string[] = [];
    const d = dispatcher('queue');
    d.register('op-1', hooks(calls));
    await d.dispatch('op-1', 'beforeStep', event);
    assert.deepEqual(calls, []);
    assert.deepEqual(receiver.requests.map((r) => r.path), ['/both', '/webhook-only']);
    assert.equal(receiver.requests[0]!.body.hookId, 'both');
  });

  it('queue mode offers no local mocks', async () => {
    const d = dispatcher('queue');
    const mocker: AgentHook<'beforeToolCall'> = { id: 'mocker', type: 'beforeToolCall', handler: (e) => void e.mock({ content: 'x' }) };
    d.register('op-1', [mocker as AgentHook]);
    const ctx = { toolCallId: 't', assistantMessageId: 'm', identifier: 'fs', apiName: 'readFile', args: {}, callIndex: 0, stepIndex: 0, operationId: 'op-1', executor: 'server' as const, timestamp: event.timestamp };
    assert.equal(await d.dispatchBeforeToolCall('op-1', ctx), null);
  });
});
