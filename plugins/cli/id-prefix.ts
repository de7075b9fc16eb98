import { HookgateError } from '../../kernel/errors.js';
import type { PendingTool } from '../../kernel/hooks/hook-types.js';
import type { OperationRecord, Store } from '../../kernel/store.js';

/** How many candidates an ambiguous prefix lists. */
const MAX_CANDIDATES = 10;

/**
 * The operation a typed id names, like git names commits: the whole id, or
 * a prefix of exactly one stored id. Throws OPERATION_NOT_FOUND (exit 2)
 * naming `where` (the store, see storeName) when no id starts with it, and
 * when several do, listing them (up to ten) so the next try can be longer.
 */
export async function resolveOperation(store: Store, typed: string, where: string): Promise<OperationRecord> {
  if (typed === '') throw new HookgateError('OPERATION_NOT_FOUND', 'expected an operation id (or a unique prefix of one), got an empty string');
  const exact = await store.getOperation(typed);
  if (exact) return exact;
  const ids = await store.findOperationIds(typed, MAX_CANDIDATES + 1);
  if (ids.length === 0) {
    throw new HookgateError('OPERATION_NOT_FOUND', `no operation has id ${typed} in ${where}`, { details: { operationId: typed } });
  }
  if (ids.length > 1) {
    throw new HookgateError('OPERATION_NOT_FOUND', `operation id prefix ${typed} is ambiguous in ${where}: it matches ${candidates(ids)}`, {
      details: { operationId: typed, candidates: ids.slice(0, MAX_CANDIDATES) },
    });
  }
  const record = await store.getOperation(ids[0]!);
  if (!record) throw new HookgateError('OPERATION_NOT_FOUND', `no operation has id ${typed} in ${where}`, { details: { operationId: typed } });
  return record;
}

/** The operation id a typed id or unique prefix names (see {@link resolveOperation}). */
export async function resolveOperationId(store: Store, typed: string, where: string): Promise<string> {
  return (await resolveOperation(store, typed, where)).id;
}

/**
 * The pending tool call a typed call id (or a unique prefix of one) names,
 * among the calls the operation waits on. Throws OPERATION_NOT_WAITING
 * (exit 2) listing the pending calls when none or several match.
 */
export function resolvePendingToolCallId(record: OperationRecord, typed: string): string {
  const pending: PendingTool[] = record.state.approval?.pendingTools ?? [];
  const listed = pending.map((t) => `${t.toolCallId} (${t.identifier}/${t.apiName})`);
  if (pending.some((t) => t.toolCallId === typed)) return typed;
  const matches = typed === '' ? [] : pending.filter((t) => t.toolCallId.startsWith(typed));
  if (matches.length === 1) return matches[0]!.toolCallId;
  const waiting = pending.length === 0 ? 'it waits on no tool call' : `it waits on ${listed.join(', ')}`;
  if (matches.length === 0) {
    throw new HookgateError('OPERATION_NOT_WAITING', `operation ${record.id} is not waiting for tool call ${typed}; ${waiting}`, { details: { operationId: record.id } });
  }
  throw new HookgateError('OPERATION_NOT_WAITING', `tool call id prefix ${typed} is ambiguous in operation ${record.id}: it matches ${candidates(matches.map((t) => t.toolCallId))}`, {
    details: { operationId: record.id },
  });
}

function candidates(ids: readonly string[]): string {
  const shown = ids.slice(0, MAX_CANDIDATES);
  return `${shown.join(', ')}${ids.length > MAX_CANDIDATES ? ' and more' : ''}`;
}
