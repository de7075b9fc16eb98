import { HookgateError } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import { TERMINAL_STATUSES } from '../../kernel/store.js';
import { EXIT } from './exit-codes.js';
import { TimelinePrinter } from './timeline-printer.js';

/**
 * How long an operation must have been quiet before `resume` believes the
 * process that ran it is gone. Until operations carry leases (the runtime
 * core issue), this is the guard against running one operation in two
 * processes; `--force` skips it.
 */
export const RESUME_QUIET_MS = 30_000;

/**
 * `hookgate resume <op>`: continues an operation that a crashed or killed
 * process left `running`, from its last committed step (a step that was in
 * flight runs again). Refuses parked or finished operations with a message
 * that says what to do instead, and a recently updated one unless `force`.
 * Prints the timeline and waits until the run is parked or finished; exit
 * codes as `approve`.
 */
export async function resumeCommand(kernel: Kernel, operationId: string, options: { json?: boolean; force?: boolean; now?: number }): Promise<number> {
  const record = await requireOperation(kernel, operationId);
  if (record.status === 'waiting_approval') {
    throw new HookgateError('OPERATION_NOT_RUNNING', `operation ${operationId} is waiting for approval; decide it with: hookgate approve ${operationId} (or reject / reject-continue)`, { details: { operationId } });
  }
  if (record.status !== 'running') {
    throw new HookgateError('OPERATION_NOT_RUNNING', `operation ${operationId} is ${record.status}; only a running operation whose process is gone can be resumed`, { details: { operationId } });
  }
  const quietFor = (options.now ?? Date.now()) - Date.parse(record.updatedAt);
  if (!options.force && quietFor < RESUME_QUIET_MS) {
    throw new HookgateError(
      'OPERATION_NOT_RUNNING',
      `operation ${operationId} was updated ${Math.max(0, Math.round(quietFor / 1000))} s ago and may still be running in another process; ` +
        `wait until it has been quiet for ${RESUME_QUIET_MS / 1000} s, or pass --force if you know that process is gone`,
      { details: { operationId } },
    );
  }
  return follow(kernel, operationId, options.json, async () => {
    const handle = await kernel.resume(operationId);
    return handle.settled();
  });
}

/**
 * `hookgate abort <op>`: ends a running (also a crashed process's) or parked
 * operation as `interrupted`, with onComplete. An operation that already
 * finished is left as it is (exit 0, it says so).
 */
export async function abortCommand(kernel: Kernel, operationId: string, options: { json?: boolean }): Promise<number> {
  const record = await requireOperation(kernel, operationId);
  if (TERMINAL_STATUSES.has(record.status)) {
    if (options.json) process.stdout.write(JSON.stringify({ type: 'already_finished', operationId, status: record.status }) + '\n');
    else process.stdout.write(`operation ${operationId} already finished (${record.status}); nothing to abort\n`);
    return EXIT.ok;
  }
  return follow(kernel, operationId, options.json, async () => {
    await kernel.abort(operationId);
    return kernel.waitForOperation(operationId, 'terminal');
  });
}

async function requireOperation(kernel: Kernel, operationId: string) {
  const record = await kernel.getOperation(operationId);
  if (!record) throw new HookgateError('OPERATION_NOT_FOUND', `no operation has id ${operationId}`, { details: { operationId } });
  return record;
}

/** Prints the operation's events while `act` runs; the exit code from the record it resolves. */
async function follow(kernel: Kernel, operationId: string, json: boolean | undefined, act: () => Promise<{ status: string; reason?: string }>): Promise<number> {
  const printer = json ? undefined : new TimelinePrinter(process.stdout);
  const off = kernel.events.on((event) => (json ? process.stdout.write(JSON.stringify(event) + '\n') : printer!.handle(event)));
  try {
    const record = await act();
    if (record.status === 'waiting_approval' && !json) process.stdout.write(`operation ${operationId} is waiting for approval: hookgate approve ${operationId}\n`);
    return record.reason === 'done' || record.status === 'waiting_approval' || record.reason === 'interrupted' ? EXIT.ok : EXIT.failed;
  } finally {
    off();
    printer?.close();
  }
}
