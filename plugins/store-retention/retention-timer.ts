import type { Logger } from '../../kernel/logger.js';
import { errorMessage } from '../../kernel/errors.js';
import type { PruneCounts, RetentionPolicy } from '../../kernel/retention.js';
import type { Store } from '../../kernel/store.js';

/**
 * Runs `store.prune(policy)` every `intervalMs` in the background: the timer
 * is unref'd (it never keeps a process alive), one pass runs at a time (a
 * tick while one runs is skipped), a failed pass is logged and the next tick
 * tries again. `stop` clears the timer, asks a running pass to end after its
 * current batch and waits for it.
 */
export class RetentionTimer {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly abort = new AbortController();

  constructor(
    private readonly store: Pick<Store, 'prune'>,
    private readonly policy: RetentionPolicy,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.timer || this.abort.signal.aborted) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** One pass now, unless one is running (then that one's promise). Never rejects. */
  tick(): Promise<void> {
    if (this.abort.signal.aborted) return Promise.resolve();
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async pass(): Promise<void> {
    try {
      const counts = await this.store.prune(this.policy, { signal: this.abort.signal });
      if (removedAnything(counts)) this.logger.info('storage pruned', { ...counts });
    } catch (err) {
      this.logger.error('storage prune failed; the next pass tries again', { error: errorMessage(err), inMs: this.intervalMs });
    }
  }
}

function removedAnything(counts: PruneCounts): boolean {
  return counts.threads + counts.operations + counts.decisions > 0;
}
