import type { OperationHandle } from '../../kernel/operation-handle.js';
import type { Operations } from '../../kernel/operations.js';
import { TERMINAL_STATUSES, type OperationRecord } from '../../kernel/store.js';

/**
 * A handle on a parked operation this process does not run (recovery found
 * it waiting for a human or a deferred result): `settled` as the store has
 * it, `completed` once it ended, read every 250 ms (a decision can come from
 * any process). Its events are not replayed.
 */
export function parkedHandle(operations: Operations, operationId: string): OperationHandle {
  return {
    operationId,
    settled: () => operations.wait(operationId, 'settled'),
    async completed() {
      for (;;) {
        const record = await operations.wait(operationId, 'terminal');
        if (TERMINAL_STATUSES.has(record.status)) return record;
        await sleep(250);
      }
    },
    text: async () => '',
    events: async function* () {},
  };
}

/** A handle on an operation that already ended (recovery found it finished by another process). */
export function endedHandle(record: OperationRecord): OperationHandle {
  return {
    operationId: record.id,
    settled: async () => record,
    completed: async () => record,
    text: async () => record.state.lastText ?? '',
    events: async function* () {},
  };
}

/** Resolves after `ms` (a timer that keeps the process alive only while it runs). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
