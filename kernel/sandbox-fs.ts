import { constants as fsConstants, promises as fsp, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { HookgateError } from './errors.js';
import { fsError, fsFailure, sandboxEscape } from './sandbox-fs-errors.js';

/** Files larger than this are read only up to it; the result says so. */
export const DEFAULT_READ_LIMIT_BYTES = 1024 * 1024;

/** Same bound the Linux kernel uses for symlink chains. */
const MAX_SYMLINK_HOPS = 40;

// Windows has neither flag; there the post-check realpath is the only guard.
const O_NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fsConstants.O_NONBLOCK ?? 0;

export type SandboxEntryType = 'file' | 'dir' | 'symlink' | 'other';

export interface SandboxEntry {
  name: string;
  type: SandboxEntryType;
}

/** A path the sandbox accepted. */
export interface SandboxPath {
  /** Absolute host path with every symlink resolved; always inside the real root. */
  readonly real: string;
  /** The path relative to the sandbox root, `/`-separated, `.` for the root itself. */
  readonly display: string;
}

export interface ReadResult {
  path: string;
  text: string;
  encoding: BufferEncoding;
  /** Size of the file in bytes. */
  size: number;
  /** Bytes actually read (at most the limit). */
  bytesRead: number;
  truncated: boolean;
}

export interface StatResult {
  path: string;
  type: SandboxEntryType;
  /** Size in bytes of what the path resolves to. */
  size: number;
  modifiedAt: string;
}

/**
 * What "follow" means for the last path component:
 * - `follow`: resolve it if it is a symlink (read, write, list, stat);
 * - `entry`: the entry itself (delete removes a symlink, never its target).
 */
export type ResolveMode = 'follow' | 'entry';

/**
 * A folder that file operations cannot leave. Every path, relative (to the
 * root) or absolute (must lie inside the root), is resolved lexically, then
 * through every symlink of its deepest existing ancestor, and refused with
 * `SANDBOX_ESCAPE` unless the result is inside the root's real path.
 * Opening uses `O_NOFOLLOW`, so a symlink swapped in after the check is
 * refused rather than followed (best effort: a swapped parent folder between
 * the check and the open is not detectable without `openat`).
 *
 * All methods are async and never block the event loop; they throw
 * `HookgateError` (`SANDBOX_ESCAPE`, or `TOOL_FAILED` with a readable message
 * for missing files and other file-system failures).
 */
export class SandboxFs {
  /** The configured root, absolute, as given (may itself contain symlinks). */
  readonly root: string;
  private realRootPromise: Promise<string> | undefined;

  constructor(root: string) {
    if (typeof root !== 'string' || root.trim().length === 0 || root.includes('\0')) {
      throw new HookgateError('CONFIG_INVALID', 'sandbox.root must be a non-empty path');
    }
    this.root = path.resolve(root);
    // The config loader refuses more (the data folder, the config folder...); this guards configs built in code.
    if (path.parse(this.root).root === this.root) throw new HookgateError('CONFIG_INVALID', `sandbox.root ${JSON.stringify(this.root)} is the root of the file system`);
  }

  /**
   * Creates the root folder (and parents) when missing and returns its real
   * path. Idempotent; called lazily by every operation. Fails when the root
   * exists but is not a folder.
   */
  ensureRoot(): Promise<string> {
    if (this.realRootPromise === undefined) {
      const pending = (async () => {
        try {
          await fsp.mkdir(this.root, { recursive: true });
          const real = await fsp.realpath(this.root);
          if (!(await fsp.stat(real)).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
          return real;
        } catch (err) {
          const why = (err as { code?: unknown })?.code === 'ENOTDIR' || (err as { code?: unknown })?.code === 'EEXIST' ? 'is not a folder' : 'cannot be created';
          throw new HookgateError('CONFIG_INVALID', `sandbox.root ${JSON.stringify(this.root)} ${why}`, { cause: err });
        }
      })();
      // A failed attempt (for example a permission error) is retried on the next call.
      pending.catch(() => {
        if (this.realRootPromise === pending) this.realRootPromise = undefined;
      });
      this.realRootPromise = pending;
    }
    return this.realRootPromise;
  }

  /**
   * Resolves a caller's path to a host path inside the sandbox, or throws
   * `SANDBOX_ESCAPE`. The target need not exist (writes create it); missing
   * components are checked through their deepest existing ancestor.
   */
  async resolve(userPath: string, mode: ResolveMode = 'follow'): Promise<SandboxPath> {
    if (typeof userPath !== 'string') throw sandboxEscape(String(userPath), 'is not a string');
    if (userPath.includes('\0')) throw sandboxEscape(userPath, 'contains a NUL byte');
    const realRoot = await this.ensureRoot();

    const lexical = path.isAbsolute(userPath) ? path.resolve(userPath) : path.resolve(this.root, userPath);
    const rel = relativeInside(this.root, lexical) ?? relativeInside(realRoot, lexical);
    if (rel === undefined) throw sandboxEscape(userPath);
    const display = rel === '' ? '.' : rel.split(path.sep).join('/');
    const underRealRoot = path.join(realRoot, rel);

    let real: string;
    try {
      if (mode === 'entry' && rel !== '') {
        real = path.join(await realpathDeep(path.dirname(underRealRoot), { hops: 0 }), path.basename(underRealRoot));
      } else {
        real = await realpathDeep(underRealRoot, { hops: 0 });
      }
    } catch (err) {
      throw fsFailure(err, userPath);
    }
    if (relativeInside(realRoot, real) === undefined) throw sandboxEscape(userPath, 'is outside the sandbox (through a symlink)');
    return { real, display };
  }

  /**
   * Reads a regular file, at most `limitBytes` (default 1 MiB) of it.
   * Refuses folders, devices, FIFOs and sockets (checked before opening, and
   * opened non-blocking, so a FIFO cannot hang the call) and files with more
   * than one hard link (another name may lie outside the sandbox). The checks
   * that decide are made on the open descriptor (fstat), so a file swapped
   * after the path was checked is judged as what was really opened.
   */
  async readFile(userPath: string, options: { encoding?: BufferEncoding; limitBytes?: number } = {}): Promise<ReadResult> {
    const encoding = options.encoding ?? 'utf8';
    const read = await this.readFileBytes(userPath, options);
    return { path: read.path, text: read.bytes.toString(encoding), encoding, size: read.size, bytesRead: read.bytesRead, truncated: read.truncated };
  }

  /** `readFile`'s bytes, undecoded: the same checks, at most `limitBytes` (default 1 MiB) read. */
  async readFileBytes(userPath: string, options: { limitBytes?: number } = {}): Promise<{ path: string; bytes: Buffer; size: number; bytesRead: number; truncated: boolean }> {
    const limit = options.limitBytes ?? DEFAULT_READ_LIMIT_BYTES;
    const target = await this.resolve(userPath);
    await refuseSpecialEntry(target.real, userPath);
    const handle = await open(target.real, fsConstants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK, userPath);
    try {
      const st = await handle.stat();
      if (st.isDirectory()) throw fsError(userPath, 'is a directory (use fs/listDir)', 'fs_error', 'EISDIR');
      refuseUnlessSingleLinkFile(st, userPath);
      const want = Math.min(st.size, limit);
      const buffer = Buffer.alloc(want);
      let bytesRead = 0;
      while (bytesRead < want) {
        const { bytesRead: n } = await handle.read(buffer, bytesRead, want - bytesRead, bytesRead);
        if (n === 0) break;
        bytesRead += n;
      }
      return { path: target.display, bytes: buffer.subarray(0, bytesRead), size: st.size, bytesRead, truncated: st.size > bytesRead };
    } finally {
      await handle.close();
    }
  }

  /**
   * Writes (creates or replaces) a file, creating missing parent folders
   * inside the sandbox. Returns the number of bytes written. Writing through a
   * symlink that leads outside, or into a symlinked folder that does, is refused.
   * An existing target that is not a regular file (FIFO, socket, device) or
   * has more than one hard link is refused untouched: the file is opened
   * without truncating, judged on the open descriptor (fstat), and only then
   * truncated and written.
   */
  async writeFile(userPath: string, content: string | Uint8Array, options: { encoding?: BufferEncoding } = {}): Promise<{ path: string; bytes: number }> {
    const target = await this.resolve(userPath);
    const realRoot = await this.ensureRoot();
    if (target.real === realRoot) throw fsError(userPath, 'is the sandbox root folder, not a file', 'fs_error', 'EISDIR');
    const data = typeof content === 'string' ? Buffer.from(content, options.encoding ?? 'utf8') : Buffer.from(content);
    const parent = path.dirname(target.real);
    try {
      await fsp.mkdir(parent, { recursive: true });
      // A parent swapped for a symlink between resolve and mkdir would show here.
      if (relativeInside(realRoot, await fsp.realpath(parent)) === undefined) throw sandboxEscape(userPath, 'is outside the sandbox (through a symlink)');
    } catch (err) {
      // mkdir reports a file in the way of a parent folder as EEXIST.
      const code = (err as { code?: unknown })?.code;
      if (code === 'EEXIST' || code === 'ENOTDIR') throw fsError(userPath, 'has a parent that is a file, not a directory', 'fs_error', 'ENOTDIR');
      throw fsFailure(err, userPath);
    }
    await refuseSpecialEntry(target.real, userPath);
    // No O_TRUNC: a hard-linked file must be refused before a single byte of it changes.
    const handle = await open(target.real, fsConstants.O_WRONLY | fsConstants.O_CREAT | O_NOFOLLOW | O_NONBLOCK, userPath);
    try {
      const st = await handle.stat();
      if (st.isDirectory()) throw fsError(userPath, 'is a directory', 'fs_error', 'EISDIR');
      refuseUnlessSingleLinkFile(st, userPath);
      await handle.truncate(0);
      let written = 0;
      while (written < data.length) {
        const { bytesWritten } = await handle.write(data, written, data.length - written);
        written += bytesWritten;
      }
      return { path: target.display, bytes: written };
    } finally {
      await handle.close();
    }
  }

  /** Lists a folder's entries sorted by name; symlinks are reported as `symlink`, not followed. */
  async listDir(userPath = '.'): Promise<{ path: string; entries: SandboxEntry[] }> {
    const target = await this.resolve(userPath);
    try {
      if (!(await fsp.stat(target.real)).isDirectory()) throw fsError(userPath, 'is not a directory (use fs/readFile)', 'fs_error', 'ENOTDIR');
      const dirents = await fsp.readdir(target.real, { withFileTypes: true });
      const entries = dirents
        .map((d) => ({ name: d.name, type: direntType(d) }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return { path: target.display, entries };
    } catch (err) {
      throw fsFailure(err, userPath);
    }
  }

  /**
   * Type, size and modification time; `type` is `symlink` when the path itself is a (confined) symlink.
   * A regular file with more than one hard link is refused (its size and times may be those of a file outside).
   */
  async stat(userPath: string): Promise<StatResult> {
    const entry = await this.resolve(userPath, 'entry');
    const target = await this.resolve(userPath);
    try {
      const own = await fsp.lstat(entry.real);
      const st = await fsp.stat(target.real);
      if (st.isFile()) refuseUnlessSingleLinkFile(st, userPath);
      return {
        path: target.display,
        type: own.isSymbolicLink() ? 'symlink' : statType(st),
        size: st.size,
        modifiedAt: st.mtime.toISOString(),
      };
    } catch (err) {
      throw fsFailure(err, userPath);
    }
  }

  /**
   * Deletes a file, a symlink (never its target) or a folder (non-empty ones
   * only with `recursive`). The sandbox root itself cannot be deleted.
   */
  async deletePath(userPath: string, options: { recursive?: boolean } = {}): Promise<{ path: string; type: SandboxEntryType }> {
    const entry = await this.resolve(userPath, 'entry');
    if (entry.real === (await this.ensureRoot())) throw fsError(userPath, 'is the sandbox root folder and cannot be deleted', 'fs_error');
    try {
      const own = await fsp.lstat(entry.real);
      const type = own.isSymbolicLink() ? 'symlink' : statType(own);
      if (type === 'dir') {
        if (options.recursive) await fsp.rm(entry.real, { recursive: true });
        else await fsp.rmdir(entry.real);
      } else {
        await fsp.unlink(entry.real);
      }
      return { path: entry.display, type };
    } catch (err) {
      throw fsFailure(err, userPath);
    }
  }
}

/** Creates a confinement for `root` (resolved against the working directory); the folder is made on first use. */
export function createSandboxFs(root: string): SandboxFs {
  return new SandboxFs(root);
}

/** `child` relative to `parent` when inside it (`''` for `parent` itself), else undefined. */
export function relativeInside(parent: string, child: string): string | undefined {
  const rel = path.relative(parent, child);
  if (rel === '') return '';
  if (rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel)) return undefined;
  return rel;
}

/**
 * `fs.realpath` that also works for paths that do not exist yet: the deepest
 * existing ancestor is resolved and the missing rest appended. Dangling
 * symlinks are followed to where they point, so a link to a not-yet-existing
 * file outside the root is caught too.
 */
async function realpathDeep(p: string, state: { hops: number }): Promise<string> {
  try {
    return await fsp.realpath(p);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  let linkTarget: string | undefined;
  try {
    const st = await fsp.lstat(p);
    if (!st.isSymbolicLink()) return p;
    linkTarget = await fsp.readlink(p);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const realParent = await realpathDeep(parent, state);
  if (linkTarget === undefined) return path.join(realParent, path.basename(p));
  if (++state.hops > MAX_SYMLINK_HOPS) throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' });
  return realpathDeep(path.resolve(realParent, linkTarget), state);
}

function isMissing(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function open(real: string, flags: number, userPath: string): Promise<FileHandle> {
  try {
    return await fsp.open(real, flags, 0o666);
  } catch (err) {
    // With O_NOFOLLOW, ELOOP means the last component became a symlink after the check.
    if ((err as { code?: unknown })?.code === 'ELOOP' && O_NOFOLLOW !== 0) throw sandboxEscape(userPath, 'is a symlink (refused)');
    throw fsFailure(err, userPath);
  }
}

/**
 * Refuses, without opening it, an existing entry that is a FIFO, socket or
 * device (opening some devices has effects). A missing entry passes (writes
 * create it). Not the deciding check: the caller fstats what it opened.
 */
async function refuseSpecialEntry(real: string, userPath: string): Promise<void> {
  let st: Stats;
  try {
    st = await fsp.lstat(real);
  } catch (err) {
    if (isMissing(err)) return;
    throw fsFailure(err, userPath);
  }
  if (!st.isFile() && !st.isDirectory() && !st.isSymbolicLink()) throw fsError(userPath, `is ${specialKind(st)}, not a regular file`, 'fs_error');
}

/**
 * The deciding check on an open descriptor's (or a path's) status: only a
 * regular file with exactly one link. A hard link placed in the sandbox is
 * another name for a file that may lie outside it; reading or writing through
 * it would cross the boundary, so it is refused as an escape.
 */
function refuseUnlessSingleLinkFile(st: Stats, userPath: string): void {
  if (!st.isFile()) throw fsError(userPath, `is ${specialKind(st)}, not a regular file`, 'fs_error');
  if (st.nlink > 1) {
    throw sandboxEscape(userPath, `is a file with ${st.nlink} hard links (another name for it may lie outside the sandbox): refused`);
  }
}

function specialKind(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isDirectory()) return 'a directory';
  return 'something other than a file';
}

function direntType(d: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): SandboxEntryType {
  if (d.isSymbolicLink()) return 'symlink';
  if (d.isDirectory()) return 'dir';
  if (d.isFile()) return 'file';
  return 'other';
}

function statType(st: { isFile(): boolean; isDirectory(): boolean }): SandboxEntryType {
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'other';
}
