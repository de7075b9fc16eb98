import type { Kernel } from '../../kernel/kernel.js';
import { TERMINAL_STATUSES, type OperationRecord } from '../../kernel/store.js';
import { EXIT, exitCodeForOutcome } from './exit-codes.js';

/** The top of an operation's tree: the operation itself, or the parent of its parent... (sub-agents run under a parent). */
export async function rootOperation(kernel: Kernel, record: OperationRecord): Promise<OperationRecord> {
  let current = record;
  const seen = new Set([current.id]);
  while (current.parentOperationId !== undefined && !seen.has(current.parentOperationId)) {
    const parent = await kernel.getOperation(current.parentOperationId);
    if (!parent) break;
    seen.add(parent.id);
    current = parent;
  }
  return current;
}

/**
 * Waits until a run needs a human or is over: resolves the operation when it
 * is terminal, or whichever operation of its tree (sub-agents included) waits
 * for approval. A parent waiting for its sub-agents is not settled for us.
 */
export async function settleTree(kernel: Kernel, operationId: string): Promise<OperationRecord> {
  for (;;) {
    const record = await kernel.waitForOperation(operationId, 'settled');
    if (record.status !== 'waiting_tool') return record;
    const children = (await kernel.listOperations({ parentOperationId: operationId })).filter((c) => !TERMINAL_STATUSES.has(c.status));
    if (children.length === 0) {
      // The last child finished and its answer is being published: the parent resumes in a moment.
      await new Promise((resolve) => setTimeout(resolve, 5));
      continue;
    }
    const first = await Promise.race(children.map((c) => settleTree(kernel, c.id)));
    if (first.status === 'waiting_approval') return first;
  }
}

/**
 * Follows the tree `record` belongs to (its root, sub-agents included) until
 * it is over or waits for a human, and returns the exit code of where it
 * stands: 3 (and how to decide it) when parked, else by the root's end.
 * `askedToStop`: the command asked for an `interrupted` end.
 */
export async function outcomeOfTree(kernel: Kernel, record: OperationRecord, json: boolean | undefined, askedToStop: boolean): Promise<number> {
  const root = await rootOperation(kernel, record);
  const settled = await settleTree(kernel, root.id);
  if (settled.status === 'waiting_approval') {
    reportParked(settled.id, json);
    return EXIT.parked;
  }
  return exitCodeForOutcome(await kernel.waitForOperation(root.id, 'terminal'), { askedToStop });
}

/** Says how to decide a parked operation: a line of text, or a `parked` NDJSON event. */
export function reportParked(operationId: string, json: boolean | undefined): void {
  if (json) process.stdout.write(JSON.stringify({ type: 'parked', operationId }) + '\n');
  else process.stdout.write(`operation ${operationId} is waiting for approval; decide it with: hookgate approve ${operationId}  (or reject / reject-continue)\n`);
}
