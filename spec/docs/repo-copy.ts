import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cliEnv } from '../helpers/cli-process.js';

/** What never goes into a copy: installed packages (linked instead), git data, run data. */
const NOT_COPIED = new Set(['node_modules', '.git', '.hookgate']);

/**
 * Copies the repository's working tree (built `dist/` included, so the docs'
 * `node dist/cli.js` works without a rebuild) into `dest`, and links
 * `node_modules` to the real installed packages. Only for blocks that never
 * install anything: the link points at the shared packages.
 */
export function copyWorkingTree(root: string, dest: string): void {
  fs.mkdirSync(dest, { recursive: true });
  for (const entry of fs.readdirSync(root)) {
    if (NOT_COPIED.has(entry)) continue;
    // Nested installs (bench/peers/node_modules, 41 MB) are left out too: no doc block uses them, and copying one per
    // doc file made the suite's final clean-up outlast its timeout on a loaded machine.
    fs.cpSync(path.join(root, entry), path.join(dest, entry), { recursive: true, verbatimSymlinks: true, filter: (src) => path.basename(src) !== 'node_modules' });
  }
  fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules')), path.join(dest, 'node_modules'), 'dir');
}

/**
 * Writes `<dir>/hookgate`, the command the docs call `hookgate` (what `npm
 * link` would put on PATH): `node <repo>/dist/cli.js "$@"`. Returns `dir`,
 * to put first on PATH.
 */
export function writeHookgateCommand(dir: string, repo: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'hookgate');
  fs.writeFileSync(file, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(repo, 'dist', 'cli.js'))} "$@"\n`, { mode: 0o755 });
  return dir;
}

/** What a finished shell run printed, and its exit code. */
export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `script` with `/bin/sh -e -c` in `cwd` (a real shell: quoting,
 * `&&`, comments and variables behave as they do for a reader), with the
 * spec's environment minus HOOKGATE_* / AGENT_HOOK_* settings, `binDir`
 * first on PATH, and `extra` on top.
 */
export function runShell(script: string, cwd: string, binDir: string, extra: NodeJS.ProcessEnv = {}): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const base = cliEnv();
    const env = { ...base, PATH: `${binDir}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}${base.PATH ?? ''}`, ...extra };
    const child = spawn('/bin/sh', ['-e', '-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The last `lines` lines of a text, for failure messages. */
export function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}
