/**
 * What an agent's environment offers code (document 001's `SessionEnv`, what
 * `harness.sandbox` is): a shell and the file verbs, all confined to the
 * sandbox. A sandbox plugin provides it through the `Sandbox` token; the
 * bundled one is `sandbox-local` (a folder on this host). Relative paths
 * resolve against `cwd`; every method throws SANDBOX_ESCAPE for a path that
 * leaves the sandbox, and a readable TOOL_TARGET_INVALID for a missing file
 * or one of the wrong kind. Nothing done through it is recorded in a
 * conversation.
 */
export interface Sandbox {
  /**
   * Runs `command` with the system shell in `cwd` (or `options.cwd`, which
   * must lie inside the sandbox), with only the environment given (plus a
   * minimal PATH, HOME and LANG). Resolves with both streams (each bounded:
   * the rest is dropped and a truncation note appended) and the exit code
   * (128 + signal number when killed by a signal). Rejects with
   * SANDBOX_EXEC_TIMEOUT past `timeoutMs` (the process group is killed) and
   * with the signal's reason (an AbortError) when `signal` aborts.
   */
  exec(command: string, options?: SandboxExecOptions): Promise<SandboxExecResult>;
  /** A file's text (UTF-8). */
  readFile(path: string): Promise<string>;
  /** A file's bytes. */
  readFileBuffer(path: string): Promise<Uint8Array>;
  /** Creates or replaces a file; missing parent folders are created. */
  writeFile(path: string, content: string | Uint8Array): Promise<void>;
  /** What `path` is; `isSymbolicLink` when the path itself is a (confined) symlink. */
  stat(path: string): Promise<SandboxFileStat>;
  /** The names in a folder, sorted. */
  readdir(path: string): Promise<string[]>;
  /** Whether `path` exists inside the sandbox (a path that escapes still throws). */
  exists(path: string): Promise<boolean>;
  /** Creates a folder (with `recursive`, its parents too, and no error when it exists). */
  mkdir(path: string, options?: { recursive?: boolean }): Promise<void>;
  /** Deletes a file, a symlink (never its target) or a folder (non-empty ones with `recursive`); `force`: no error when missing. */
  rm(path: string, options?: { recursive?: boolean; force?: boolean }): Promise<void>;
  /** The folder relative paths resolve against (absolute, on the sandbox's side). */
  readonly cwd: string;
  /** `path` resolved against `cwd`, lexically (the file system is not touched); SANDBOX_ESCAPE when it leaves the sandbox. */
  resolvePath(path: string): string;
  /**
   * The host folder the sandbox's files are, when they are this machine's own
   * (a local sandbox); absent for a sandbox elsewhere. The runtime refuses one
   * that is or contains hookgate's own state (the data folder, the SQLite
   * file, the config folder, policy paths), as it does `sandbox.root`.
   */
  readonly hostRoot?: string;
}

/** `Sandbox.exec` options. */
export interface SandboxExecOptions {
  /** Where the command runs (inside the sandbox; default `cwd`). */
  cwd?: string;
  /** Environment variables for the command (the host's environment is never passed on). */
  env?: Record<string, string>;
  /** Wall-clock deadline; default and maximum are the sandbox's settings. */
  timeoutMs?: number;
  /** Cancels the command: the process group is killed and the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** What `Sandbox.exec` resolves. */
export interface SandboxExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** What `Sandbox.stat` resolves. */
export interface SandboxFileStat {
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
  size: number;
  mtime: Date;
}

/**
 * What an agent function mounts with `useSandbox(factory, { cwd })`: called
 * (synchronously) the first time a submission's render declares it, and its
 * sandbox kept for the rest of that submission. A throw fails the render.
 */
export type SandboxFactory = () => Sandbox;
