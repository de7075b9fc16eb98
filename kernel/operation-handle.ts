import { HookgateError } from './errors.js';
import type { OperationEvent, OperationEvents } from './runtime/operation-events.js';
import type { OperationRecord } from './store.js';

/**
 * A handle on a started (or resumed, or decided) operation, as
 * `kernel.execAgent`, `approve`, `reject`, `rejectAndContinue` and `resume`
 * return it.
 */
export interface OperationHandle {
  readonly operationId: string;
  /** Resolves when the operation is parked (for a human, or for deferred tool results such as a sub-agent) or terminal. */
  settled(): Promise<OperationRecord>;
  /** Resolves only when the operation is terminal. */
  completed(): Promise<OperationRecord>;
  /**
   * The final assistant text (the last non-empty text the model wrote; `''`
   * when it wrote none), once the operation ended `done`. Rejects with
   * OPERATION_NOT_DONE (details: status, reason, error) when it ended in
   * `error` or `interrupted`.
   */
  text(): Promise<string>;
  /**
   * This operation's timeline events, in emission order: never another
   * operation's (a sub-agent's events carry its own `operationId` and are not
   * included). Buffered from the moment the call that made this handle began
   * (for `execAgent`, the operation's first event, `operation_started`), so
   * calling `events()` late, or twice, misses nothing: each call replays from
   * the first buffered event. The iterator ends when the operation is terminal
   * or waits for a human (`waiting_approval`: approve it, and the new handle's
   * `events()` continues from there); waiting for deferred results or a
   * sub-agent does not end it, the run goes on by itself. When the kernel
   * stops first, it throws KERNEL_STOPPED after the buffered events. The
   * buffer lives as long as the handle.
   */
  events(): AsyncIterableIterator<OperationEvent>;
}

type Wait = (operationId: string, until: 'settled' | 'terminal') => Promise<OperationRecord>;

/**
 * Runs `action` (which starts or resumes an operation and resolves its id)
 * while recording events, then returns the operation's handle holding every
 * event of that operation emitted since `action` began. `knownId`: the
 * operation's id when it is known up front (a decision, a resume); without it
 * every event is recorded while `action` runs and the others are dropped.
 */
export async function runWithHandle(events: OperationEvents, wait: Wait, action: () => Promise<string>, knownId?: string): Promise<OperationHandle> {
  const early: OperationEvent[] = [];
  const record = (event: OperationEvent) => void early.push(event);
  const stop = knownId !== undefined ? events.onOperation(knownId, record) : events.on(record);
  let operationId: string;
  try {
    operationId = await action();
  } finally {
    stop();
  }
  // No await between stop() and the handle's own subscription: no event falls between them.
  return new RunHandle(operationId, events, wait, knownId !== undefined ? early : early.filter((e) => e.operationId === operationId));
}

class RunHandle implements OperationHandle {
  private readonly buffer: OperationEvent[];
  private ended = false;
  private failure: { error: unknown } | undefined;
  private wakers: Array<() => void> = [];
  private readonly unsubscribe: () => void;

  constructor(
    readonly operationId: string,
    events: OperationEvents,
    private readonly wait: Wait,
    initial: OperationEvent[],
  ) {
    this.buffer = initial;
    this.unsubscribe = events.onOperation(operationId, (event) => {
      this.buffer.push(event);
      // The step that asks for a human commits `waiting_approval` and parks: end there.
      if (event.type === 'approval_requested') this.endWhenSettled();
      this.wake();
    });
    this.endWhenSettled();
  }

  settled(): Promise<OperationRecord> {
    return this.wait(this.operationId, 'settled');
  }

  completed(): Promise<OperationRecord> {
    return this.wait(this.operationId, 'terminal');
  }

  async text(): Promise<string> {
    const record = await this.completed();
    if (record.status === 'done') return record.state.lastText ?? '';
    throw new HookgateError(
      'OPERATION_NOT_DONE',
      `operation ${record.id} ended ${record.status} (reason ${record.reason ?? 'unknown'})${record.error ? `: ${record.error.message}` : ''}; it has no final text`,
      { details: { operationId: record.id, status: record.status, reason: record.reason, ...(record.error ? { error: record.error } : {}) } },
    );
  }

  async *events(): AsyncIterableIterator<OperationEvent> {
    let next = 0;
    while (true) {
      while (next < this.buffer.length) yield this.buffer[next++]!;
      if (this.ended) {
        if (this.failure) throw this.failure.error;
        return;
      }
      await new Promise<void>((resolve) => this.wakers.push(resolve));
    }
  }

  /** Ends at the next settle that is terminal or waiting for a human; a settle on deferred results waits on for the end. */
  private endWhenSettled(): void {
    this.wait(this.operationId, 'settled').then(
      (record) => {
        if (record.status === 'waiting_tool') this.wait(this.operationId, 'terminal').then(() => this.end(), (err) => this.end({ error: err }));
        else if (record.status !== 'running') this.end();
      },
      (err) => this.end({ error: err }),
    );
  }

  private end(failure?: { error: unknown }): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = failure;
    this.unsubscribe();
    this.wake();
  }

  private wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }
}
