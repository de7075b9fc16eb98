import { isDeepStrictEqual } from 'node:util';
import type { OperationState, StepCommit, Store } from '../store.js';
import { TERMINAL_STATUSES } from '../store.js';
import type { RunningOperation } from './running-operation.js';
import { fillPlaceholder } from './tool-result-publication.js';

/** The state without its deferred calls, as JSON would store it (undefined fields dropped). */
function withoutDeferred(state: OperationState): unknown {
  const { deferredToolCallIds: _deferred, ...rest } = state;
  return JSON.parse(JSON.stringify(rest));
}

/**
 * A step commit of the process that holds the lease was refused because the
 * state version moved. The only writers that move a leased operation without
 * the lease are deferred publications (`completeToolCall` in another process
 * or connection): each fills one placeholder and drops its call from
 * `deferredToolCallIds`, nothing else. When that is all that changed (same
 * step, same state otherwise, not terminal), the step's draft is rebased on
 * it instead of being thrown away, so the step's tool never runs twice: the
 * published calls leave the draft's deferred list, a `waiting_tool` the draft
 * would park in becomes `running` when nothing is left outstanding, the
 * filled placeholders reach this process's conversation, and the commit
 * swaps on the stored version. False when anything else changed: the caller
 * then stops as a stale writer.
 */
export async function rebaseOnPublications(store: Store, op: RunningOperation, commit: StepCommit, owner: string): Promise<boolean> {
  const published = await takePublications(store, op, owner);
  if (published === undefined) return false;
  const state = commit.state;
  state.deferredToolCallIds = (state.deferredToolCallIds ?? []).filter((id) => !published.includes(id));
  if (commit.status === 'waiting_tool' && state.deferredToolCallIds.length === 0) commit.status = 'running';
  commit.expectedVersion = op.record.version;
  return true;
}

/**
 * The part of a rebase that needs no draft: when the only writes since this
 * process's copy of the leased operation are deferred publications (see
 * rebaseOnPublications), they are taken into the copy (state, status,
 * version, the filled placeholders) and their call ids returned; undefined
 * when nothing was published or anything else changed. The step loop also
 * asks this before it parks: a result published between its last commit and
 * the park resumed the operation in the store, and the lease holder is the
 * one to run it.
 */
export async function takePublications(store: Store, op: RunningOperation, owner: string): Promise<string[] | undefined> {
  const [fresh, lease] = await Promise.all([store.getOperation(op.record.id), store.getLease(op.record.id)]);
  if (!fresh || !lease || lease.owner !== owner || TERMINAL_STATUSES.has(fresh.status)) return undefined;
  const held = op.record.state;
  const before = held.deferredToolCallIds ?? [];
  const after = fresh.state.deferredToolCallIds ?? [];
  const published = before.filter((id) => !after.includes(id));
  if (published.length === 0 || after.some((id) => !before.includes(id))) return undefined;
  if (!isDeepStrictEqual(withoutDeferred(fresh.state), withoutDeferred(held))) return undefined;

  // The results as stored, into this process's copy of the conversation: read from the first placeholder on, not the whole thread.
  const placeholders = op.messages.filter((m) => m.role === 'tool' && m.toolCallId !== undefined && published.includes(m.toolCallId));
  if (placeholders.length > 0) {
    const fromPosition = Math.min(...placeholders.map((m) => m.position));
    const stored = await store.listThreadMessages(op.record.threadId, { fromPosition });
    for (const placeholder of placeholders) {
      const filled = stored.find((m) => m.id === placeholder.id);
      if (filled?.toolResult) fillPlaceholder(op, placeholder.toolCallId!, filled.toolResult);
    }
  }
  op.record.state = { ...held, deferredToolCallIds: after };
  op.record.status = fresh.status;
  op.record.version = fresh.version;
  return published;
}
