import { runPackTests, type PackTestResult } from '../pack-tests.js';
import { loadErrorsResult, settingsFrom, withLoadedPacks, type CliPolicyOptions, type CliResult } from './cli-support.js';

/**
 * `hookgate policy test [paths] [--json]`: runs every inline test like
 * `opa test`: one PASS/FAIL line per test, a diff of expected vs actual for
 * failures, a summary. Exit 1 when a test fails, 2 when a pack does not load.
 */
export async function policyTest(paths: readonly string[], options: CliPolicyOptions & { json?: boolean } = {}): Promise<CliResult> {
  return withLoadedPacks(paths, options, async ({ packs, errors }, pool) => {
    if (errors.length > 0) return loadErrorsResult(errors);
    const results = await runPackTests(packs, pool, settingsFrom(options));
    const failed = results.filter((r) => !r.pass).length;
    const exitCode = failed > 0 ? 1 : 0;
    if (options.json) return { exitCode, output: JSON.stringify({ passed: results.length - failed, failed, results }, null, 2) };
    return { exitCode, output: formatResults(results, failed) };
  });
}

function formatResults(results: readonly PackTestResult[], failed: number): string {
  const lines: string[] = [];
  let file: string | undefined;
  for (const r of results) {
    if (r.file !== file) {
      file = r.file;
      lines.push(`${file}:`);
    }
    const label = `${r.pack}${r.policyId ? '/' + r.policyId : ''}: ${r.name}`;
    lines.push(`${r.pass ? 'PASS' : 'FAIL'}: ${label} (${r.durationMs.toFixed(1)}ms)`);
    if (!r.pass) {
      for (const key of ['effect', 'reason', 'content'] as const) {
        if (r.expected[key] === undefined || r.expected[key] === r.actual[key]) continue;
        lines.push(`  ${key}:`, `    - expected: ${JSON.stringify(r.expected[key])}`, `    + actual:   ${JSON.stringify(r.actual[key] ?? null)}`);
      }
    }
  }
  lines.push('-'.repeat(80));
  lines.push(`PASS: ${results.length - failed}/${results.length}`);
  if (failed > 0) lines.push(`FAIL: ${failed}/${results.length}`);
  return lines.join('\n');
}
