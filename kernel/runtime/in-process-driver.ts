import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { HookgateError, errorMessage } from '../errors.js';
import type { Logger } from '../logger.js';
import type { OperationLease, OperationRecord, Store } from '../store.js';
import type { OperationDriver } from './operation-driver.js';

/** `runtime.leaseMs` when the config names none. */
export const DEFAULT_LEASE_MS = 30_000;

/** Renewals per lease period: a lease is renewed after a third of it, so two renewals may fail before it expires. */
const RENEWALS_PER_LEASE = 3;

/** A per-process owner id: readable (host and pid) and unique (a random suffix, since pids are reused). */
export function processOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** The driver of one process: leases in the store, renewed by a timer that does not keep the process alive. */
export class InProcessDriver implements OperationDriver {
  readonly owner: string;
  readonly leaseMs: number;
  private readonly held = new Map<string, { timer?: NodeJS.Timeout }>();

  constructor(private readonly store: Store, private readonly logger: Logger, options: { owner?: string; leaseMs?: number } = {}) {
    this.owner = options.owner ?? processOwnerId();
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  async claim(operationId: string, options: { force?: boolean } = {}): Promise<OperationRecord> {
    return this.claimAs(operationId, options.force === true ? 'force' : 'plain');
  }

  seize(operationId: string): Promise<OperationRecord> {
    return this.claimAs(operationId, 'abort');
  }

  async confirm(operationId: string): Promise<boolean> {
    if (!this.held.has(operationId)) return false;
    const lease = await this.store.renewLease(operationId, { owner: this.owner, ttlMs: this.leaseMs });
    if (lease === undefined) this.stop(operationId);
    return lease !== undefined;
  }

  private async claimAs(operationId: string, how: 'plain' | 'force' | 'abort'): Promise<OperationRecord> {
    const claim = await this.store.claimOperation(operationId, { owner: this.owner, ttlMs: this.leaseMs });
    if (claim.claimed) {
      if (!this.held.has(operationId)) this.held.set(operationId, {});
      return claim.operation;
    }
    if (how !== 'plain') {
      // Judged at the holder's own expiry, the conditional claim succeeds only while the holder has not renewed meanwhile.
      const now = Date.now();
      const forced = await this.store.claimOperation(operationId, {
        owner: this.owner,
        ttlMs: Math.max(1, now + this.leaseMs - claim.holder.expiresAt),
        now: claim.holder.expiresAt,
      });
      if (forced.claimed) {
        if (how === 'force') this.logger.warn('took over an unexpired lease (--force)', { operationId, previousOwner: claim.holder.owner });
        else this.logger.info('took the lease of a running operation to abort it', { operationId, previousOwner: claim.holder.owner });
        if (!this.held.has(operationId)) this.held.set(operationId, {});
        return forced.operation;
      }
    }
    throw leasedError(operationId, claim.holder);
  }

  leaseRequest(): { owner: string; ttlMs: number } {
    return { owner: this.owner, ttlMs: this.leaseMs };
  }

  adopt(operationId: string): void {
    if (!this.held.has(operationId)) this.held.set(operationId, {});
  }

  holds(operationId: string): boolean {
    return this.held.has(operationId);
  }

  keep(operationId: string, onLost: (holder: OperationLease | undefined) => void): void {
    const entry = this.held.get(operationId);
    if (!entry || entry.timer) return;
    const every = Math.max(10, Math.floor(this.leaseMs / RENEWALS_PER_LEASE));
    entry.timer = setInterval(() => {
      void this.store.renewLease(operationId, { owner: this.owner, ttlMs: this.leaseMs }).then(
        async (lease) => {
          if (lease || this.held.get(operationId) !== entry) return;
          this.stop(operationId);
          onLost(await this.store.getLease(operationId).catch(() => undefined));
        },
        (err: unknown) => this.logger.warn('could not renew an operation lease', { operationId, error: errorMessage(err) }),
      );
    }, every);
    entry.timer.unref();
  }

  async release(operationId: string): Promise<void> {
    if (!this.held.has(operationId)) return;
    this.stop(operationId);
    await this.store.releaseLease(operationId, this.owner).catch((err: unknown) =>
      this.logger.warn('could not release an operation lease; it expires on its own', { operationId, error: errorMessage(err) }),
    );
  }

  async shutdown(): Promise<void> {
    await Promise.all([...this.held.keys()].map((id) => this.release(id)));
  }

  private stop(operationId: string): void {
    const entry = this.held.get(operationId);
    if (entry?.timer) clearInterval(entry.timer);
    this.held.delete(operationId);
  }
}

/** OPERATION_LEASED: who holds the operation and until when. */
export function leasedError(operationId: string, holder: OperationLease): HookgateError {
  const until = new Date(holder.expiresAt).toISOString();
  return new HookgateError(
    'OPERATION_LEASED',
    `operation ${operationId} is being run by another process (${holder.owner}, lease until ${until}); ` +
      'wait until it parks or finishes, or until its lease expires if that process is gone (hookgate resume --force takes it over before that)',
    { details: { operationId, owner: holder.owner, expiresAt: until } },
  );
}
