/** What a store connection remembers about an operation it wrote, so a step commit needs no look-ups. */
export interface OperationKey {
  /** `operations.seq`, the key of the operation's messages and steps. Never changes for an id. */
  readonly seq: number;
  /**
   * The highest message seq this connection stored or read, or undefined when
   * unknown. Only a hint: another connection may have appended since, which
   * the next insert notices (primary-key conflict) and corrects.
   */
  lastMessageSeq?: number;
}

/**
 * A bounded id -> {@link OperationKey} map: once `limit` entries are held,
 * adding one forgets the oldest. Synchronous, never throws. An entry must be
 * dropped ({@link forget}) whenever a transaction that used or changed it
 * fails, so a rolled-back seq is never trusted.
 */
export class OperationKeys {
  private readonly keys = new Map<string, OperationKey>();

  constructor(private readonly limit = 10_000) {}

  get(operationId: string): OperationKey | undefined {
    return this.keys.get(operationId);
  }

  remember(operationId: string, key: OperationKey): OperationKey {
    if (this.keys.size >= this.limit && !this.keys.has(operationId)) {
      const oldest = this.keys.keys().next();
      if (!oldest.done) this.keys.delete(oldest.value);
    }
    this.keys.set(operationId, key);
    return key;
  }

  forget(operationId: string): void {
    this.keys.delete(operationId);
  }

  clear(): void {
    this.keys.clear();
  }
}
