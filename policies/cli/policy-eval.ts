import { readFile } from 'node:fs/promises';
import { effectOf } from '../combine-decisions.js';
import { evaluateTestEvent } from '../pack-tests.js';
import { PolicySet } from '../policy-set.js';
import { loadErrorsResult, settingsFrom, withLoadedPacks, type CliPolicyOptions, type CliResult } from './cli-support.js';

/**
 * `hookgate policy eval [paths] --event file.json`: what the packs would
 * decide for one event and why (each candidate's verdict, mode, failure).
 * The event file is an object with `type` (beforeToolCall by default),
 * identifier, apiName, args, and `result` for afterToolCall. Exit 0 after an
 * evaluation (whatever it decided), 2 when packs or the event file are invalid.
 */
export async function policyEval(paths: readonly string[], eventFile: string, options: CliPolicyOptions & { json?: boolean } = {}): Promise<CliResult> {
  let event: unknown;
  try {
    event = JSON.parse(await readFile(eventFile, 'utf8'));
  } catch (err) {
    return { exitCode: 2, output: `error: ${eventFile}: cannot read the event: ${(err as Error).message}` };
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return { exitCode: 2, output: `error: ${eventFile}: the event must be a JSON object` };
  return withLoadedPacks(paths, options, async ({ packs, errors }, pool) => {
    if (errors.length > 0) return loadErrorsResult(errors);
    const e = await evaluateTestEvent(new PolicySet(packs), pool, settingsFrom(options), event as Record<string, unknown>);
    const verdicts = e.verdicts.map((v) => ({ id: v.policy.id, mode: v.policy.mode, effect: effectOf(v) ?? 'not_applicable', reason: v.reason, error: v.error }));
    if (options.json) {
      const out = { decision: e.decision, effect: e.effect, reason: e.reason, policyIds: e.policyIds, defaulted: e.defaulted, verdicts, redactedResult: e.redactedResult, latencyMicros: e.latencyMicros };
      return { exitCode: 0, output: JSON.stringify(out, null, 2) };
    }
    const lines = [`decision: ${e.decision}${e.defaulted ? ' (default: no enforcing policy matched)' : ''}`];
    if (e.reason) lines.push(`reason: ${e.reason}`);
    if (verdicts.length === 0) lines.push('no candidate policy');
    for (const v of verdicts) {
      lines.push(`  ${v.id} [${v.mode}]: ${v.effect}${v.error ? ` (failed: ${v.error})` : v.reason ? ` (${v.reason})` : ''}`);
    }
    if (e.redactedResult) lines.push(`redacted content: ${e.redactedResult.content}`);
    lines.push(`latency: ${e.latencyMicros.toFixed(1)}µs`);
    return { exitCode: 0, output: lines.join('\n') };
  });
}
