import type { AgentDefinition } from '../agent-definition.js';
import type { AgentHook } from '../hooks/hook-types.js';
import type { ToolRunContext } from '../hooks/tool-call-context.js';
import type { MessageRecord, OperationRecord } from '../store.js';

/** An operation loaded in this process: its persisted record plus what only lives in memory. */
export interface RunningOperation {
  record: OperationRecord;
  agent: AgentDefinition;
  /** Active (not compacted) messages, summaries first, in model order. */
  messages: MessageRecord[];
  abort: AbortController;
  /** Snapshots of the caller's hooks (sub-agents inherit them); empty when loaded from the store. */
  hooks: readonly AgentHook[];
  run: ToolRunContext;
  /** The loop running in this process, if any. */
  loop?: Promise<void>;
  loopActive?: boolean;
  /** Serializes deferred completions of this operation. */
  completions?: Promise<void>;
  /** Loaded from the store (after a restart): handlers are gone, persisted webhook hooks are read on use. */
  fromStore?: boolean;
  /** A human decision is being applied (a concurrent one is refused). */
  deciding?: boolean;
}

/** Orders active messages for the model: summaries first, then the rest by sequence. */
export function activeMessages(all: readonly MessageRecord[]): MessageRecord[] {
  const live = all.filter((m) => m.compactedInto === undefined);
  return [...live.filter((m) => m.role === 'summary'), ...live.filter((m) => m.role !== 'summary')];
}
