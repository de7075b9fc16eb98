import type { LeaseClaim, OperationLease } from '../../kernel/store.js';
import { notFound } from './postgres-commits.js';
import type { Queryable } from './postgres-connection.js';
import { OPERATION_COLUMNS, OPERATION_FROM, toOperationRecord, type OperationRow } from './postgres-rows.js';

/*
 * Leases in store-postgres: columns of the operation row (owner, expiry in
 * epoch milliseconds), each change one conditional UPDATE, so it is atomic
 * without an explicit transaction. Leases do not change the state version.
 */

/**
 * One conditional UPDATE (free, expired or ours) returning the operation:
 * PostgreSQL re-checks the condition on the newest row version when two
 * claims race, so only one is granted. Refused: the holder read back (a
 * lease released between the two statements is claimed again).
 */
export async function claim(q: Queryable, operationId: string, owner: string, window: { now: number; expiresAt: number }): Promise<LeaseClaim> {
  for (;;) {
    const granted = await q.query<OperationRow>(
      `UPDATE operations o SET lease_owner = $2, lease_expires_at = $3 FROM threads t
       WHERE o.id = $1 AND t.seq = o.thread_seq AND (o.lease_owner IS NULL OR o.lease_expires_at <= $4 OR o.lease_owner = $2)
       RETURNING ${OPERATION_COLUMNS}`,
      [operationId, owner, window.expiresAt, window.now],
    );
    if (granted.rows[0]) return { claimed: true, operation: toOperationRecord(granted.rows[0]), lease: { owner, expiresAt: window.expiresAt } };
    const { rows } = await q.query<OperationRow & { lease_owner: string | null; lease_expires_at: string | null }>(
      `SELECT ${OPERATION_COLUMNS}, o.lease_owner, o.lease_expires_at FROM ${OPERATION_FROM} WHERE o.id = $1`, [operationId]);
    const row = rows[0];
    if (!row) throw notFound(operationId);
    if (row.lease_owner !== null && row.lease_owner !== owner && Number(row.lease_expires_at) > window.now) {
      return { claimed: false, operation: toOperationRecord(row), holder: { owner: row.lease_owner, expiresAt: Number(row.lease_expires_at) } };
    }
  }
}

/** Extends `owner`'s lease; undefined when it no longer holds one. STORE_NOT_FOUND for an unknown operation. */
export async function renew(q: Queryable, operationId: string, owner: string, expiresAt: number): Promise<OperationLease | undefined> {
  const { rowCount } = await q.query('UPDATE operations SET lease_expires_at = $1 WHERE id = $2 AND lease_owner = $3', [expiresAt, operationId, owner]);
  if (rowCount! > 0) return { owner, expiresAt };
  await assertOperation(q, operationId);
  return undefined;
}

/** Drops `owner`'s lease; true when it held one. STORE_NOT_FOUND for an unknown operation. */
export async function release(q: Queryable, operationId: string, owner: string): Promise<boolean> {
  const { rowCount } = await q.query('UPDATE operations SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_owner = $2', [operationId, owner]);
  if (rowCount! > 0) return true;
  await assertOperation(q, operationId);
  return false;
}

/** The lease held (expired or not), if any. */
export async function get(q: Queryable, operationId: string): Promise<OperationLease | undefined> {
  const { rows } = await q.query<{ lease_owner: string | null; lease_expires_at: string | null }>('SELECT lease_owner, lease_expires_at FROM operations WHERE id = $1', [operationId]);
  const row = rows[0];
  return row && row.lease_owner !== null ? { owner: row.lease_owner, expiresAt: Number(row.lease_expires_at) } : undefined;
}

async function assertOperation(q: Queryable, operationId: string): Promise<void> {
  const { rows } = await q.query('SELECT 1 FROM operations WHERE id = $1', [operationId]);
  if (rows.length === 0) throw notFound(operationId);
}
