import { lintPacks, type PolicyWarning } from '../authoring/pack-lint.js';
import type { ToolCatalog } from '../authoring/tool-catalog.js';
import { formatLoadError } from '../policy-types.js';
import { loadErrorsResult, withLoadedPacks, type CliPolicyOptions, type CliResult } from './cli-support.js';

export interface PolicyCheckOptions extends CliPolicyOptions {
  /** The tools the config's plugins provide; without it only load errors are reported. */
  catalog?: ToolCatalog;
  /** Warnings are errors (exit 2). */
  strict?: boolean;
  json?: boolean;
}

/**
 * `hookgate policy check [paths] [--strict] [--json]`: loads every pack,
 * compiles every regex with re2 and every JSONata expression, imports code
 * policies inside a worker; then, against the tool catalog, warns about
 * policies that cannot do what they say (see `lintPacks`).
 * Exit 2 with all errors at once (and, with `--strict`, when there are
 * warnings); 0 otherwise, with a summary.
 */
export async function policyCheck(paths: readonly string[], options: PolicyCheckOptions = {}): Promise<CliResult> {
  return withLoadedPacks(paths, options, async ({ packs, errors }) => {
    if (errors.length > 0 && !options.json) return loadErrorsResult(errors);
    const warnings: PolicyWarning[] = errors.length === 0 && options.catalog ? lintPacks(packs, options.catalog) : [];
    const failed = errors.length > 0 || (options.strict === true && warnings.length > 0);
    const exitCode = failed ? 2 : 0;
    const policies = packs.reduce((n, p) => n + p.policies.length, 0);
    if (options.json) {
      const catalog = options.catalog ? { tools: options.catalog.tools.map((t) => t.key), sources: options.catalog.sources, problems: options.catalog.problems } : undefined;
      return {
        exitCode,
        output: JSON.stringify(
          { ok: !failed, strict: options.strict === true, errors, warnings, packs: packs.map((p) => ({ file: p.file, name: p.name, policies: p.policies.length, tests: p.tests.length })), catalog },
          null,
          2,
        ),
      };
    }
    const lines = packs.map((p) => `ok: ${p.file} (${p.name}: ${p.policies.length} policies, ${p.tests.length} tests)`);
    const label = options.strict ? 'error' : 'warning';
    for (const w of warnings) lines.push(`${label}: ${formatLoadError(w)}`);
    if (options.catalog) lines.push(`tool catalog: ${describeCatalog(options.catalog)}`);
    const counted = warnings.length === 0 ? 'no warnings' : `${warnings.length} warning${warnings.length === 1 ? '' : 's'}${options.strict ? ' (errors with --strict)' : ''}`;
    lines.push(`${packs.length} packs, ${policies} policies: no errors, ${counted}`);
    return { exitCode, output: lines.join('\n') };
  });
}

function describeCatalog(c: ToolCatalog): string {
  const n = c.tools.length;
  return `${n} tool${n === 1 ? '' : 's'} from ${c.sources.join(', ') || 'no tool source'}, plus sub-agents (agents/<id>)`;
}
