import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { ResourceLimits } from 'node:worker_threads';
import type { ConditionTask, EvaluateBatchTask, EvaluateOutcome, WorkerTask } from './worker/worker-protocol.js';

export interface PolicyPoolOptions {
  /** Worker threads (default `defaultPolicyWorkers()`). */
  maxWorkers?: number;
  /**
   * Decisions that may have conditions queued for or running in a worker at
   * once (default 1,024). One more is refused (`evaluate` answers
   * `'overloaded'`) instead of waiting without bound.
   */
  maxInFlight?: number;
  /** At most this many conditions go to a worker in one message (default 32). */
  maxBatch?: number;
  /** Per-worker V8 limits; reaching them terminates the worker (the condition running fails closed). */
  resourceLimits?: ResourceLimits;
  /** Reports pool-level worker errors that have no task to fail. */
  onError?: (err: Error) => void;
}

export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };
export const DEFAULT_MAX_IN_FLIGHT = 1024;
export const DEFAULT_MAX_BATCH = 32;
/**
 * Fewer queued conditions than this go to one worker, not split among idle
 * ones: for ordinary conditions (tens of µs) a second hop costs more than
 * the parallelism saves (bench/README.md, "Issue 12: policies under load").
 */
const MIN_SHARE = 8;
/** The default worker count never exceeds this, however many cores the machine has (each worker holds its own heap). */
export const MAX_DEFAULT_WORKERS = 8;

/** One worker per core the process may use, at most `MAX_DEFAULT_WORKERS`. */
export function defaultPolicyWorkers(): number {
  return Math.max(1, Math.min(availableParallelism(), MAX_DEFAULT_WORKERS));
}

const WORKER_URL = new URL('./worker/policy-worker.js', import.meta.url).href;

/** What became of one condition: the worker's outcome, or why there is none (a fail-closed reason). */
export type ConditionResult = { ok: true; outcome: EvaluateOutcome } | { ok: false; failure: string };

/** One condition waiting for, or in, a worker. */
interface QueuedCondition {
  decision: DecisionInFlight;
  index: number;
  task: ConditionTask;
}

/** A decision admitted to the pool: settles once every condition has a result (or the caller cancels). */
interface DecisionInFlight {
  results: ConditionResult[];
  open: number;
  deadlineMs: number;
  settled: boolean;
  resolve: (results: ConditionResult[]) => void;
}

/** A batch a worker is evaluating. */
interface RunningBatch {
  decisions: DecisionInFlight[];
  controller: AbortController;
}

/**
 * The piscina pool that runs policy conditions and code policies, with its
 * own queue in front so that:
 *
 * - a condition's deadline starts when a worker starts it (the worker marks
 *   it in shared memory), never while it waits in the queue: load makes a
 *   decision slower, never a wrong deny;
 * - the queue is bounded: at most `maxInFlight` decisions are queued or
 *   running; one more is refused as `'overloaded'` (the engine's
 *   `policy_overloaded`), not queued and not decided;
 * - a worker is only given work when it is idle, and then everything queued
 *   (up to `maxBatch` conditions, shared out among the idle workers when
 *   each share is at least `MIN_SHARE`) in one message: under load, one hop
 *   and one copy of each input carry many conditions; with little queued, a
 *   hop carries what there is.
 *
 * A condition that overruns its deadline, crashes its worker or exhausts its
 * memory fails closed alone: piscina terminates the worker (and starts a
 * fresh one), and the batch's other conditions, which a terminated worker
 * cannot report, go back to the front of the queue and run again.
 */
export class PolicyPool {
  private pool: Piscina | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;
  private readonly threads: number;
  readonly maxInFlight: number;
  private readonly maxBatch: number;
  /** Waiting conditions, oldest first; `queueHead` skips taken ones without shifting the array. */
  private queue: QueuedCondition[] = [];
  private queueHead = 0;
  private busyWorkers = 0;
  private dispatchScheduled = false;
  private inFlightCount = 0;
  private readonly running = new Set<RunningBatch>();

  constructor(private readonly options: PolicyPoolOptions = {}) {
    this.threads = Math.max(1, options.maxWorkers ?? defaultPolicyWorkers());
    this.maxInFlight = Math.max(1, options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
    this.maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH);
  }

  /** Worker threads this pool runs. */
  get workers(): number {
    return this.threads;
  }

  /** Decisions queued for or running in a worker now. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  /**
   * Creates the workers and waits until each has loaded its dependencies, so
   * the first decision does not pay worker start-up inside its deadline.
   * Idempotent; restarts a stopped pool.
   */
  async start(): Promise<void> {
    this.stopped = false;
    if (this.pool) return this.starting;
    const threads = this.threads;
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

  /** Terminates every worker; conditions queued or running fail closed. Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    const pool = this.pool;
    this.pool = undefined;
    this.starting = undefined;
    for (let i = this.queueHead; i < this.queue.length; i++) this.settle(this.queue[i]!, { ok: false, failure: 'the policy worker pool stopped' });
    this.queue = [];
    this.queueHead = 0;
    if (pool) await pool.destroy();
  }

  /**
   * Runs one task directly on a worker (describe, explain, ping), outside the
   * queue. Starts the pool on first use unless `stop()` was called. Rejects
   * with piscina's AbortError when `signal` aborts, with the worker's exit
   * error when it crashes or runs out of memory.
   */
  async run<R>(task: WorkerTask, signal?: AbortSignal): Promise<R> {
    return (await this.ensurePool().run(task, { signal: signal ?? null })) as R;
  }

  /**
   * Evaluates the conditions of one decision, each under `deadlineMs` counted
   * from when a worker starts it. `'overloaded'` (synchronously, nothing
   * queued) when `maxInFlight` decisions are already in the pool. Otherwise
   * resolves with one result per condition, in order, and never rejects: a
   * timeout, crash, out-of-memory, stopped pool or `signal` abort is that
   * condition's failure.
   */
  evaluate(conditions: readonly ConditionTask[], deadlineMs: number, signal?: AbortSignal): Promise<ConditionResult[]> | 'overloaded' {
    if (signal?.aborted) return Promise.resolve(conditions.map(() => CANCELLED));
    if (this.inFlightCount >= this.maxInFlight) return 'overloaded';
    if (this.stopped) return Promise.resolve(conditions.map(() => ({ ok: false, failure: 'the policy worker pool is stopped' })));
    this.ensurePool();
    return new Promise<ConditionResult[]>((resolve) => {
      const decision: DecisionInFlight = { results: new Array(conditions.length), open: conditions.length, deadlineMs, settled: false, resolve };
      this.inFlightCount++;
      conditions.forEach((task, index) => this.queue.push({ decision, index, task }));
      if (signal) {
        const onAbort = () => this.cancel(decision);
        signal.addEventListener('abort', onAbort, { once: true });
        const done = decision.resolve;
        decision.resolve = (results) => {
          signal.removeEventListener('abort', onAbort);
          done(results);
        };
      }
      this.scheduleDispatch();
    });
  }

  private ensurePool(): Piscina {
    if (!this.pool) {
      if (this.stopped) throw new Error('the policy worker pool is stopped');
      void this.start().catch(() => undefined);
    }
    return this.pool!;
  }

  /** Dispatches once this turn's decisions are queued, so decisions arriving together share hops. */
  private scheduleDispatch(): void {
    if (this.dispatchScheduled) return;
    this.dispatchScheduled = true;
    queueMicrotask(() => {
      this.dispatchScheduled = false;
      this.dispatch();
    });
  }

  /** Gives each idle worker its share of the queue (at most `maxBatch` conditions). */
  private dispatch(): void {
    while (this.busyWorkers < this.threads && this.pool) {
      const idle = this.threads - this.busyWorkers;
      const waiting = this.queue.length - this.queueHead;
      if (waiting === 0) break;
      // Shared out among the idle workers, but a share below MIN_SHARE conditions costs a hop more than it saves.
      const size = Math.min(this.maxBatch, waiting, Math.max(MIN_SHARE, Math.ceil(waiting / idle)));
      const batch: QueuedCondition[] = [];
      while (batch.length < size && this.queueHead < this.queue.length) {
        const next = this.queue[this.queueHead++]!;
        if (!next.decision.settled) batch.push(next);
      }
      if (this.queueHead === this.queue.length) {
        this.queue = [];
        this.queueHead = 0;
      }
      if (batch.length > 0) this.runBatch(this.pool, batch);
    }
  }

  private runBatch(pool: Piscina, batch: QueuedCondition[]): void {
    this.busyWorkers++;
    const progress = new Int32Array(new SharedArrayBuffer(4 * (batch.length + 1)));
    const epoch = Date.now();
    const task: EvaluateBatchTask = { kind: 'evaluateBatch', epoch, progress, conditions: batch.map((c) => c.task) };
    const controller = new AbortController();
    let overran = -1;
    let timer: NodeJS.Timeout | undefined;
    const watch = (): void => {
      const state = Atomics.load(progress, 0);
      if (state % 2 === 1) {
        const i = (state - 1) / 2;
        const deadlineMs = batch[i]!.decision.deadlineMs;
        const left = epoch + Atomics.load(progress, 1 + i) + deadlineMs - Date.now();
        if (left <= 0) {
          overran = i;
          controller.abort();
          return;
        }
        timer = setTimeout(watch, left);
      } else {
        // Between conditions or not started yet: no deadline is running.
        timer = setTimeout(watch, batch[Math.min(state / 2, batch.length - 1)]!.decision.deadlineMs);
      }
    };
    timer = setTimeout(watch, batch[0]!.decision.deadlineMs);
    const running: RunningBatch = { decisions: batch.map((c) => c.decision), controller };
    this.running.add(running);
    pool.run(task, { signal: controller.signal }).then(
      (outcomes: EvaluateOutcome[]) => {
        batch.forEach((c, i) => this.settle(c, { ok: true, outcome: outcomes[i]! }));
      },
      (err: unknown) => {
        const state = Atomics.load(progress, 0);
        const culprit = overran >= 0 ? overran : state % 2 === 1 ? (state - 1) / 2 : -1;
        if (culprit < 0 || this.stopped) {
          const failure = this.stopped ? 'the policy worker pool stopped' : describeFailure(err, false, 0);
          for (const c of batch) this.settle(c, { ok: false, failure });
          return;
        }
        const c = batch[culprit]!;
        this.settle(c, { ok: false, failure: describeFailure(err, overran >= 0, c.decision.deadlineMs) });
        // The others did not fail; a terminated worker just cannot report them. Run them again, first.
        const again = batch.filter((other, i) => i !== culprit && !other.decision.settled);
        this.queue.splice(this.queueHead, 0, ...again);
      },
    ).finally(() => {
      clearTimeout(timer);
      this.running.delete(running);
      this.busyWorkers--;
      this.dispatch();
    });
  }

  private settle(c: QueuedCondition, result: ConditionResult): void {
    const d = c.decision;
    if (d.settled || d.results[c.index] !== undefined) return;
    d.results[c.index] = result;
    if (--d.open === 0) this.finish(d);
  }

  /** The caller gave up: every open condition is cancelled; queued ones are skipped, running ones ignored. */
  private cancel(d: DecisionInFlight): void {
    if (d.settled) return;
    for (let i = 0; i < d.results.length; i++) d.results[i] ??= CANCELLED;
    this.finish(d);
    // A batch left with cancelled decisions only is not worth a worker: terminate it.
    for (const batch of this.running) if (batch.decisions.every((x) => x.settled)) batch.controller.abort();
  }

  private finish(d: DecisionInFlight): void {
    d.settled = true;
    this.inFlightCount--;
    d.resolve(d.results);
  }
}

const CANCELLED: ConditionResult = Object.freeze({ ok: false, failure: 'cancelled by the caller' }) as ConditionResult;

/** Names the failure for a fail-closed reason. */
export function describeFailure(err: unknown, deadlineHit: boolean, deadlineMs: number): string {
  const e = err as { name?: string; code?: string; message?: string } | null;
  const message = e?.message ?? String(err);
  if (deadlineHit) return `timed out after the ${deadlineMs}ms deadline (worker terminated)`;
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'worker ran out of memory (resource limit reached, worker terminated)';
  if (e?.name === 'AbortError') return 'cancelled by the caller';
  if (/worker exited|terminated/i.test(message)) return `worker crashed (${message})`;
  return `evaluation error: ${message}`;
}
