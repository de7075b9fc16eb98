import { definePlugin } from '../../kernel/plugin.js';
import { HookgateConfigToken } from '../../config/config-token.js';
import { DEFAULT_LEASE_MS } from '../../kernel/runtime/in-process-driver.js';
import { Config, Environment, Logger, Secrets, StepQueue } from '../../kernel/tokens.js';
import { BullmqStepQueue } from './bullmq-step-queue.js';
import { redisAddress } from './redis-address.js';

/**
 * Queue mode (`execution: queue`): binds the kernel's `StepQueue` to BullMQ
 * on the Redis of `queue.redis`. Start checks that Redis answers
 * (QUEUE_UNAVAILABLE naming the address without its password) and opens the
 * producer; the kernel then only admits and enqueues, and `kernel.work()`
 * (`hookgate worker`) takes the jobs. Stop lets in-flight steps finish, then
 * closes the connections.
 */
export default definePlugin({
  id: 'execution-queue',
  description: 'Runs each step of an operation as a BullMQ job on Redis, taken by hookgate worker processes',
  requires: [Config, Logger, Secrets, Environment],
  provides: [StepQueue],
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
  },
  async start(ctx) {
    await (ctx.resolve(StepQueue) as BullmqStepQueue).open();
  },
  async stop(ctx) {
    await (ctx.resolve(StepQueue) as BullmqStepQueue).close();
  },
});

export { BullmqStepQueue, stepJobId, STEP_QUEUE_NAME } from './bullmq-step-queue.js';
export { redisAddress, type RedisAddress } from './redis-address.js';
