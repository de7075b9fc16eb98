import { HookgateError } from './errors.js';

/**
 * The errors of a confined file system (kernel/sandbox-fs.ts): shared by
 * every plugin that confines paths to a sandbox folder (the builtin fs tools,
 * the local sandbox), so both refuse and report a path the same way.
 */

const FS_FAILURE_CODE = 'TOOL_TARGET_INVALID' as const;

/** A path leaves the sandbox (lexically, through a symlink, or by a trick such as a NUL byte). */
export function sandboxEscape(userPath: string, why = 'is outside the sandbox'): HookgateError {
  return new HookgateError('SANDBOX_ESCAPE', `path ${quote(userPath)} ${why}`, { details: { path: userPath } });
}

const FS_MESSAGES: Record<string, string> = {
  ENOENT: 'does not exist',
  ENOTDIR: 'goes through something that is not a directory',
  EISDIR: 'is a directory',
  ENOTEMPTY: 'is a directory that is not empty (pass recursive: true to delete it)',
  EEXIST: 'already exists',
  EACCES: 'is not accessible (permission denied)',
  EPERM: 'is not accessible (operation not permitted)',
  ELOOP: 'has too many levels of symbolic links',
  ENAMETOOLONG: 'is too long',
  ENXIO: 'is not a regular file',
};

/**
 * Turns a Node file-system error into a readable tool error that names the
 * path as the caller wrote it (never the host's absolute path). Anything that
 * is already a HookgateError passes through unchanged.
 */
export function fsFailure(err: unknown, userPath: string): Error {
  if (err instanceof HookgateError) return err;
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : undefined;
  const text = code === undefined ? undefined : FS_MESSAGES[code];
  if (text === undefined) {
    return new HookgateError(FS_FAILURE_CODE, `path ${quote(userPath)}: file system error${code ? ` ${code}` : ''}`, {
      cause: err,
      details: { reason: 'fs_error', path: userPath, ...(code ? { fsCode: code } : {}) },
    });
  }
  return fsError(userPath, text, code === 'ENOENT' ? 'not_found' : 'fs_error', code);
}

/** A readable file-system error about `userPath`, for conditions the tools detect themselves. */
export function fsError(userPath: string, text: string, reason = 'fs_error', fsCode?: string): HookgateError {
  return new HookgateError(FS_FAILURE_CODE, `path ${quote(userPath)} ${text}`, {
    details: { reason, path: userPath, ...(fsCode ? { fsCode } : {}) },
  });
}

/** JSON quoting shows control characters (a NUL byte, a newline) visibly. */
export function quote(text: string): string {
  return JSON.stringify(text);
}
