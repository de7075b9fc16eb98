import { describeModule } from '../policy-engine.js';
import type { EvaluationSettings } from '../evaluate-decision.js';
import { loadPacks, type LoadPacksResult } from '../load-packs.js';
import { PolicyPool } from '../policy-pool.js';
import { formatLoadError, type PolicyLoadError } from '../policy-types.js';

/** What every CLI function returns; the commander wiring prints `output` and exits with `exitCode`. */
export interface CliResult {
  exitCode: number;
  output: string;
}

export interface CliPolicyOptions {
  deadlineMs?: number;
  defaultDecision?: 'allow' | 'deny';
  maxWorkers?: number;
}

export function settingsFrom(options: CliPolicyOptions): EvaluationSettings {
  const deadlineMs = options.deadlineMs ?? 250;
  return {
    deadlineMs,
    defaultDecision: options.defaultDecision ?? 'allow',
    limits: { timeout: Math.max(1, Math.floor(deadlineMs * 0.8)), stack: 200, sequence: 100_000 },
    maxInputDepth: 64,
  };
}

/** Starts a pool, loads the packs (code modules described inside workers), runs `fn`, always stops the pool. */
export async function withLoadedPacks<T>(
  paths: readonly string[],
  options: CliPolicyOptions,
  fn: (loaded: LoadPacksResult, pool: PolicyPool) => Promise<T>,
): Promise<T> {
  const pool = new PolicyPool({ maxWorkers: options.maxWorkers ?? 2 });
  try {
    await pool.start();
    const loaded = await loadPacks(paths, { describeModule: (m) => describeModule(pool, m, 5000) });
    return await fn(loaded, pool);
  } finally {
    await pool.stop();
  }
}

export function loadErrorsResult(errors: readonly PolicyLoadError[]): CliResult {
  const lines = errors.map((e) => `error: ${formatLoadError(e)}`);
  lines.push(`${errors.length} error${errors.length === 1 ? '' : 's'}`);
  return { exitCode: 2, output: lines.join('\n') };
}
