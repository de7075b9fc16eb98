import { Worker } from 'node:worker_threads';
import type { Logger } from '../../kernel/logger.js';

/** How often the thread looks at the commit counter. */
const INTERVAL_MS = 10;
/**
 * Commits per checkpoint while the writer keeps committing (about 1,000 WAL
 * frames of step commits; the writer's own autocheckpoint comes at 4,000).
 * Each checkpoint sorts the index of every frame in the WAL, not only the new
 * ones, so checkpointing at every tick with new commits made the thread's
 * work per commit depend on how many commits a tick saw (a few hundred here,
 * a handful on a slow or loaded machine or under valgrind).
 */
export const COMMITS_PER_CHECKPOINT = 512;
/**
 * Commits before the thread starts: a short-lived process (a CLI command, a
 * test) never needs one, and a store under sustained writes gets it within
 * its first second.
 */
export const COMMITS_BEFORE_START = 256;

/**
 * Copies WAL frames into the database file on a worker thread, so the writer's
 * thread rarely pays for it. Without it, every `wal_autocheckpoint` pages a
 * commit on the event loop copies thousands of pages and syncs both files
 * (about 30 ms here, every ~2,000 step commits). With it, the writer's own
 * autocheckpoint still runs (only a commit can restart the WAL, so that keeps
 * the file bounded), but finds almost everything copied and synced already.
 *
 * The writer calls {@link noteCommit} after each write transaction (one
 * atomic add); the thread starts after {@link COMMITS_BEFORE_START} commits,
 * then checkpoints after every {@link COMMITS_PER_CHECKPOINT} commits, or
 * within about 20 ms of the writer's last commit when it pauses (checked every
 * 10 ms), so an idle store costs nothing but a timer. If the thread fails, a warning is logged
 * and the store goes on with its inline checkpoints.
 */
export class BackgroundCheckpointer {
  private readonly commits = new Int32Array(new SharedArrayBuffer(4));
  private worker?: Worker;
  private online = false;
  private stopped = false;

  constructor(
    private readonly file: string,
    private readonly logger?: Logger,
    /** The thread's script (tests point it elsewhere to see a thread that cannot start). */
    private readonly script: URL = new URL('./checkpoint-worker.js', import.meta.url),
  ) {}

  private start(): void {
    const worker = new Worker(this.script, {
      workerData: { file: this.file, intervalMs: INTERVAL_MS, commitsPerCheckpoint: COMMITS_PER_CHECKPOINT, commits: this.commits.buffer },
    });
    worker.on('message', (message: { type?: string; message?: string }) => {
      if (message.type === 'error') this.logger?.warn('background checkpoints stopped; commits checkpoint inline', { error: message.message });
    });
    worker.on('error', (err) => this.logger?.warn('background checkpoints stopped; commits checkpoint inline', { error: err.message }));
    worker.on('online', () => {
      this.online = true;
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
    });
    // A store nobody closed must not keep the process alive. After the listeners: a 'message' listener refs the port.
    worker.unref();
    this.worker = worker;
  }

  /** Never throws: it runs after a commit, which must not be reported as failed (a thread that cannot start is only a warning). */
  noteCommit(): void {
    if (Atomics.add(this.commits, 0, 1) !== COMMITS_BEFORE_START - 1 || this.stopped) return;
    try {
      this.start();
    } catch (err) {
      this.stopped = true;
      this.logger?.warn('background checkpoints could not start; commits checkpoint inline', { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /**
   * Ends the thread and waits until its connection is closed. A thread still
   * starting up has no connection yet and is terminated. Idempotent.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    // Only 'exit' counts (events.once would also settle on an 'error', before the thread's connection is closed).
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref(); // keep the process alive until the thread has closed its connection
    if (this.online) worker.postMessage('stop');
    else await worker.terminate();
    await exited;
  }
}
