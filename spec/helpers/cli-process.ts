import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { loadConfig } from '../../config/load-config.js';
import type { Store } from '../../kernel/store.js';
import { PostgresStore } from '../../plugins/store-postgres/postgres-store.js';
import { SqliteStore } from '../../plugins/store-sqlite/sqlite-store.js';
import { TEST_POSTGRES } from './postgres-fixtures.js';

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

/** Starts `hookgate run … --json` and resolves once an NDJSON event matches; the child keeps running. */
export function runUntil(cwd: string, args: readonly string[], match: (e: Record<string, unknown>) => boolean, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; operationId: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'run', ...args, '--json'], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let buffer = '';
    let operationId = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffer += d;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const event = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
        buffer = buffer.slice(nl + 1);
        if (event.type === 'operation_started') operationId = String(event.operationId);
        if (match(event)) resolve({ child, operationId });
      }
    });
    child.on('error', reject);
    child.on('close', (code) => reject(new Error(`hookgate run exited (${code}) before the awaited event`)));
  });
}

/** SIGKILLs a child started by `runUntil` and resolves once it is gone. */
export function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('close');
    child.on('close', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Opens the SQLite store a CLI run in `dir` wrote (./.hookgate/hookgate.db), reads it, closes it. */
export async function readStore<T>(dir: string, read: (store: Store) => Promise<T>): Promise<T> {
  // A folder whose config picks PostgreSQL (usePostgresConfig) is read there; any other from its SQLite file.
  const config = existsSync(path.join(dir, 'hookgate.config.yaml')) ? loadConfig({ cwd: dir, env: {} }) : undefined;
  const store: Store = config?.store.driver === 'postgres'
    ? new PostgresStore({ ...config.store.postgres, poolSize: 2 })
    : new SqliteStore({ path: path.join(dir, '.hookgate', 'hookgate.db'), backgroundCheckpoints: false });
  await store.migrate();
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

/** Writes `dir`/hookgate.config.yaml putting every process started there (and readStore) on `schema` of the test PostgreSQL. */
export async function usePostgresConfig(dir: string, schema: string): Promise<void> {
  const { host, port, database, user } = TEST_POSTGRES;
  await writeFile(path.join(dir, 'hookgate.config.yaml'), `store:\n  driver: postgres\n  postgres: { host: "${host}", port: ${port}, database: ${database}, user: ${user}, schema: ${schema} }\n`);
}

/**
 * An agent file for crash specs: a write, then a second write whose model
 * turn takes `delayMs` (the turn a process is killed in), then `all done`.
 */
export function slowWriterAgent(delayMs: number): string {
  return `id: slow
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: first.txt, content: one } } ]
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: second.txt, content: two } } ]
      delayMs: ${delayMs}
    - text: all done
tools: [fs/*]
`;
}
