import path from 'node:path';
import type { Sandbox, SandboxExecOptions, SandboxExecResult, SandboxFileStat } from '../../kernel/sandbox.js';

/**
 * `sandbox` with its relative paths resolved against `cwd` instead of the
 * adapter's default (`useSandbox(factory, { cwd })`): `cwd` itself goes
 * through the adapter's `resolvePath` (a relative one against the adapter's
 * default; SANDBOX_ESCAPE when it leaves the sandbox, thrown here, at once),
 * and every path is handed on absolute, so the adapter's confinement is the
 * only one. Absolute paths pass through unchanged. Synchronous.
 */
export function sandboxAt(sandbox: Sandbox, cwd: string): Sandbox {
  const base = sandbox.resolvePath(cwd);
  // Sandbox paths are POSIX on every adapter hookgate ships (a folder on this host, or a remote shell).
  const at = (p: string): string => (typeof p === 'string' && !path.posix.isAbsolute(p) ? path.posix.resolve(base, p) : p);
  return Object.freeze({
    cwd: base,
    resolvePath: (p: string) => sandbox.resolvePath(at(p)),
    exec: (command: string, options: SandboxExecOptions = {}): Promise<SandboxExecResult> => sandbox.exec(command, { ...options, cwd: at(options.cwd ?? '.') }),
    readFile: (p: string) => sandbox.readFile(at(p)),
    readFileBuffer: (p: string) => sandbox.readFileBuffer(at(p)),
    writeFile: (p: string, content: string | Uint8Array) => sandbox.writeFile(at(p), content),
    stat: (p: string): Promise<SandboxFileStat> => sandbox.stat(at(p)),
    readdir: (p: string) => sandbox.readdir(at(p)),
    exists: (p: string) => sandbox.exists(at(p)),
    mkdir: (p: string, options?: { recursive?: boolean }) => sandbox.mkdir(at(p), options),
    rm: (p: string, options?: { recursive?: boolean; force?: boolean }) => sandbox.rm(at(p), options),
  });
}
