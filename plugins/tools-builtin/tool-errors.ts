import { HookgateError } from '../../kernel/errors.js';

/** Error codes the builtin tools raise; errors also carry a machine-readable `details.reason`. */
const INVALID_ARGS_CODE = 'TOOL_ARGS_INVALID' as const;

/** A tool argument is missing, of the wrong type, or unknown. */
export function invalidArgument(tool: string, message: string, argument?: string): HookgateError {
  return new HookgateError(INVALID_ARGS_CODE, `${tool}: ${message}`, {
    details: { reason: 'invalid_args', tool, ...(argument === undefined ? {} : { argument }) },
  });
}

// The confinement's errors live with the confinement (kernel/sandbox-fs.ts); the tools report paths through them.
export { fsError, fsFailure, quote, sandboxEscape } from '../../kernel/sandbox-fs-errors.js';
