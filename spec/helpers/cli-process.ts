import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// dist/spec/helpers/cli-process.js -> the repository root.
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** The built CLI, as `npm link` would run it. */
export const CLI = path.join(ROOT, 'dist', 'cli.js');

/** What a finished `hookgate` child process printed, and its exit code. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The spec process's environment without the developer's HOOKGATE_* and AGENT_HOOK_* settings, plus `extra`. */
export function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HOOKGATE_') && !k.startsWith('AGENT_HOOK_'))), ...extra };
}

/** Runs `node dist/cli.js ...args` in `cwd` as a real child process and resolves when it exits. */
export function runHookgate(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
