import type { HookgateConfig } from '../../config/defaults.js';
import { loadConfig } from '../../index.js';
import { HookDispatcher } from '../../kernel/hooks/hook-dispatcher.js';
import type { AfterStepEvent } from '../../kernel/hooks/hook-types.js';
import { createWebhookSupport } from '../../kernel/hooks/webhook-support.js';
import { createLogger, SecretScrubber } from '../../kernel/logger.js';
import type { UserDirectory } from '../../kernel/user-directory.js';
import { FetchWebhookTransport } from '../../plugins/transport-fetch/index.js';
import { BenchReceiver } from './receiver.js';

/** A user directory that answers from memory and counts every look-up. */
class CountingDirectory implements UserDirectory {
  lookups = 0;
  async getEmail(userId: string): Promise<string | undefined> {
    this.lookups += 1;
    return `${userId}@example.test`;
  }
}

export interface HeapSample {
  /** Notifications delivered when the sample was taken. */
  delivered: number;
  heapUsed: number;
}

export interface FanoutResult {
  notifications: number;
  users: number;
  concurrency: number;
  lookups: number;
  requestsSeen: number;
  /** Every payload carried its user's email. */
  emailsOk: boolean;
  ms: number;
  /** heapUsed after a forced GC: before the first notification, then every `sampleEvery`. */
  samples: HeapSample[];
  gcExposed: boolean;
}

/**
 * 10,000 afterStep notifications for 500 distinct users through the
 * dispatcher, the payload builder (with its per-dispatcher email cache) and
 * the fetch transport, to a loopback receiver answering 204. Notifications go
 * out in concurrent batches, so the same user is looked up by several
 * in-flight payloads at once (pending look-ups are shared). The directory
 * counts look-ups; heapUsed is sampled after a forced GC.
 */
export async function measureNotificationFanout(options: { notifications: number; users: number; concurrency: number; sampleEvery: number }): Promise<FanoutResult> {
  const receiver = await BenchReceiver.start({ status: 204 });
  const directory = new CountingDirectory();
  const config: HookgateConfig = loadConfig({ cwd: process.cwd(), env: { HOOKGATE_STORE__DRIVER: 'memory' } });
  const logger = createLogger({ level: 'silent' });
  const dispatcher = new HookDispatcher({
    logger,
    webhooks: createWebhookSupport({ config, transports: [new FetchWebhookTransport()], userDirectory: directory, logger, scrubber: new SecretScrubber(), env: {} }),
  });
  const operationId = 'op_fanout';
  dispatcher.register(operationId, [{ id: 'audit', type: 'afterStep', webhook: { url: receiver.url('/audit') } }]);
  const gc = (globalThis as { gc?: () => void }).gc;
  const heap = () => {
    gc?.();
    gc?.();
    return process.memoryUsage().heapUsed;
  };
  let emailsOk = true;
  const check = receiver as unknown as { lastBody: string };
  const samples: HeapSample[] = [{ delivered: 0, heapUsed: heap() }];
  const event = (i: number): AfterStepEvent => ({
    operationId,
    agentId: 'bench-agent',
    stepIndex: i,
    stepType: 'call_llm',
    userId: `user_${i % options.users}`,
    timestamp: new Date().toISOString(),
    content: 'step text',
    usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15, cost: 0 },
    totalUsage: { promptTokens: 10, completionTokens: 5, totalTokens: 15, cost: 0 },
  }) as AfterStepEvent;

  const t0 = performance.now();
  try {
    for (let start = 0; start < options.notifications; start += options.concurrency) {
      const end = Math.min(options.notifications, start + options.concurrency);
      const batch: Promise<void>[] = [];
      for (let i = start; i < end; i++) batch.push(dispatcher.dispatch(operationId, 'afterStep', event(i)));
      await Promise.all(batch);
      const body = JSON.parse(check.lastBody) as { userId?: string; userEmail?: string };
      if (body.userEmail !== `${body.userId}@example.test`) emailsOk = false;
      if (end % options.sampleEvery === 0 || end === options.notifications) samples.push({ delivered: end, heapUsed: heap() });
    }
    return {
      notifications: options.notifications,
      users: options.users,
      concurrency: options.concurrency,
      lookups: directory.lookups,
      requestsSeen: receiver.requests,
      emailsOk,
      ms: performance.now() - t0,
      samples,
      gcExposed: gc !== undefined,
    };
  } finally {
    await receiver.close();
  }
}
