import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { HookgateError } from '../../kernel/errors.js';
import type { Sandbox, SandboxExecOptions, SandboxExecResult, SandboxFileStat } from '../../kernel/sandbox.js';
import { fsError, fsFailure, sandboxEscape } from '../../kernel/sandbox-fs-errors.js';
import { relativeInside, type SandboxFs } from '../../kernel/sandbox-fs.js';
import { runCommand } from './sandbox-exec.js';

/** The limits of a local sandbox (the plugin's settings). */
export interface LocalSandboxLimits {
  /** Default and maximum deadline of one `exec`. */
  readonly execTimeoutMs: number;
  /** Bytes kept per output stream of one `exec`. */
  readonly maxOutputBytes: number;
  /** The largest file `readFile` / `readFileBuffer` return (a larger one is refused, never cut short silently). */
  readonly maxReadBytes: number;
}

export const DEFAULT_LOCAL_SANDBOX_LIMITS: LocalSandboxLimits = Object.freeze({ execTimeoutMs: 60_000, maxOutputBytes: 1024 * 1024, maxReadBytes: 16 * 1024 * 1024 });

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The `Sandbox` of a folder on this host: every file verb goes through the
 * same confinement as the builtin fs tools (`SandboxFs`: lexical check,
 * every symlink resolved, `O_NOFOLLOW` opens, hard-linked files refused), so
 * the model's tools and the harness see one folder under one set of rules.
 * `exec` runs in a folder inside it with an environment of its own (the
 * host's variables, credentials among them, never reach the command), bounded
 * output and a deadline. A shell is not a jail: a command can name host
 * paths itself; the confinement is of what hookgate resolves (cwd, paths).
 */
export class LocalSandbox implements Sandbox {
  constructor(
    private readonly fs: SandboxFs,
    private readonly limits: LocalSandboxLimits = DEFAULT_LOCAL_SANDBOX_LIMITS,
  ) {}

  get cwd(): string {
    return this.fs.root;
  }

  get hostRoot(): string {
    return this.fs.root;
  }

  resolvePath(userPath: string): string {
    if (typeof userPath !== 'string') throw sandboxEscape(String(userPath), 'is not a string');
    if (userPath.includes('\0')) throw sandboxEscape(userPath, 'contains a NUL byte');
    const lexical = path.isAbsolute(userPath) ? path.resolve(userPath) : path.resolve(this.fs.root, userPath);
    if (relativeInside(this.fs.root, lexical) === undefined) throw sandboxEscape(userPath);
    return lexical;
  }

  async exec(command: string, options: SandboxExecOptions = {}): Promise<SandboxExecResult> {
    if (typeof command !== 'string' || command.trim() === '') throw invalid('exec: command must be a non-empty string');
    if (command.includes('\0')) throw invalid('exec: command contains a NUL byte');
    const timeoutMs = options.timeoutMs ?? this.limits.execTimeoutMs;
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > this.limits.execTimeoutMs) {
      throw invalid(`exec: timeoutMs must be a positive integer of at most ${this.limits.execTimeoutMs} (the sandbox's execTimeoutMs), got ${String(options.timeoutMs)}`);
    }
    const env = envOf(options.env);
    const where = await this.fs.resolve(options.cwd ?? '.');
    let isDir = false;
    try {
      isDir = (await fsp.stat(where.real)).isDirectory();
    } catch (err) {
      throw fsFailure(err, options.cwd ?? '.');
    }
    if (!isDir) throw fsError(options.cwd ?? '.', 'is not a directory (exec cwd)', 'fs_error', 'ENOTDIR');
    const realRoot = await this.fs.ensureRoot();
    return runCommand({
      command,
      cwd: where.real,
      env: { PATH: DEFAULT_PATH, HOME: realRoot, LANG: 'C.UTF-8', ...env },
      timeoutMs,
      maxOutputBytes: this.limits.maxOutputBytes,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
  }

  async readFile(userPath: string): Promise<string> {
    return (await this.readWhole(userPath)).toString('utf8');
  }

  async readFileBuffer(userPath: string): Promise<Uint8Array> {
    return new Uint8Array(await this.readWhole(userPath));
  }

  async writeFile(userPath: string, content: string | Uint8Array): Promise<void> {
    if (typeof content !== 'string' && !(content instanceof Uint8Array)) throw invalid('writeFile: content must be a string or a Uint8Array');
    await this.fs.writeFile(userPath, content);
  }

  async stat(userPath: string): Promise<SandboxFileStat> {
    const own = await this.fs.stat(userPath);
    const target = own.type === 'symlink' ? await this.targetType(userPath) : own.type;
    return { isFile: target === 'file', isDirectory: target === 'dir', isSymbolicLink: own.type === 'symlink', size: own.size, mtime: new Date(own.modifiedAt) };
  }

  async readdir(userPath: string): Promise<string[]> {
    return (await this.fs.listDir(userPath)).entries.map((e) => e.name);
  }

  async exists(userPath: string): Promise<boolean> {
    try {
      await this.fs.stat(userPath);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async mkdir(userPath: string, options: { recursive?: boolean } = {}): Promise<void> {
    const target = await this.fs.resolve(userPath);
    const realRoot = await this.fs.ensureRoot();
    try {
      await fsp.mkdir(target.real, { recursive: options.recursive === true });
      // A parent swapped for a symlink between resolve and mkdir would show here.
      if (relativeInside(realRoot, await fsp.realpath(target.real)) === undefined) throw sandboxEscape(userPath, 'is outside the sandbox (through a symlink)');
    } catch (err) {
      throw fsFailure(err, userPath);
    }
  }

  async rm(userPath: string, options: { recursive?: boolean; force?: boolean } = {}): Promise<void> {
    try {
      await this.fs.deletePath(userPath, { recursive: options.recursive === true });
    } catch (err) {
      if (options.force === true && isNotFound(err)) return;
      throw err;
    }
  }

  private async readWhole(userPath: string): Promise<Buffer> {
    const read = await this.fs.readFileBytes(userPath, { limitBytes: this.limits.maxReadBytes });
    if (read.truncated) throw fsError(userPath, `is ${read.size} bytes, more than the sandbox reads at once (maxReadBytes ${this.limits.maxReadBytes})`, 'too_large');
    return read.bytes;
  }

  private async targetType(userPath: string): Promise<'file' | 'dir' | 'other'> {
    const target = await this.fs.resolve(userPath);
    try {
      const st = await fsp.stat(target.real);
      return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
    } catch (err) {
      throw fsFailure(err, userPath);
    }
  }
}

function envOf(env: Record<string, string> | undefined): Record<string, string> {
  if (env === undefined) return {};
  if (env === null || typeof env !== 'object' || Array.isArray(env)) throw invalid('exec: env must be an object of strings');
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name)) throw invalid(`exec: env name ${JSON.stringify(name)} is not a variable name`);
    if (typeof value !== 'string' || value.includes('\0')) throw invalid(`exec: env ${name} must be a string without NUL bytes`);
    out[name] = value;
  }
  return out;
}

function invalid(message: string): HookgateError {
  return new HookgateError('SANDBOX_ARGUMENT_INVALID', `sandbox ${message}`);
}

function isNotFound(err: unknown): boolean {
  return err instanceof HookgateError && err.details.reason === 'not_found';
}
