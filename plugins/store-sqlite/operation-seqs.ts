/**
 * What a step commit needs to know about an operation's log: read inside a
 * write transaction (the probe of sqlite-store.ts), then kept up to date by
 * this connection's own commits. Valid only while the connection's
 * `PRAGMA data_version` is still `dataVersion`: SQLite changes that number
 * whenever another connection (another process, another store on the same
 * file) commits, and never for this connection's own writes, so an equal
 * number read under the write lock proves nobody else wrote meanwhile.
 */
export interface LogTail {
  /** `PRAGMA data_version` of this connection when the tail was read. */
  dataVersion: number;
  /** The operation's current state version (the row's or its newest log entry's, whichever is higher). */
  version: number;
  /** The operations row's own state version (status changes and publications write it; step-only commits do not). */
  rowVersion: number;
  /** The key the next log entry takes. */
  nextKey: number;
  /** The seq the next message takes. */
  nextMessageSeq: number;
  /** The operation's thread position base (fixed at creation). */
  positionBase: number;
}

interface Entry {
  seq: number;
  tail?: LogTail;
}

/**
 * A bounded operation id -> `operations.seq` map, so a step commit finds the
 * operation's log range without the id index, and with it the operation's
 * {@link LogTail}, so the usual commit reads nothing but `data_version`:
 * once `limit` entries are held, adding one forgets the oldest. Only a hint:
 * a commit without a valid tail checks the id of the row the seq names inside
 * its transaction and looks the seq up again when they differ. Synchronous,
 * never throws.
 */
export class OperationSeqs {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly limit = 10_000) {}

  get(operationId: string): number | undefined {
    return this.entries.get(operationId)?.seq;
  }

  /** Remembers the seq, dropping any tail held for the id (a new operation, or a seq looked up again). */
  remember(operationId: string, seq: number): number {
    if (this.entries.size >= this.limit && !this.entries.has(operationId)) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(operationId, { seq });
    return seq;
  }

  /** The operation's tail when it was read at `dataVersion` (nobody else wrote since), else undefined. */
  tail(operationId: string, dataVersion: number): LogTail | undefined {
    const tail = this.entries.get(operationId)?.tail;
    return tail !== undefined && tail.dataVersion === dataVersion ? tail : undefined;
  }

  /**
   * The operation's tail whatever `data_version` says: only for a write that
   * checks it itself (usual-step-commit.ts).
   */
  keptTail(operationId: string): LogTail | undefined {
    return this.entries.get(operationId)?.tail;
  }

  /** Keeps `tail` for a remembered operation (a no-op for one not remembered). */
  setTail(operationId: string, tail: LogTail): void {
    const entry = this.entries.get(operationId);
    if (entry) entry.tail = tail;
  }

  /** Drops the tail, keeping the seq: a write of this connection changed what the tail says. */
  dropTail(operationId: string): void {
    const entry = this.entries.get(operationId);
    if (entry) entry.tail = undefined;
  }

  forget(operationId: string): void {
    this.entries.delete(operationId);
  }

  clear(): void {
    this.entries.clear();
  }
}
