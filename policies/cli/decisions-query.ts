import type { DecisionFilter } from '../../kernel/store.js';
import type { DecisionLog } from '../decision-log.js';
import type { CliResult } from './cli-support.js';

/**
 * `hookgate decisions [--operation] [--policy] [--decision] [--since] [--until] [--limit] [--json]`:
 * reads the decision log (newest first) and prints one line per decision.
 * Exit 0, also when nothing matches; 2 for an invalid time filter.
 */
export async function decisionsQuery(store: Pick<DecisionLog, 'listDecisions'>, filter: DecisionFilter = {}, options: { json?: boolean } = {}): Promise<CliResult> {
  for (const key of ['since', 'until'] as const) {
    const value = filter[key];
    if (value !== undefined && Number.isNaN(Date.parse(value))) return { exitCode: 2, output: `error: --${key} is not a timestamp: ${value}` };
  }
  const records = await store.listDecisions(filter);
  if (options.json) return { exitCode: 0, output: JSON.stringify(records, null, 2) };
  if (records.length === 0) return { exitCode: 0, output: 'no decisions' };
  const lines = records.map((r) => {
    const policies = r.policies.map((p) => `${p.id}=${p.effect}${p.mode === 'shadow' ? '(shadow)' : ''}${p.error ? '(failed)' : ''}`).join(',') || '-';
    const tool = r.identifier !== undefined ? `${r.identifier}/${r.apiName ?? ''}` : '-';
    return [r.createdAt, r.operationId ?? '-', r.event, tool, r.decision + (r.defaulted ? '(default)' : ''), policies, `${r.latencyMicros}µs`, r.reason ?? ''].join('  ');
  });
  lines.push(`${records.length} decision${records.length === 1 ? '' : 's'}`);
  return { exitCode: 0, output: lines.join('\n') };
}
