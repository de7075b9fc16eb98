import { loadErrorsResult, withLoadedPacks, type CliPolicyOptions, type CliResult } from './cli-support.js';

/**
 * `hookgate policy check [paths]`: loads every pack, compiles every regex with
 * re2 and every JSONata expression, imports code policies inside a worker.
 * Exit 2 with all errors at once; 0 with a summary when everything loads.
 */
export async function policyCheck(paths: readonly string[], options: CliPolicyOptions = {}): Promise<CliResult> {
  return withLoadedPacks(paths, options, async ({ packs, errors }) => {
    if (errors.length > 0) return loadErrorsResult(errors);
    const policies = packs.reduce((n, p) => n + p.policies.length, 0);
    const lines = packs.map((p) => `ok: ${p.file} (${p.name}: ${p.policies.length} policies, ${p.tests.length} tests)`);
    lines.push(`${packs.length} packs, ${policies} policies: no errors`);
    return { exitCode: 0, output: lines.join('\n') };
  });
}
