/**
 * Queue mode's seam between the runtime and a job queue (plugin
 * `execution-queue`, BullMQ on Redis). With a `StepQueue` bound, the runtime
 * never runs an operation's loop on admission, decision or completion: it
 * releases the lease and enqueues the operation's next step; a worker
 * (`hookgate worker`, `kernel.work()`) takes the job, claims the lease, runs
 * exactly one step through the same executors, commits with compare-and-swap,
 * releases and enqueues the step after it. A job carries only ids: the state
 * is in the store.
 */
export interface QueuedStep {
  operationId: string;
  /** The operation's state version the step runs on: a job whose version is no longer current runs nothing. */
  version: number;
}

/**
 * What the runner made of one job: `ran` (a step committed, or the operation
 * parked or finished), `skipped` (the job was out of date or the operation is
 * not running), or `later` (another process holds the operation's lease: run
 * the job again at `at`, epoch milliseconds).
 */
export type QueuedStepOutcome = { kind: 'ran' } | { kind: 'skipped' } | { kind: 'later'; at: number };

/** Runs one queued step (the runtime's `runQueuedStep`). Rejects only on an unexpected failure: the queue retries the job. */
export type QueuedStepRunner = (step: QueuedStep) => Promise<QueuedStepOutcome>;

export interface StepQueue {
  /**
   * Adds the job of `step`. Idempotent: the job id is derived from the
   * operation id and the version, so a step enqueued twice (a retried
   * enqueue, a takeover sweep) is one job while it waits or runs. Rejects
   * with QUEUE_UNAVAILABLE (naming the queue's address, never its password)
   * when the queue cannot take it.
   */
  enqueue(step: QueuedStep): Promise<void>;
  /** Starts taking jobs with `runner` (this process becomes a worker); resolves once it takes them. Called once. */
  consume(runner: QueuedStepRunner): Promise<void>;
  /**
   * Stops taking jobs and waits for the ones in flight to finish (their steps
   * commit and their next steps are enqueued). Idempotent; a no-op when this
   * process never consumed.
   */
  stopConsuming(): Promise<void>;
}
