import { HookgateError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import { TERMINAL_STATUSES, type OperationRecord, type Store } from '../store.js';
import { copyRecord } from './copy-state.js';

/** `settled`: parked or terminal; `terminal`: finished. */
export type WaitUntil = 'settled' | 'terminal';

type Waiter = { until: WaitUntil; resolve: (r: OperationRecord) => void; reject: (e: unknown) => void };

/** Whether `record` satisfies a wait for `until`. */
export function isSettled(record: OperationRecord, until: WaitUntil): boolean {
  return TERMINAL_STATUSES.has(record.status) || (until === 'settled' && (record.status === 'waiting_approval' || record.status === 'waiting_tool'));
}

/**
 * Who waits for which operation (`completed()`, `settled()`). An operation
 * this process runs resolves its waiters as it parks or finishes (`notify`);
 * one another process runs, or nobody runs here any more, resolves them from
 * the store (`watch`: a read every `pollMs` until each condition holds).
 */
export class OperationWaiters {
  private readonly waiters = new Map<string, Waiter[]>();
  /** Operations whose waiters are resolved from the store. */
  private readonly watching = new Set<string>();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    /** Whether this process runs the operation now (then its loop notifies and the watch stops). */
    private readonly runsHere: (operationId: string) => boolean,
    private readonly pollMs = 100,
  ) {}

  /** A promise resolved once the operation satisfies `until` (rejected with KERNEL_STOPPED at `rejectAll`). */
  add(operationId: string, until: WaitUntil): Promise<OperationRecord> {
    return new Promise<OperationRecord>((resolve, reject) => {
      const list = this.waiters.get(operationId) ?? [];
      list.push({ until, resolve, reject });
      this.waiters.set(operationId, list);
    });
  }

  has(operationId: string): boolean {
    return this.waiters.has(operationId);
  }

  /** Resolves the waiters `record` (as this process just changed it) satisfies. */
  notify(record: OperationRecord): void {
    const list = this.waiters.get(record.id);
    if (!list) return;
    const keep: Waiter[] = [];
    for (const w of list) {
      if (isSettled(record, w.until)) w.resolve(copyRecord(record));
      else keep.push(w);
    }
    if (keep.length > 0) this.waiters.set(record.id, keep);
    else this.waiters.delete(record.id);
  }

  /** Resolves the operation's waiters from the store from now on; one watch per operation. */
  watch(operationId: string): void {
    if (this.watching.has(operationId)) return;
    this.watching.add(operationId);
    const tick = async (): Promise<void> => {
      try {
        if (this.stopped || !this.waiters.has(operationId) || this.runsHere(operationId)) return;
        const record = await this.store.getOperation(operationId);
        // Read while this process took the operation up (or began to finish it): its own notify resolves the waiters.
        if (record && !this.runsHere(operationId)) {
          this.notify(record);
          if (!this.waiters.has(operationId)) return;
        }
      } catch (err) {
        this.logger.warn('could not read an operation someone waits for', { operationId, error: errorMessage(err) });
      }
      // Not unref'd: a process that only waits for another process's operation stays up until it settles.
      setTimeout(() => void run(), this.pollMs);
    };
    const run = (): Promise<void> =>
      tick().then(() => {
        if (!this.waiters.has(operationId) || this.stopped || this.runsHere(operationId)) this.watching.delete(operationId);
      });
    void run();
  }

  /** Kernel stop: every pending wait rejects with KERNEL_STOPPED and no watch reads again. */
  rejectAll(): void {
    this.stopped = true;
    for (const [operationId, list] of this.waiters) {
      for (const w of list) w.reject(new HookgateError('KERNEL_STOPPED', `the kernel was stopped while waiting for operation ${operationId}`, { details: { operationId } }));
    }
    this.waiters.clear();
  }
}
