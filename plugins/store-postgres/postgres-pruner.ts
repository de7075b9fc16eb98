import type { PoolClient } from 'pg';
import {
  decisionCutoff,
  DEFAULT_PRUNE_BATCH,
  emptyPruneCounts,
  isExpired,
  limitsFor,
  yieldToEventLoop,
  type PruneCounts,
  type PruneOptions,
  type RetentionPolicy,
} from '../../kernel/retention.js';
import { TERMINAL_STATUSES, UNFINISHED_STATUSES, type OperationStatus } from '../../kernel/store.js';
import type { PostgresConnection } from './postgres-connection.js';

const UNFINISHED_SQL = `(${[...UNFINISHED_STATUSES].map((s) => `'${s}'`).join(', ')})`;

interface OperationRow {
  seq: string;
  id: string;
  thread_seq: string;
  agent_id: string;
  status: OperationStatus;
  updated_at: string;
  parent_operation_id: string | null;
}

/** What the pruner needs from its store. */
export interface PostgresPrunerHost {
  db: PostgresConnection;
  /** Runs one batch with the store's other calls held until it ends (see PostgresStore.exclusive). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Whether the store was closed (the pass ends there). */
  closed(): boolean;
}

/**
 * Store-postgres's `prune`: the judgement of kernel/retention.ts, one
 * transaction per batch of `batchSize` threads (oldest first, up to the
 * newest thread when the pass began: threads created during it are not
 * chased), the event loop turned between batches. A batch locks its threads
 * (FOR UPDATE: an operation starting on one of them waits, then finds it
 * gone), reads their operations, parents, children and unsettled
 * submissions, and deletes whole threads; messages, steps, hooks and tool
 * steps go with their operation by ON DELETE CASCADE (each has an index
 * led by the operation). Decisions go after the threads, a batch at a time.
 */
export class PostgresPruner {
  constructor(private readonly host: PostgresPrunerHost) {}

  async run(policy: RetentionPolicy, options: PruneOptions): Promise<PruneCounts> {
    const now = options.now ?? Date.now();
    const batch = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_PRUNE_BATCH));
    const dryRun = options.dryRun === true;
    const counts = emptyPruneCounts();
    const stopped = () => options.signal?.aborted === true || this.host.closed();
    let beyondCount = new Set<string>();
    let lastThread = 0;
    let maxThread = 0;
    for (let first = true; ; first = false) {
      if (!first) {
        await yieldToEventLoop();
        if (stopped()) return counts;
      }
      const more = await this.host.exclusive(async () => {
        if (first) {
          beyondCount = await this.beyondCount(policy);
          const { rows } = await this.host.db.query<{ max: string | null }>('SELECT MAX(seq) AS max FROM threads');
          maxThread = Number(rows[0]?.max ?? 0);
        }
        return this.host.db.transaction((c) => this.threadBatch(c, policy, { after: lastThread, upTo: maxThread, batch, now, dryRun, beyondCount }, counts));
      });
      if (more === undefined) break;
      lastThread = more;
    }
    await this.decisions(policy, now, dryRun, batch, counts, stopped);
    return counts;
  }

  /** Operations past their agent's `maxOperations`, judged once at the start (newer operations only push older ones further back). */
  private async beyondCount(policy: RetentionPolicy): Promise<Set<string>> {
    const limits = [policy.maxOperations, ...Object.values(policy.agents ?? {}).map((a) => a.maxOperations)].filter((n): n is number => n !== undefined);
    if (limits.length === 0) return new Set();
    const { rows } = await this.host.db.query<{ id: string; agent_id: string; rank: string }>(
      `SELECT id, agent_id, rank FROM (SELECT id, agent_id, row_number() OVER (PARTITION BY agent_id ORDER BY seq DESC) AS rank FROM operations) r WHERE rank > $1`,
      [Math.min(...limits)],
    );
    const beyond = new Set<string>();
    for (const row of rows) {
      const max = limitsFor(policy, row.agent_id).maxOperations;
      if (max !== undefined && Number(row.rank) > max) beyond.add(row.id);
    }
    return beyond;
  }

  /** One batch of threads; resolves to the last thread seq looked at, or undefined when none was left. */
  private async threadBatch(c: PoolClient, policy: RetentionPolicy, at: { after: number; upTo: number; batch: number; now: number; dryRun: boolean; beyondCount: ReadonlySet<string> },
    counts: PruneCounts): Promise<number | undefined> {
    const threads = await c.query<{ seq: string; agent_id: string; updated_at: string }>(
      'SELECT seq, agent_id, updated_at FROM threads WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3 FOR UPDATE', [at.after, at.upTo, at.batch]);
    if (threads.rows.length === 0) return undefined;
    const seqs = threads.rows.map((t) => Number(t.seq));
    const ops = await c.query<OperationRow>(
      'SELECT seq, id, thread_seq, agent_id, status, updated_at, parent_operation_id FROM operations WHERE thread_seq = ANY($1::bigint[])', [seqs]);
    const ids = ops.rows.map((o) => o.id);
    const parentIds = [...new Set(ops.rows.flatMap((o) => (o.parent_operation_id === null ? [] : [o.parent_operation_id])))];
    // One connection runs one query at a time: these go one after the other.
    const newest = await c.query<{ max: string | null }>('SELECT MAX(seq) AS max FROM operations');
    const parents = await c.query<{ id: string; status: OperationStatus }>('SELECT id, status FROM operations WHERE id = ANY($1::text[])', [parentIds]);
    const waitedOn = await c.query<{ parent_operation_id: string }>(
      `SELECT DISTINCT parent_operation_id FROM operations WHERE parent_operation_id = ANY($1::text[]) AND status IN ${UNFINISHED_SQL}`, [ids]);
    // Document 001: a thread with an admitted delivery that has not settled stays; its settled ones go with it.
    const unsettled = await c.query<{ thread_seq: string }>(
      "SELECT DISTINCT thread_seq FROM submissions WHERE thread_seq = ANY($1::bigint[]) AND status IN ('queued', 'running', 'joined')", [seqs]);
    const newestSeq = newest.rows[0]?.max ?? null;
    const parentStatus = new Map(parents.rows.map((p) => [p.id, p.status]));
    const waited = new Set(waitedOn.rows.map((r) => r.parent_operation_id));
    const blocked = new Set(unsettled.rows.map((r) => Number(r.thread_seq)));
    const byThread = new Map<number, OperationRow[]>();
    for (const op of ops.rows) byThread.set(Number(op.thread_seq), [...(byThread.get(Number(op.thread_seq)) ?? []), op]);
    const goThreads: number[] = [];
    const goOps: string[] = [];
    for (const t of threads.rows) {
      const seq = Number(t.seq);
      const own = byThread.get(seq) ?? [];
      if (blocked.has(seq)) continue;
      if (own.length === 0) {
        const age = limitsFor(policy, t.agent_id).maxAgeMs;
        if (age === undefined || !(Date.parse(t.updated_at) < at.now - age)) continue;
      } else {
        const keep = own.some((op) => op.seq === newestSeq || !TERMINAL_STATUSES.has(op.status) ||
          !isExpired(limitsFor(policy, op.agent_id), op.updated_at, at.beyondCount.has(op.id), at.now) ||
          (op.parent_operation_id !== null && UNFINISHED_STATUSES.has(parentStatus.get(op.parent_operation_id)!)) || waited.has(op.id));
        if (keep) continue;
      }
      goThreads.push(seq);
      goOps.push(...own.map((o) => o.seq));
    }
    if (goThreads.length > 0) {
      const { rows: [n] } = await c.query<{ m: string; s: string; h: string }>(
        `SELECT (SELECT COUNT(*) FROM messages WHERE thread_seq = ANY($1::bigint[])) AS m, (SELECT COUNT(*) FROM steps WHERE operation_seq = ANY($2::bigint[])) AS s,
           (SELECT COUNT(*) FROM hook_registrations WHERE operation_seq = ANY($2::bigint[])) AS h`, [goThreads, goOps]);
      counts.threads += goThreads.length;
      counts.operations += goOps.length;
      counts.messages += Number(n!.m);
      counts.steps += Number(n!.s);
      counts.hooks += Number(n!.h);
      if (!at.dryRun) {
        await c.query('DELETE FROM submissions WHERE thread_seq = ANY($1::bigint[])', [goThreads]);
        await c.query('DELETE FROM operations WHERE seq = ANY($1::bigint[])', [goOps]);
        await c.query('DELETE FROM threads WHERE seq = ANY($1::bigint[])', [goThreads]);
      }
    }
    return seqs[seqs.length - 1]!;
  }

  /** Decisions older than the log's maxAge or beyond its newest maxEntries (listDecisions order), `batch` per transaction. */
  private async decisions(policy: RetentionPolicy, now: number, dryRun: boolean, batch: number, counts: PruneCounts, stopped: () => boolean): Promise<void> {
    const cutoff = decisionCutoff(policy, now);
    const maxEntries = policy.decisionLog?.maxEntries;
    if (stopped() || (cutoff === undefined && maxEntries === undefined)) return;
    const old = `(created_at < $1::text OR seq IN (SELECT seq FROM decisions ORDER BY created_at DESC, seq DESC OFFSET $2::bigint))`;
    // An absent limit matches nothing: no cutoff compares below every time; no maxEntries offsets past every row.
    const params = [cutoff ?? '', maxEntries ?? Number.MAX_SAFE_INTEGER];
    if (dryRun) {
      const { rows } = await this.host.db.query<{ n: string }>(`SELECT COUNT(*) AS n FROM decisions WHERE ${old}`, params);
      counts.decisions += Number(rows[0]!.n);
      return;
    }
    for (let first = true; ; first = false) {
      if (!first) {
        await yieldToEventLoop();
        if (stopped()) return;
      }
      const removed = await this.host.exclusive(() => this.host.db.query(
        `DELETE FROM decisions WHERE seq IN (SELECT seq FROM decisions WHERE ${old} ORDER BY created_at, seq LIMIT $3)`, [...params, batch]));
      counts.decisions += removed.rowCount ?? 0;
      if ((removed.rowCount ?? 0) < batch) return;
    }
  }
}
