import { isHookgateError } from '../../kernel/errors.js';
import type { OperationStatus } from '../../kernel/store.js';
import type { TerminalReason } from '../../kernel/hooks/hook-types.js';

/**
 * hookgate's exit codes, the same for every command in text and `--json`
 * mode (README, "The CLI", prints this table; a spec checks both agree):
 *
 * - 0 `ok`: the command did what was asked. A run finished `done`, or ended
 *   `interrupted` because this command asked for it (`reject`, `abort`, "no"
 *   at the approval prompt); a listing or a check found nothing wrong.
 * - 1 `failed`: the work failed. A run ended `error`, `max_steps`,
 *   `cost_limit`, or interrupted by someone else; a policy test failed; the
 *   command could not finish (a store or network error).
 * - 2 `usage`: nothing was done because the request was wrong. An unknown
 *   command or option, an option value outside its allowed values, an
 *   invalid config, agent or policy file, an unknown or ambiguous id, an
 *   operation in the wrong state for the command.
 * - 3 `parked`: the run is waiting for a human approval
 *   (`hookgate approve|reject|reject-continue <op>` decides it).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, parked: 3 } as const;

/** One line per exit code, for `--help` and the README. */
export const EXIT_CODE_TABLE: ReadonlyArray<{ code: number; meaning: string }> = [
  { code: EXIT.ok, meaning: 'done: the run finished (or stopped because you asked: reject, abort), the check or listing succeeded' },
  { code: EXIT.failed, meaning: 'failed: the run ended in error, max_steps or cost_limit, a policy test failed, or the command could not finish' },
  { code: EXIT.usage, meaning: 'bad usage: unknown command or option, a value outside the allowed ones, invalid config/agent/policy file, unknown or ambiguous id, wrong operation state' },
  { code: EXIT.parked, meaning: 'parked: the run waits for an approval (decide it with hookgate approve|reject|reject-continue <op>)' },
];

/** Which exit code an error that escaped a command deserves. */
export function exitCodeFor(err: unknown): number {
  if (isHookgateError(err) && err.category === 'user') return EXIT.usage;
  return EXIT.failed;
}

/**
 * The exit code for where an operation a command followed stands now.
 * `askedToStop`: this command (or the human at its prompt) asked for the
 * interruption, so an `interrupted` end is what was asked.
 */
export function exitCodeForOutcome(record: { status: OperationStatus | string; reason?: TerminalReason | string }, options: { askedToStop?: boolean } = {}): number {
  if (record.status === 'waiting_approval') return EXIT.parked;
  if (record.reason === 'done') return EXIT.ok;
  if (record.reason === 'interrupted' && options.askedToStop) return EXIT.ok;
  return EXIT.failed;
}
