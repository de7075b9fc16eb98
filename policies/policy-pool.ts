import { Piscina } from 'piscina';
import type { ResourceLimits } from 'node:worker_threads';
import type { WorkerTask } from './worker/worker-protocol.js';

export interface PolicyPoolOptions {
  maxWorkers: number;
  /** Per-worker V8 limits; reaching them terminates the worker (the task fails closed). */
  resourceLimits?: ResourceLimits;
  /** Reports pool-level worker errors that have no task to fail. */
  onError?: (err: Error) => void;
}

export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };

const WORKER_URL = new URL('./worker/policy-worker.js', import.meta.url).href;

/**
 * The piscina pool that runs policy conditions and code policies. A facade so
 * the engine sees `start`/`stop`/`run` only. Aborting a run's signal while the
 * task is running makes piscina terminate that worker (and start a fresh one).
 */
export class PolicyPool {
  private pool: Piscina | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: PolicyPoolOptions) {}

  /**
   * Creates the workers and waits until each has loaded its dependencies, so
   * the first decision does not pay worker start-up inside its deadline.
   * Idempotent; restarts a stopped pool.
   */
  async start(): Promise<void> {
    this.stopped = false;
    if (this.pool) return this.starting;
    const threads = Math.max(1, this.options.maxWorkers);
    this.pool = new Piscina({
      filename: WORKER_URL,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
      resourceLimits: this.options.resourceLimits ?? DEFAULT_RESOURCE_LIMITS,
    });
    this.pool.on('error', (err: Error) => this.options.onError?.(err));
    const pool = this.pool;
    this.starting = Promise.all(Array.from({ length: threads }, () => pool.run({ kind: 'ping' } satisfies WorkerTask))).then(() => undefined);
    return this.starting;
  }

  /** Terminates every worker; runs in flight reject (their decisions fail closed). Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    const pool = this.pool;
    this.pool = undefined;
    this.starting = undefined;
    if (pool) await pool.destroy();
  }

  /**
   * Runs one task. Starts the pool on first use unless `stop()` was called.
   * Rejects with piscina's AbortError when `signal` aborts, with the worker's
   * exit error when it crashes or runs out of memory.
   */
  async run<R>(task: WorkerTask, signal?: AbortSignal): Promise<R> {
    if (!this.pool) {
      if (this.stopped) throw new Error('the policy worker pool is stopped');
      void this.start().catch(() => undefined);
    }
    return (await this.pool!.run(task, { signal: signal ?? null })) as R;
  }
}
