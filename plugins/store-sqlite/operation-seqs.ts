/**
 * A bounded operation id -> `operations.seq` map, so a step commit finds the
 * operation's log range without the id index: once `limit` entries are held,
 * adding one forgets the oldest. Only a hint: the commit checks the id of the
 * row it names inside its transaction and looks the seq up again when they
 * differ. Synchronous, never throws.
 */
export class OperationSeqs {
  private readonly seqs = new Map<string, number>();

  constructor(private readonly limit = 10_000) {}

  get(operationId: string): number | undefined {
    return this.seqs.get(operationId);
  }

  remember(operationId: string, seq: number): number {
    if (this.seqs.size >= this.limit && !this.seqs.has(operationId)) {
      const oldest = this.seqs.keys().next();
      if (!oldest.done) this.seqs.delete(oldest.value);
    }
    this.seqs.set(operationId, seq);
    return seq;
  }

  forget(operationId: string): void {
    this.seqs.delete(operationId);
  }

  clear(): void {
    this.seqs.clear();
  }
}
