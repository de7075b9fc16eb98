import type { OperationLease, OperationRecord } from '../store.js';

/**
 * Owns running: an operation's steps run only in the process that holds its
 * lease in the store. The runtime claims an operation before it runs or
 * changes it, the driver keeps the lease renewed while the loop runs, and the
 * runtime releases it when the operation parks or finishes and at shutdown. A
 * process that dies leaves its lease to expire; then another process (its
 * `hookgate resume`) can claim the operation and continue it from its last
 * committed step. The in-process driver (in-process-driver.ts) is the one
 * implementation now; a queue-backed one follows in the scale-out issue.
 */
export interface OperationDriver {
  /** Who this driver claims as: a per-process id. */
  readonly owner: string;
  /** How long a claim lasts without renewal, in milliseconds (`runtime.leaseMs`). */
  readonly leaseMs: number;
  /**
   * Claims the operation for this process and resolves the record as stored
   * at the claim. OPERATION_LEASED (naming the holder and the expiry) while
   * another process holds an unexpired lease, unless `force`, which takes that
   * lease over (only when the holder has not renewed it meanwhile).
   */
  claim(operationId: string, options?: { force?: boolean }): Promise<OperationRecord>;
  /**
   * An abort's fence: claims the operation even while another process holds
   * an unexpired lease (only if that holder has not renewed meanwhile;
   * OPERATION_LEASED otherwise, so the caller tries again). From then on the
   * holder's renewals and `confirm` fail: it starts no tool and stops at its
   * next turn boundary. Release it once the abort is committed.
   */
  seize(operationId: string): Promise<OperationRecord>;
  /** What `createOperation({ lease })` takes so a new operation is created already claimed by this process; `adopt` it after. */
  leaseRequest(): { owner: string; ttlMs: number };
  /** Records a lease this process got outside `claim` (a new operation created with `leaseRequest()`). */
  adopt(operationId: string): void;
  /** Whether this process holds (and renews) the operation's lease now. */
  holds(operationId: string): boolean;
  /**
   * Renews the claimed lease every fraction of leaseMs until `release`;
   * `onLost` runs once when a renewal finds the lease taken by another owner.
   */
  keep(operationId: string, onLost: (holder: OperationLease | undefined) => void): void;
  /**
   * Renews the lease now and resolves whether this process still holds it:
   * false (and renewing stops) when another process seized or claimed it.
   * What a worker asks right before it starts a tool, so that no tool
   * starts after an abort from another process was committed.
   */
  confirm(operationId: string): Promise<boolean>;
  /** Stops renewing and drops this process's lease (idempotent; never fails the caller). */
  release(operationId: string): Promise<void>;
  /** Releases every lease this process holds. */
  shutdown(): Promise<void>;
}
