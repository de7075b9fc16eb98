import type Database from 'better-sqlite3';
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

/** Log keys of operation `seq` are seq * 2^24 + 1, + 2... (migration 4). */
const LOG_KEYS_PER_OPERATION = 16_777_216;
/** Rows of the operations table read per look-up chunk when counting each agent's operations. */
const SCAN_CHUNK = 5_000;
/** Free pages handed back to the file system per incremental_vacuum call. */
const VACUUM_PAGES = 2_048;
const UNFINISHED_SQL = `(${[...UNFINISHED_STATUSES].map((s) => `'${s}'`).join(', ')})`;

interface ThreadOperationRow {
  seq: number;
  id: string;
  agent_id: string;
  status: OperationStatus;
  updated_at: string;
  parent_operation_id: string | null;
}

type Statements = ReturnType<typeof prepare>;

function prepare(db: Database.Database) {
  return {
    newestOperationsBefore: db.prepare<[number, number], { seq: number; agent_id: string }>(
      'SELECT seq, agent_id FROM operations WHERE seq < ? ORDER BY seq DESC LIMIT ?',
    ),
    maxOperationSeq: db.prepare<[], number | null>('SELECT MAX(seq) FROM operations').pluck(),
    operationsBetween: db.prepare<[number, number, number], { seq: number; thread_seq: number; status: OperationStatus }>(
      'SELECT seq, thread_seq, status FROM operations WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?',
    ),
    threadOperations: db.prepare<[number], ThreadOperationRow>(
      'SELECT seq, id, agent_id, status, updated_at, parent_operation_id FROM operations WHERE thread_seq = ?',
    ),
    operationStatus: db.prepare<[string], OperationStatus>('SELECT status FROM operations WHERE id = ?').pluck(),
    unfinishedChild: db.prepare<[string], number>(
      `SELECT 1 FROM operations WHERE parent_operation_id = ? AND status IN ${UNFINISHED_SQL} LIMIT 1`,
    ).pluck(),
    logEntries: db.prepare<[number, number], { entry: 'message' | 'step'; n: number }>(
      'SELECT entry, COUNT(*) AS n FROM operation_log WHERE key > ? AND key < ? GROUP BY entry',
    ),
    hookCount: db.prepare<[string], number>('SELECT COUNT(*) FROM hook_registrations WHERE operation_id = ?').pluck(),
    deleteLog: db.prepare<[number, number]>('DELETE FROM operation_log WHERE key > ? AND key < ?'),
    deleteHooks: db.prepare<[string]>('DELETE FROM hook_registrations WHERE operation_id = ?'),
    deleteOperation: db.prepare<[number]>('DELETE FROM operations WHERE seq = ?'),
    deleteThread: db.prepare<[number]>('DELETE FROM threads WHERE seq = ?'),
    // Document 001: a thread with an admitted delivery that has not settled stays; its settled ones go with it.
    unsettledSubmission: db.prepare<[number], number>(
      "SELECT 1 FROM submissions WHERE thread_seq = ? AND status IN ('queued', 'running', 'joined') LIMIT 1",
    ).pluck(),
    deleteSubmissions: db.prepare<[number]>('DELETE FROM submissions WHERE thread_seq = ?'),
    // Durable tool steps go with their operation (by the prefix of tool_steps_by_call, schema 10).
    deleteToolSteps: db.prepare<[number]>('DELETE FROM tool_steps WHERE operation_seq = ?'),
    maxThreadSeq: db.prepare<[], number | null>('SELECT MAX(seq) FROM threads').pluck(),
    emptyThreads: db.prepare<[number, number], { seq: number; agent_id: string; updated_at: string }>(
      `SELECT t.seq, t.agent_id, t.updated_at FROM threads t WHERE t.seq > ? AND t.seq <= ?
       AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.thread_seq = t.seq)
       AND NOT EXISTS (SELECT 1 FROM submissions s WHERE s.thread_seq = t.seq AND s.status IN ('queued', 'running', 'joined'))`,
    ),
    // The subquery is not correlated: SQLite reads operations once into a temporary index (there is none on agent_seq).
    unusedAgentDefinitions: db.prepare(
      'DELETE FROM agent_definitions WHERE seq NOT IN (SELECT agent_seq FROM operations WHERE agent_seq IS NOT NULL)',
    ),
    // The (N+1)-th newest decision, in listDecisions order: it and everything older is beyond maxEntries.
    decisionAtOffset: db.prepare<[number], { created_at: string; seq: number }>(
      'SELECT created_at, seq FROM decisions ORDER BY created_at DESC, seq DESC LIMIT 1 OFFSET ?',
    ),
    // Both limits cut off a prefix of the (created_at, seq) order, so the oldest matching rows are a prefix too.
    oldDecisions: db.prepare<{ cutoff: string | null; c: string | null; s: number; limit: number }, number>(
      `SELECT seq FROM decisions WHERE created_at < @cutoff OR created_at < @c OR (created_at = @c AND seq <= @s)
       ORDER BY created_at, seq LIMIT @limit`,
    ).pluck(),
    countOldDecisions: db.prepare<{ cutoff: string | null; c: string | null; s: number }, number>(
      'SELECT COUNT(*) FROM decisions WHERE created_at < @cutoff OR created_at < @c OR (created_at = @c AND seq <= @s)',
    ).pluck(),
    deleteDecision: db.prepare<[number]>('DELETE FROM decisions WHERE seq = ?'),
  };
}

/** What the pruner needs from its store: each batch run through the store's guard, commits reported. */
export interface PrunerHost {
  /** Runs `fn` on the open connection (mapping SQLite errors); undefined once the store is closed. */
  batch<T>(fn: (db: Database.Database) => T): T | undefined;
  /** A write transaction committed (the background checkpointer has pages to copy). */
  committed(): void;
  /** Operations removed: forget their remembered seqs. */
  forget(operationIds: readonly string[]): void;
}

/**
 * Store-sqlite's `prune`: the judgement of kernel/retention.ts in SQL, one
 * short IMMEDIATE transaction per batch of `batchSize` operations (oldest
 * first), the event loop turned between batches, so a pass over a large
 * backlog never holds the write lock or the thread for long. Each batch
 * reads what it judges inside its own transaction, so an operation that
 * started, parked or finished meanwhile is seen as it is now.
 *
 * Rows are deleted by key (an operation's log by its key range), with
 * foreign keys off for the batch: operation_log has no index on its
 * operation column (migration 4 keeps every step commit to one b-tree), so
 * an ON DELETE CASCADE would scan the whole log for every operation removed.
 * Freed pages go back to the file system with incremental vacuum (the file
 * has auto_vacuum = INCREMENTAL since migration 7), a slice at a time.
 */
export class SqlitePruner {
  private statements?: Statements;

  constructor(private readonly host: PrunerHost) {}

  async run(policy: RetentionPolicy, options: PruneOptions = {}): Promise<PruneCounts> {
    const now = options.now ?? Date.now();
    const batch = Math.max(1, options.batchSize ?? DEFAULT_PRUNE_BATCH);
    const dryRun = options.dryRun === true;
    const counts = emptyPruneCounts();
    const stopped = () => options.signal?.aborted === true;

    const thresholds = await this.countThresholds(policy);
    if (thresholds === undefined) return counts;
    // The pass looks at the operations that exist when it starts: on a busy store each batch would otherwise find
    // the operation started meanwhile and the pass would never end (a new operation is not expired anyway).
    const end = this.host.batch((db) => this.s(db).maxOperationSeq.get()) ?? 0;
    // Threads judged in this pass that must stay (or, on a dry run, were counted): each is judged once.
    const judged = new Set<number>();
    let cursor = 0;
    for (let first = true; !stopped(); first = false) {
      if (!first) await yieldToEventLoop();
      const next = this.host.batch((db) => this.withoutForeignKeys(db, () => db.transaction(() => this.pruneBatch(policy, thresholds, judged, cursor, end, batch, now, dryRun, counts)).immediate()));
      if (next === undefined) break;
      if (!dryRun) this.host.committed();
      if (next === null) break;
      cursor = next;
    }
    if (!stopped()) await this.pruneEmptyThreads(policy, batch, now, dryRun, counts, stopped);
    if (!stopped()) await this.pruneDecisions(policy, batch, now, dryRun, counts, stopped);
    if (!dryRun && counts.operations > 0 && !stopped()) {
      // Foreign keys off: each deleted definition would otherwise scan operations for rows that point at it (none do).
      this.host.batch((db) => this.withoutForeignKeys(db, () => this.s(db).unusedAgentDefinitions.run()));
      this.host.committed();
    }
    if (!dryRun && !stopped()) counts.reclaimedBytes = await this.vacuum(stopped);
    return counts;
  }

  private s(db: Database.Database): Statements {
    this.statements ??= prepare(db);
    return this.statements;
  }

  /**
   * For each agent with a count limit, the seq of its maxOperations-th newest operation: its operations with a
   * smaller seq are beyond the count. Read newest first in chunks (the event loop turns between them).
   */
  private async countThresholds(policy: RetentionPolicy): Promise<Map<string, number> | undefined> {
    const thresholds = new Map<string, number>();
    const seen = new Map<string, number>();
    let before = Number.MAX_SAFE_INTEGER;
    for (;;) {
      const rows = this.host.batch((db) => this.s(db).newestOperationsBefore.all(before, SCAN_CHUNK));
      if (rows === undefined) return undefined;
      for (const row of rows) {
        const max = limitsFor(policy, row.agent_id).maxOperations;
        if (max === undefined || thresholds.has(row.agent_id)) continue;
        const n = (seen.get(row.agent_id) ?? 0) + 1;
        seen.set(row.agent_id, n);
        if (n === max) thresholds.set(row.agent_id, row.seq);
      }
      if (rows.length < SCAN_CHUNK) return thresholds;
      before = rows[rows.length - 1]!.seq;
      await yieldToEventLoop();
    }
  }

  /** One transaction: judges the threads of the next `batch` operations after `cursor` (up to `end`). Resolves to the new cursor, or null at the end. */
  private pruneBatch(policy: RetentionPolicy, thresholds: ReadonlyMap<string, number>, judged: Set<number>, cursor: number, end: number, batch: number,
    now: number, dryRun: boolean, counts: PruneCounts): number | null {
    const s = this.statements!;
    const rows = s.operationsBetween.all(cursor, end, batch);
    if (rows.length === 0) return null;
    const newest = s.maxOperationSeq.get() ?? 0;
    for (const row of rows) {
      if (!TERMINAL_STATUSES.has(row.status) || judged.has(row.thread_seq)) continue;
      judged.add(row.thread_seq);
      if (s.unsettledSubmission.get(row.thread_seq) !== undefined) continue;
      const ops = s.threadOperations.all(row.thread_seq);
      if (!this.prunable(s, policy, thresholds, ops, newest, now)) continue;
      this.removeThread(s, row.thread_seq, ops, dryRun, counts);
    }
    return rows[rows.length - 1]!.seq;
  }

  /** The thread's operations are all terminal and expired, none is the newest, no parent or child of theirs is unfinished. */
  private prunable(s: Statements, policy: RetentionPolicy, thresholds: ReadonlyMap<string, number>, ops: ThreadOperationRow[], newest: number, now: number): boolean {
    for (const op of ops) {
      if (op.seq === newest || !TERMINAL_STATUSES.has(op.status)) return false;
      const threshold = thresholds.get(op.agent_id);
      if (!isExpired(limitsFor(policy, op.agent_id), op.updated_at, threshold !== undefined && op.seq < threshold, now)) return false;
    }
    for (const op of ops) {
      if (op.parent_operation_id !== null) {
        const parent = s.operationStatus.get(op.parent_operation_id);
        if (parent !== undefined && UNFINISHED_STATUSES.has(parent)) return false;
      }
      if (s.unfinishedChild.get(op.id) !== undefined) return false;
    }
    return true;
  }

  private removeThread(s: Statements, threadSeq: number, ops: ThreadOperationRow[], dryRun: boolean, counts: PruneCounts): void {
    counts.threads += 1;
    counts.operations += ops.length;
    for (const op of ops) {
      const from = op.seq * LOG_KEYS_PER_OPERATION;
      const to = from + LOG_KEYS_PER_OPERATION;
      for (const { entry, n } of s.logEntries.all(from, to)) {
        if (entry === 'message') counts.messages += n;
        else counts.steps += n;
      }
      counts.hooks += s.hookCount.get(op.id) ?? 0;
      if (dryRun) continue;
      s.deleteLog.run(from, to);
      s.deleteHooks.run(op.id);
      s.deleteToolSteps.run(op.seq);
      s.deleteOperation.run(op.seq);
    }
    if (dryRun) return;
    s.deleteSubmissions.run(threadSeq);
    s.deleteThread.run(threadSeq);
    this.host.forget(ops.map((op) => op.id));
  }

  /** Threads that never had an operation, older than their agent's maxAge; looked at in windows of thread seqs. */
  private async pruneEmptyThreads(policy: RetentionPolicy, batch: number, now: number, dryRun: boolean, counts: PruneCounts, stopped: () => boolean): Promise<void> {
    const ages = [policy.maxAgeMs, ...Object.values(policy.agents ?? {}).map((l) => l.maxAgeMs)];
    if (ages.every((a) => a === undefined)) return;
    const last = this.host.batch((db) => this.s(db).maxThreadSeq.get()) ?? 0;
    const window = batch * 5;
    for (let from = 0; from < last && !stopped(); from += window) {
      if (from > 0) await yieldToEventLoop();
      const done = this.host.batch((db) => db.transaction(() => {
        const s = this.s(db);
        for (const t of s.emptyThreads.all(from, from + window)) {
          const age = limitsFor(policy, t.agent_id).maxAgeMs;
          if (age === undefined || !(Date.parse(t.updated_at) < now - age)) continue;
          counts.threads += 1;
          if (dryRun) continue;
          s.deleteSubmissions.run(t.seq);
          s.deleteThread.run(t.seq);
        }
        return true;
      }).immediate());
      if (done === undefined) return;
      if (!dryRun) this.host.committed();
    }
  }

  /** Decisions older than the log's maxAge and beyond its newest maxEntries, oldest first, `batch` per transaction. */
  private async pruneDecisions(policy: RetentionPolicy, batch: number, now: number, dryRun: boolean, counts: PruneCounts, stopped: () => boolean): Promise<void> {
    const cutoff = decisionCutoff(policy, now) ?? null;
    const maxEntries = policy.decisionLog?.maxEntries;
    if (cutoff === null && maxEntries === undefined) return;
    const at = maxEntries === undefined ? undefined : this.host.batch((db) => this.s(db).decisionAtOffset.get(maxEntries));
    const bounds = { cutoff, c: at?.created_at ?? null, s: at?.seq ?? 0 };
    if (dryRun) {
      counts.decisions += this.host.batch((db) => this.s(db).countOldDecisions.get(bounds)) ?? 0;
      return;
    }
    for (let first = true; !stopped(); first = false) {
      if (!first) await yieldToEventLoop();
      const removed = this.host.batch((db) => db.transaction(() => {
        const s = this.s(db);
        const seqs = s.oldDecisions.all({ ...bounds, limit: batch });
        for (const seq of seqs) s.deleteDecision.run(seq); // decision_policies go by ON DELETE CASCADE (indexed)
        return seqs.length;
      }).immediate());
      if (removed === undefined || removed === 0) return;
      counts.decisions += removed;
      this.host.committed();
      if (removed < batch) return;
    }
  }

  /** Gives free pages back to the file system, VACUUM_PAGES per call; resolves to the bytes the file shrank by. */
  private async vacuum(stopped: () => boolean): Promise<number> {
    const pageSize = this.host.batch((db) => db.pragma('page_size', { simple: true }) as number) ?? 0;
    if (this.host.batch((db) => db.pragma('auto_vacuum', { simple: true }) as number) !== 2) return 0;
    let reclaimed = 0;
    while (!stopped()) {
      const freed = this.host.batch((db) => {
        const before = db.pragma('page_count', { simple: true }) as number;
        if ((db.pragma('freelist_count', { simple: true }) as number) === 0) return 0;
        db.pragma(`incremental_vacuum(${VACUUM_PAGES})`);
        return before - (db.pragma('page_count', { simple: true }) as number);
      });
      if (!freed) break;
      reclaimed += freed * pageSize;
      this.host.committed();
      await yieldToEventLoop();
    }
    return reclaimed;
  }

  /**
   * Runs `fn` with foreign keys off (the pragma is a no-op inside a transaction, so it is set around it).
   * The store's one connection runs nothing else meanwhile: better-sqlite3 is synchronous.
   */
  private withoutForeignKeys<T>(db: Database.Database, fn: () => T): T {
    this.s(db);
    db.pragma('foreign_keys = OFF');
    try {
      return fn();
    } finally {
      db.pragma('foreign_keys = ON');
    }
  }
}
