import * as v from 'valibot';
import type { RetentionLimits, RetentionPolicy } from '../kernel/retention.js';

/** A duration as the config writes it: a whole number and a unit, `90s`, `15m`, `12h`, `30d`, `2w`. */
const DURATION = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
/** The words that lift a limit (an agent's entry can lift a default this way). */
const UNLIMITED = 'unlimited';

const formatNumber = (n: number) => n.toLocaleString('en-US');

/** `30d` -> 2,592,000,000; undefined for anything else. */
export function durationMs(text: string): number | undefined {
  const m = DURATION.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : undefined;
}

/** The documented ranges of the retention keys (README, Configuration). */
export const RETENTION_RANGES = {
  maxAge: { minMs: 1_000, maxMs: 100 * 365 * 86_400_000 },
  count: { min: 1, max: 1_000_000_000 },
  interval: { minMs: 1_000, maxMs: 7 * 86_400_000 },
} as const;

/** A duration from `minMs` to `maxMs` (and `unlimited` when `lift`), to milliseconds (null for `unlimited`). */
function duration(minMs: number, maxMs: number, range: string, lift: boolean) {
  const expected = `expected a duration such as 30d, 12h, 15m or 90s (${range})${lift ? `, or ${UNLIMITED}` : ''}`;
  return v.pipe(
    v.unknown(),
    v.check((x) => {
      if (lift && x === UNLIMITED) return true;
      const ms = typeof x === 'string' ? durationMs(x) : undefined;
      return ms !== undefined && ms >= minMs && ms <= maxMs;
    }, expected),
    v.transform((x) => (x === UNLIMITED ? null : durationMs(x as string)!)),
  );
}

/** A whole number of `unit` in the count range (a numeric string too, as env vars give), or `unlimited`; null for `unlimited`. */
function count(unit: string) {
  const { min, max } = RETENTION_RANGES.count;
  return v.pipe(
    v.unknown(),
    v.check((x) => {
      if (x === UNLIMITED) return true;
      const n = typeof x === 'string' && /^\d+$/.test(x) ? Number(x) : x;
      return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;
    }, `expected a whole number from ${formatNumber(min)} to ${formatNumber(max)} (${unit}), or ${UNLIMITED}`),
    v.transform((x) => (x === UNLIMITED ? null : Number(x))),
  );
}

const maxAge = duration(RETENTION_RANGES.maxAge.minMs, RETENTION_RANGES.maxAge.maxMs, '1 second to 100 years', true);
const limits = {
  /** Threads whose operations all finished longer ago than this go. */
  maxAge: v.optional(maxAge),
  /** Keep the newest this many operations of each agent. */
  maxOperations: v.optional(count('operations')),
};

/**
 * `retention:` in hookgate.config.yaml. Nothing is pruned without it. Limits
 * apply per agent; `agents.<id>` replaces a default key by key (`unlimited`
 * lifts one); `decisionLog` is the decision log's own; `interval` is how
 * often the background pass runs.
 */
export const RetentionSchema = v.strictObject({
  ...limits,
  agents: v.optional(v.record(v.pipe(v.string(), v.minLength(1, 'expected an agent id')), v.strictObject(limits))),
  decisionLog: v.optional(v.strictObject({ maxAge: v.optional(maxAge), maxEntries: v.optional(count('decisions')) })),
  interval: v.optional(duration(RETENTION_RANGES.interval.minMs, RETENTION_RANGES.interval.maxMs, '1 second to 7 days', false)),
});

export type ParsedRetention = v.InferOutput<typeof RetentionSchema>;

/** The retention the config asks for, as `Store.prune` takes it, and the background interval. */
export interface RetentionConfig {
  policy: RetentionPolicy;
  /** Milliseconds between two background passes (default one hour). */
  intervalMs: number;
}

export const DEFAULT_RETENTION_INTERVAL_MS = 3_600_000;

/** Fills each agent's entry with the defaults it does not replace; `unlimited` (null) becomes no limit. */
export function retentionConfig(parsed: ParsedRetention | undefined): RetentionConfig {
  const given = (x: number | null | undefined) => (x === null ? undefined : x);
  const defaults: RetentionLimits = omitUndefined({ maxAgeMs: given(parsed?.maxAge), maxOperations: given(parsed?.maxOperations) });
  const agents: Record<string, RetentionLimits> = {};
  for (const [id, entry] of Object.entries(parsed?.agents ?? {})) {
    agents[id] = omitUndefined({
      maxAgeMs: entry.maxAge === undefined ? defaults.maxAgeMs : given(entry.maxAge),
      maxOperations: entry.maxOperations === undefined ? defaults.maxOperations : given(entry.maxOperations),
    });
  }
  const decisionLog = omitUndefined({ maxAgeMs: given(parsed?.decisionLog?.maxAge), maxEntries: given(parsed?.decisionLog?.maxEntries) });
  const policy: RetentionPolicy = {
    ...defaults,
    ...(Object.keys(agents).length > 0 ? { agents } : {}),
    ...(Object.keys(decisionLog).length > 0 ? { decisionLog } : {}),
  };
  return { policy, intervalMs: parsed?.interval ?? DEFAULT_RETENTION_INTERVAL_MS };
}

function omitUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as T;
}
