import type { HookgateConfig } from '../../config/defaults.js';
import type { Kernel } from '../../kernel/kernel.js';
import { prunesAnything, type PruneCounts, type RetentionLimits, type RetentionPolicy } from '../../kernel/retention.js';
import { EXIT } from './exit-codes.js';
import { storeName } from './store-name.js';

/** The kinds a pass removes, in the order the output lists them. */
const KINDS = ['threads', 'operations', 'messages', 'steps', 'hooks', 'decisions'] as const satisfies ReadonlyArray<keyof PruneCounts>;

/**
 * `hookgate prune [--dry-run] [--json]`: one pass of the config's
 * `retention` now (what the background pass of the store-retention plugin
 * does every `retention.interval`), printing what went by kind; with
 * `--dry-run` what would go, removing nothing. Without retention limits in
 * the config it says so and removes nothing (exit 0 either way).
 */
export async function pruneCommand(kernel: Kernel, options: { dryRun?: boolean; json?: boolean }): Promise<number> {
  const config = kernel.config as Partial<HookgateConfig>;
  const policy: RetentionPolicy = config.retention?.policy ?? {};
  const store = storeName(kernel.config);
  if (!prunesAnything(policy)) {
    if (options.json) process.stdout.write(JSON.stringify({ store, dryRun: options.dryRun === true, retention: policy, removed: null }) + '\n');
    else process.stdout.write(`no retention configured (retention.maxAge, retention.maxOperations, retention.decisionLog in the config): nothing removed from ${store}\n`);
    return EXIT.ok;
  }
  const counts = await kernel.store.prune(policy, { dryRun: options.dryRun === true });
  if (options.json) {
    process.stdout.write(JSON.stringify({ store, dryRun: options.dryRun === true, retention: policy, [options.dryRun ? 'wouldRemove' : 'removed']: counts }, null, 2) + '\n');
    return EXIT.ok;
  }
  const lines = [`${options.dryRun ? 'would remove (dry run: nothing removed)' : 'removed'} from ${store}, by ${describePolicy(policy)}:`];
  for (const kind of KINDS) lines.push(`  ${kind.padEnd(11)} ${counts[kind].toLocaleString('en-US')}`);
  if (!options.dryRun) lines.push(`  ${'reclaimed'.padEnd(11)} ${formatBytes(counts.reclaimedBytes)}`);
  process.stdout.write(lines.join('\n') + '\n');
  return EXIT.ok;
}

/** `maxAge 30d, maxOperations 10,000; agent support: maxAge 7d; decision log: maxEntries 1,000,000`. */
function describePolicy(policy: RetentionPolicy): string {
  const parts = [limits(policy) || 'no default limits'];
  for (const [agent, l] of Object.entries(policy.agents ?? {})) parts.push(`agent ${agent}: ${limits(l) || 'no limits'}`);
  const log = policy.decisionLog;
  if (log?.maxAgeMs !== undefined || log?.maxEntries !== undefined) {
    parts.push(`decision log: ${[log.maxAgeMs !== undefined ? `maxAge ${duration(log.maxAgeMs)}` : '', log.maxEntries !== undefined ? `maxEntries ${log.maxEntries.toLocaleString('en-US')}` : ''].filter(Boolean).join(', ')}`);
  }
  return parts.join('; ');
}

function limits(l: RetentionLimits): string {
  return [l.maxAgeMs !== undefined ? `maxAge ${duration(l.maxAgeMs)}` : '', l.maxOperations !== undefined ? `maxOperations ${l.maxOperations.toLocaleString('en-US')}` : '']
    .filter(Boolean)
    .join(', ');
}

/** The largest unit that divides `ms` (the config's own units). */
function duration(ms: number): string {
  for (const [unit, size] of [['w', 604_800_000], ['d', 86_400_000], ['h', 3_600_000], ['m', 60_000]] as const) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms / 1000}s`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
