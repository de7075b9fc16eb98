/**
 * Retention: how long a store keeps finished conversations and decisions, and
 * what one pruning pass removed. The store decides what is safe to remove
 * (`Store.prune`); this file holds the policy it is given and the counts it
 * answers with. Limits left out mean "no limit": an empty policy prunes nothing.
 *
 * The unit of operation retention is the thread (a conversation): its
 * operations share one message history (positions continue across them), so a
 * thread goes as a whole or not at all, and a continued thread never loses the
 * start of its history. A thread is removed only when
 * - every operation on it is terminal (done, error, interrupted), and expired:
 *   finished longer than `maxAgeMs` before `now`, or not among the newest
 *   `maxOperations` operations of its agent;
 * - none of those operations has an unfinished parent (a parked parent waits
 *   for its sub-agent's result) or an unfinished child (a running sub-agent
 *   publishes into its parent's placeholder);
 * - it does not hold the store's newest operation (a SQLite store numbers new
 *   operations after its newest one, and their generated message ids with
 *   them: removing the newest would let a later operation reuse its number).
 * With it go its operations' messages, steps and persisted hooks. A thread that
 * never had an operation goes once it is older than its agent's `maxAgeMs`.
 */

/** Limits for one agent's operations; absent: no limit of that kind. */
export interface RetentionLimits {
  /** Remove operations that finished longer than this many milliseconds ago. */
  readonly maxAgeMs?: number;
  /** Keep the newest this many operations of the agent (a thread goes when all its operations are beyond them). */
  readonly maxOperations?: number;
}

/** What `Store.prune` keeps. */
export interface RetentionPolicy extends RetentionLimits {
  /** Per-agent limits by agent id; an agent listed here gets these instead of the defaults above (already merged). */
  readonly agents?: Readonly<Record<string, RetentionLimits>>;
  /** The decision log's own retention, independent of the operations the decisions name. */
  readonly decisionLog?: {
    readonly maxAgeMs?: number;
    /** Keep the newest this many decisions (by `createdAt`, as `listDecisions` orders them). */
    readonly maxEntries?: number;
  };
}

/** How one `Store.prune` call runs. */
export interface PruneOptions {
  /** The clock ages are judged by, epoch milliseconds (default Date.now()). */
  readonly now?: number;
  /** Count what would go and remove nothing. */
  readonly dryRun?: boolean;
  /** Operations (and decisions) looked at per transaction: the store is free for other calls between two batches. */
  readonly batchSize?: number;
  /** Stops the pass between two batches (what was removed stays removed); the counts say how far it got. */
  readonly signal?: AbortSignal;
}

/** What a pass removed (or, with `dryRun`, would remove), by kind. */
export interface PruneCounts {
  threads: number;
  operations: number;
  messages: number;
  steps: number;
  hooks: number;
  decisions: number;
  /** Bytes of the store's file given back to the file system (0 for a store without a file, and on a dry run). */
  reclaimedBytes: number;
}

/** Operations and decisions looked at per transaction by default. */
export const DEFAULT_PRUNE_BATCH = 200;

/** Counts of a pass that removed nothing: where a store's `prune` starts counting. */
export function emptyPruneCounts(): PruneCounts {
  return { threads: 0, operations: 0, messages: 0, steps: 0, hooks: 0, decisions: 0, reclaimedBytes: 0 };
}

/** The limits that apply to `agentId`'s operations. */
export function limitsFor(policy: RetentionPolicy, agentId: string): RetentionLimits {
  return policy.agents?.[agentId] ?? policy;
}

/** Whether the policy can remove anything at all (a background pass with nothing to do is not scheduled). */
export function prunesAnything(policy: RetentionPolicy): boolean {
  const limited = (l: RetentionLimits) => l.maxAgeMs !== undefined || l.maxOperations !== undefined;
  return limited(policy) || Object.values(policy.agents ?? {}).some(limited) ||
    policy.decisionLog?.maxAgeMs !== undefined || policy.decisionLog?.maxEntries !== undefined;
}

/**
 * Whether a terminal operation is beyond its agent's limits: `beyondCount` (the store found it is not among
 * the agent's newest `maxOperations`), or finished (`finishedAt`, the terminal commit's ISO time) before
 * `now - maxAgeMs`.
 */
export function isExpired(limits: RetentionLimits, finishedAt: string, beyondCount: boolean, now: number): boolean {
  if (limits.maxOperations !== undefined && beyondCount) return true;
  return limits.maxAgeMs !== undefined && Date.parse(finishedAt) < now - limits.maxAgeMs;
}

/** The ISO time before which a decision is too old, if the decision log has an age limit. */
export function decisionCutoff(policy: RetentionPolicy, now: number): string | undefined {
  const age = policy.decisionLog?.maxAgeMs;
  return age === undefined ? undefined : new Date(now - age).toISOString();
}

/** Resolves after the event loop turned once: between two batches, other callers' work runs. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
