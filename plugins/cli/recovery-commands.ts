import { HookgateError } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import { TERMINAL_STATUSES } from '../../kernel/store.js';
import type { CliSession } from './cli-session.js';
import { EXIT, exitCodeForOutcome } from './exit-codes.js';
import { resolveOperation } from './id-prefix.js';
import { outcomeOfTree } from './operation-tree.js';
import { storeName } from './store-name.js';

/**
 * `hookgate resume <op>`: continues an operation that a crashed or killed
 * process left `running`, from its last committed step (a step that was in
 * flight runs again). Refuses parked or finished operations with a message
 * that says what to do instead, and one whose lease another process still
 * holds (OPERATION_LEASED, naming the holder and the expiry: the lease of a
 * process that died expires `runtime.leaseMs` after its last renewal) unless
 * `force`, which takes that lease over.
 * Prints the timeline and waits until the run is parked (exit 3) or finished;
 * exit codes as `run`. `typedId` is an id or a unique prefix of one.
 */
export async function resumeCommand(session: CliSession, kernel: Kernel, typedId: string, options: { json?: boolean; force?: boolean }): Promise<number> {
  const record = await resolveOperation(kernel.store, typedId, storeName(kernel.config));
  const operationId = record.id;
  if (record.status === 'waiting_approval') {
    throw new HookgateError('OPERATION_NOT_RUNNING', `operation ${operationId} is waiting for approval; decide it with: hookgate approve ${operationId} (or reject / reject-continue)`, { details: { operationId } });
  }
  if (record.status !== 'running') {
    throw new HookgateError('OPERATION_NOT_RUNNING', `operation ${operationId} is ${record.status}; only a running operation whose process is gone can be resumed`, { details: { operationId } });
  }
  const close = session.showTimeline(kernel, options.json);
  try {
    await kernel.resume(operationId, { force: options.force === true });
    return await outcomeOfTree(kernel, record, options.json, false);
  } finally {
    close();
  }
}

/**
 * `hookgate abort <op>`: ends a running (also a crashed process's) or parked
 * operation as `interrupted`, with onComplete. An operation that already
 * finished is left as it is (exit 0, it says so). `typedId` is an id or a
 * unique prefix of one.
 */
export async function abortCommand(session: CliSession, kernel: Kernel, typedId: string, options: { json?: boolean }): Promise<number> {
  const record = await resolveOperation(kernel.store, typedId, storeName(kernel.config));
  const operationId = record.id;
  if (TERMINAL_STATUSES.has(record.status)) {
    if (options.json) process.stdout.write(JSON.stringify({ type: 'already_finished', operationId, status: record.status }) + '\n');
    else process.stdout.write(`operation ${operationId} already finished (${record.status}); nothing to abort\n`);
    return EXIT.ok;
  }
  const close = session.showTimeline(kernel, options.json);
  try {
    await kernel.abort(operationId);
    return exitCodeForOutcome(await kernel.waitForOperation(operationId, 'terminal'), { askedToStop: true });
  } finally {
    close();
  }
}
