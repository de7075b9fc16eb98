import { definePlugin } from '../../kernel/plugin.js';
import { HookgateConfigToken } from '../../config/config-token.js';
import { DEFAULT_LEASE_MS } from '../../kernel/runtime/in-process-driver.js';
import { Config, Environment, Logger, OperationEventRelay, Secrets, StepQueue } from '../../kernel/tokens.js';
import { BullmqStepQueue } from './bullmq-step-queue.js';
import { redisAddress } from './redis-address.js';
import { RedisEventRelay } from './redis-event-relay.js';

/**
 * Queue mode (`execution: queue`): binds the kernel's `StepQueue` to BullMQ
 * on the Redis of `queue.redis`. Start checks that Redis answers
 * (QUEUE_UNAVAILABLE naming the address without its password) and opens the
 * producer; the kernel then only admits and enqueues, and `kernel.work()`
 * (`hookgate worker`) takes the jobs. Stop lets in-flight steps finish, then
 * closes the connections. It also binds `OperationEventRelay` (Redis
 * pub/sub on the same Redis): the kernel relays operation events between
 * the processes of the queue, so an API process streams a worker's live
 * chunks.
 */
export default definePlugin({
  id: 'execution-queue',
  description: 'Runs each step of an operation as a BullMQ job on Redis, taken by hookgate worker processes',
  requires: [Config, Logger, Secrets, Environment],
  provides: [StepQueue, OperationEventRelay],
  drivers: [{ kind: 'execution', name: 'queue' }],
  register(ctx) {
    ctx.bindFactory(StepQueue, (c) => {
      const config = c.resolve(HookgateConfigToken);
      const address = redisAddress(config.queue.redis, c.resolve(Environment));
      if (address.options.password !== undefined) c.resolve(Secrets).add(address.options.password);
      return new BullmqStepQueue({
        address,
        prefix: config.queue.prefix,
        concurrency: config.queue.concurrency,
        leaseMs: config.runtime?.leaseMs ?? DEFAULT_LEASE_MS,
        logger: c.resolve(Logger).child({ plugin: 'execution-queue' }),
      });
    });
    ctx.bindFactory(OperationEventRelay, (c) => {
      const config = c.resolve(HookgateConfigToken);
      const address = redisAddress(config.queue.redis, c.resolve(Environment));
      return new RedisEventRelay({ address, prefix: config.queue.prefix, logger: c.resolve(Logger).child({ plugin: 'execution-queue', component: 'event-relay' }) });
    });
  },
  async start(ctx) {
    await (ctx.resolve(StepQueue) as BullmqStepQueue).open();
  },
  async stop(ctx) {
    await (ctx.resolve(StepQueue) as BullmqStepQueue).close();
    await ctx.resolve(OperationEventRelay).close();
  },
});

export { BullmqStepQueue, stepJobId, STEP_QUEUE_NAME } from './bullmq-step-queue.js';
export { redisAddress, type RedisAddress } from './redis-address.js';
export { RedisEventRelay, eventChannel, MAX_PENDING_PUBLISHES, MAX_RELAYED_EVENT_CHARS } from './redis-event-relay.js';
