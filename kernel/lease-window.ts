import { HookgateError } from './errors.js';
import type { LeaseRequest } from './store.js';

/**
 * The clock and the new expiry of a lease request, after checking it: a
 * non-empty owner and a positive, finite ttlMs (LEASE_REQUEST_INVALID
 * otherwise, naming the field). Shared by every store so they judge a request alike.
 */
export function leaseWindow(operationId: string, request: LeaseRequest): { now: number; expiresAt: number } {
  if (typeof request.owner !== 'string' || request.owner.length === 0) {
    throw new HookgateError('LEASE_REQUEST_INVALID', `a lease on operation ${operationId} needs a non-empty owner string`, { details: { operationId } });
  }
  if (typeof request.ttlMs !== 'number' || !Number.isFinite(request.ttlMs) || request.ttlMs <= 0) {
    throw new HookgateError('LEASE_REQUEST_INVALID', `a lease on operation ${operationId} needs ttlMs, a positive number of milliseconds (got ${String(request.ttlMs)})`, {
      details: { operationId },
    });
  }
  const now = request.now ?? Date.now();
  if (!Number.isFinite(now)) throw new HookgateError('LEASE_REQUEST_INVALID', `a lease on operation ${operationId} needs now as epoch milliseconds`, { details: { operationId } });
  return { now, expiresAt: Math.ceil(now + request.ttlMs) };
}
