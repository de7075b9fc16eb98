import { measureCoverage, type CoverageReport } from '../authoring/test-coverage.js';
import { runPackTests, type PackTestResult } from '../pack-tests.js';
import { loadErrorsResult, settingsFrom, withLoadedPacks, type CliPolicyOptions, type CliResult } from './cli-support.js';

/**
 * `hookgate policy test [paths] [--coverage] [--json]`: runs every inline
 * test like `opa test`: one PASS/FAIL line per test, a diff of expected vs
 * actual for failures, a summary. `--coverage` adds which policies and which
 * branches the tests exercised (`measureCoverage`). Exit 1 when a test
 * fails, 2 when a pack does not load.
 */
export async function policyTest(paths: readonly string[], options: CliPolicyOptions & { json?: boolean; coverage?: boolean } = {}): Promise<CliResult> {
  return withLoadedPacks(paths, options, async ({ packs, errors }, pool) => {
    if (errors.length > 0) return loadErrorsResult(errors);
    const settings = settingsFrom(options);
    const results = await runPackTests(packs, pool, settings);
    const coverage = options.coverage ? await measureCoverage(packs, pool, settings) : undefined;
    const failed = results.filter((r) => !r.pass).length;
    const exitCode = failed > 0 ? 1 : 0;
    if (options.json) return { exitCode, output: JSON.stringify({ passed: results.length - failed, failed, results, ...(coverage ? { coverage } : {}) }, null, 2) };
    const text = formatResults(results, failed);
    return { exitCode, output: coverage ? `${text}\n${formatCoverage(coverage)}` : text };
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

function percent(covered: number, total: number): string {
  return total === 0 ? '100%' : `${Math.floor((covered / total) * 100)}%`;
}

/** Per policy: each item's outcomes with their test counts, and the outcomes no test produced. */
function formatCoverage(report: CoverageReport): string {
  const lines = [`coverage: ${report.covered}/${report.total} outcomes (${percent(report.covered, report.total)}) in ${report.policies.length} policies`];
  for (const p of report.policies) {
    lines.push(`  ${p.pack}/${p.id}: ${p.covered}/${p.total} (${percent(p.covered, p.total)}), ${p.tests} test${p.tests === 1 ? '' : 's'} on its events`);
    for (const item of p.items) {
      const counts = Object.entries(item.counts).map(([k, v]) => `${k} ${v}`).join(', ');
      const gaps = Object.entries(item.counts).filter(([, v]) => v === 0).map(([k]) => k);
      const label = item.kind === 'policy' ? 'policy' : item.kind === 'when' ? `when ${oneLine(item.label)}` : item.kind === 'condition' ? `  ? ${oneLine(item.label)}` : item.kind === 'operand' ? `  ${oneLine(item.label)}` : item.kind === 'match' ? `match ${item.label}` : oneLine(item.label);
      lines.push(`    ${label}: ${counts}${gaps.length > 0 ? `  <- not exercised: ${gaps.join(', ')}` : ''}`);
    }
  }
  return lines.join('\n');
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 90 ? `${flat.slice(0, 87)}…` : flat;
}
