import type { Job, Queue, Worker } from 'bullmq';
import { HookgateError, errorMessage } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import type { QueuedStep, QueuedStepRunner, StepQueue } from '../../kernel/step-queue.js';
import type { RedisAddress } from './redis-address.js';

/** The BullMQ queue every step job goes to (under the configured key prefix). */
export const STEP_QUEUE_NAME = 'steps';

/** How long the start-up check waits for Redis before it calls it unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * How long an enqueue waits for Redis to answer again before it refuses
 * with QUEUE_UNAVAILABLE: longer than ioredis's largest reconnect pause (2 s),
 * so an admission in the seconds after a Redis restart waits for the
 * reconnect instead of failing; bounded, so one made while Redis is down
 * still fails with a clear error.
 */
export const ENQUEUE_WAIT_MS = 5_000;

/** The pause between enqueue attempts while Redis is away, growing up to this. */
const ENQUEUE_RETRY_MAX_PAUSE_MS = 250;

/** Attempts of a job whose runner rejected (the store unreachable, say); each later by a doubling backoff from this. */
const JOB_ATTEMPTS = 10;
const JOB_BACKOFF_MS = 500;

/** How often a job may stall (its worker died) before BullMQ fails it; the sweep enqueues a failed one again anyway. */
const MAX_STALLED = 20;

export interface BullmqStepQueueOptions {
  address: RedisAddress;
  prefix: string;
  concurrency: number;
  /** The runtime's lease (`runtime.leaseMs`): a job's lock lasts as long, so a dead worker's job and lease expire together. */
  leaseMs: number;
  logger: Logger;
}

/**
 * The step queue on Redis with BullMQ. A step's job id is the operation id
 * and version (`<operationId>.<version>`), so enqueueing one step twice adds
 * one job while it waits or runs; jobs are removed when done (the store
 * keeps the history). A job whose worker died stalls and BullMQ hands it to
 * another worker once its lock (as long as the lease) expires; a runner
 * answer `later` moves the job to the delayed set until then.
 */
export class BullmqStepQueue implements StepQueue {
  /** BullMQ, loaded at `open`: importing it costs more than half a second, which no in-process command should pay. */
  private bullmq: typeof import('bullmq') | undefined;
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private readonly warned = new Set<string>();

  constructor(private readonly options: BullmqStepQueueOptions) {}

  /**
   * Checks that Redis answers (QUEUE_UNAVAILABLE naming the address, never
   * the password, when it does not within 5 s) and opens the producer.
   * Called at plugin start.
   */
  async open(): Promise<void> {
    const { address } = this.options;
    this.bullmq = await import('bullmq');
    const { Redis } = await import('ioredis');
    const probe = new Redis({ ...address.options, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: CONNECT_TIMEOUT_MS, retryStrategy: () => null });
    // The socket's own error (ECONNREFUSED, a DNS failure, WRONGPASS) says more than the rejection's "Connection is closed".
    let socketError: unknown;
    probe.on('error', (err) => (socketError ??= err));
    try {
      await probe.connect();
      await probe.ping();
    } catch (err) {
      const why = socketError ?? err;
      throw unavailable(`cannot reach Redis at ${address.shown} (queue.redis): ${errorMessage(why)}`, address.shown, why);
    } finally {
      probe.disconnect();
    }
    // Fails fast while Redis is away (no offline queue): an admission then says so instead of hanging.
    this.queue = new this.bullmq.Queue(STEP_QUEUE_NAME, { connection: { ...address.options, enableOfflineQueue: false }, prefix: this.options.prefix });
    this.queue.on('error', (err) => this.warnOnce('queue', err));
    await this.queue.waitUntilReady();
  }

  /**
   * Adds the step's job. While Redis is away (restarting, the client
   * reconnecting) the add is tried again, with short growing pauses, for up
   * to ENQUEUE_WAIT_MS: the job id makes a repeated add one job. Then it
   * rejects with QUEUE_UNAVAILABLE naming the address and the last error.
   */
  async enqueue(step: QueuedStep): Promise<void> {
    const queue = this.queue;
    if (!queue) throw unavailable('the step queue is not open (the execution-queue plugin has not started)', this.options.address.shown);
    const deadline = Date.now() + ENQUEUE_WAIT_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        const adding = queue.add('step', { operationId: step.operationId, version: step.version }, {
          jobId: stepJobId(step),
          removeOnComplete: true,
          removeOnFail: true,
          attempts: JOB_ATTEMPTS,
          backoff: { type: 'exponential', delay: JOB_BACKOFF_MS },
        });
        // BullMQ waits for a reconnecting client without bound: the add is given what is left of the wait. One that
        // lands later anyway is the same job (its id), which the sweep would have enqueued.
        adding.catch(() => undefined);
        await withinMs(adding, deadline - Date.now());
        return;
      } catch (err) {
        const left = deadline - Date.now();
        if (left <= 0 || this.queue !== queue) {
          throw unavailable(
            `could not enqueue step ${step.version} of operation ${step.operationId} on Redis at ${this.options.address.shown} (tried for ${Math.round(ENQUEUE_WAIT_MS / 1000)} s): ${errorMessage(err)}`,
            this.options.address.shown,
            err,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(left, ENQUEUE_RETRY_MAX_PAUSE_MS, 25 * attempt)));
      }
    }
  }

  async consume(runner: QueuedStepRunner): Promise<void> {
    if (this.worker) return;
    const bullmq = this.bullmq;
    if (!bullmq) throw unavailable('the step queue is not open (the execution-queue plugin has not started)', this.options.address.shown);
    const { address, prefix, concurrency, leaseMs, logger } = this.options;
    this.worker = new bullmq.Worker(STEP_QUEUE_NAME, (job, token) => this.process(runner, job, token), {
      // Workers block on Redis and must retry forever while it is away (BullMQ's requirement).
      connection: { ...address.options, maxRetriesPerRequest: null },
      prefix,
      concurrency,
      lockDuration: leaseMs,
      stalledInterval: leaseMs,
      maxStalledCount: MAX_STALLED,
      autorun: false,
    });
    this.worker.on('error', (err) => this.warnOnce('worker', err));
    this.worker.on('failed', (job, err) => {
      if (job && !(err instanceof bullmq.DelayedError)) logger.warn('a step job failed', { jobId: job.id, attempts: job.attemptsMade, error: errorMessage(err) });
    });
    void this.worker.run().catch((err: unknown) => logger.error('the step worker stopped', { error: errorMessage(err) }));
    await this.worker.waitUntilReady();
  }

  async stopConsuming(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    await worker.close();
  }

  /** Stops consuming (in-flight steps finish) and closes the producer. Idempotent. */
  async close(): Promise<void> {
    await this.stopConsuming();
    const queue = this.queue;
    this.queue = undefined;
    await queue?.close();
  }

  private async process(runner: QueuedStepRunner, job: Job, token: string | undefined): Promise<string> {
    const step = readStep(job.data);
    if (!step) {
      // Not a job this queue made (written by hand, or by another program on the same prefix): nothing to run.
      this.options.logger.warn('dropped a step job that carries no operation id and version', { jobId: job.id });
      return 'skipped';
    }
    const outcome = await runner(step);
    if (outcome.kind === 'later') {
      await job.moveToDelayed(outcome.at, token);
      throw new this.bullmq!.DelayedError();
    }
    return outcome.kind;
  }

  /** Redis errors repeat on every reconnect attempt: each kind is logged once until the next success. */
  private warnOnce(where: string, err: unknown): void {
    const message = errorMessage(err);
    const key = `${where}:${message}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.options.logger.warn('Redis error (the step queue retries)', { redis: this.options.address.shown, where, error: message });
  }
}

/** `<operationId>.<version>`, escaped: BullMQ refuses ids with ':' and ids that are integers. */
export function stepJobId(step: QueuedStep): string {
  return `${encodeURIComponent(step.operationId)}.${step.version}`;
}

function readStep(data: unknown): QueuedStep | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { operationId, version } = data as Record<string, unknown>;
  if (typeof operationId !== 'string' || operationId === '' || operationId.length > 200) return undefined;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0) return undefined;
  return { operationId, version };
}

/** `promise`, or a rejection once `ms` passed without it settling. */
async function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('Redis did not answer (the client is reconnecting)')), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function unavailable(message: string, redis: string, cause?: unknown): HookgateError {
  return new HookgateError('QUEUE_UNAVAILABLE', message, { details: { redis }, ...(cause !== undefined ? { cause } : {}) });
}
