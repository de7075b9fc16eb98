import { createHash } from 'node:crypto';
import { HookgateError, isHookgateError } from '../../kernel/errors.js';
import type { Operations } from '../../kernel/operations.js';
import type { OperationRecord, Store } from '../../kernel/store.js';
import { HarnessPromptError } from './agent-errors.js';
import type { ResultTools } from './harness-result-tools.js';
import { FINISH_TOOL_NAME, GIVE_UP_TOOL_NAME } from './harness-result-tools.js';
import { HARNESS_TOOL_IDENTIFIER } from './harness-source.js';

/**
 * The agent id of a harness: stable for one tool call (`<identity>.harness.`
 * and 12 hex of a SHA-256 of the calling operation and the call id), so the
 * same tool call run again after a restart (a durable tool) opens the same
 * harness and finds the prompts it already started; `undefined` key: a
 * random one (event callbacks, whose interrupted cycle runs again with a
 * new harness).
 */
export function harnessRef(identity: string, parentOperationId: string | undefined, key: string | undefined, random: () => string): string {
  if (key === undefined || parentOperationId === undefined) return `${identity}.harness.${random()}`;
  return `${identity}.harness.${createHash('sha256').update(`${parentOperationId}\u0000${key}`).digest('hex').slice(0, 12)}`;
}

/**
 * The operation a previous run of this harness started as its `ordinal`-th
 * call (0-based, in creation order), if any: what a re-executed tool call
 * continues instead of prompting again. HarnessPromptError when that
 * operation was started for another prompt (the tool does not prompt the
 * same way on every run, so its earlier conversation cannot be continued).
 */
export async function previousCall(store: Store, parentOperationId: string | undefined, ref: string, ordinal: number, prompt: string): Promise<OperationRecord | undefined> {
  if (parentOperationId === undefined) return undefined;
  const mine = (await store.listOperations({ parentOperationId })).filter((o) => o.agentId === ref).sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  const found = mine[ordinal];
  if (found === undefined) return undefined;
  const own = await store.listMessages(found.id, { includeCompacted: true });
  if (!own.some((m) => m.role === 'user' && m.content === prompt)) {
    throw new HarnessPromptError(
      `harness call ${ordinal + 1} of this tool call was "${excerpt(own.find((m) => m.role === 'user')?.content)}" before the restart and is "${excerpt(prompt)}" now: a tool run again on recovery must prompt the same way to continue its conversation (wrap side effects and varying input in step.do)`,
      { operationId: found.id },
    );
  }
  return found;
}

/**
 * Takes over an operation a dead process left unfinished: the core's resume
 * once the dead holder's lease expired (a parked one is only waited for; a
 * live holder finishes it itself). Resolves when it runs here, is parked, or
 * ended; KERNEL_STOPPED passes through.
 */
export async function resumeOrphan(operations: Operations, store: Store, operation: OperationRecord): Promise<void> {
  if (operation.status !== 'running') return;
  for (;;) {
    try {
      await operations.resume(operation.id);
      return;
    } catch (err) {
      if (!isHookgateError(err, 'OPERATION_LEASED')) throw err;
    }
    const lease = await store.getLease(operation.id);
    await new Promise((r) => setTimeout(r, Math.min(5_000, Math.max(25, (lease?.expiresAt ?? 0) - Date.now() + 10))));
    const now = await store.getOperation(operation.id);
    if (now === undefined) throw new HookgateError('STORE_NOT_FOUND', `harness operation ${operation.id} is gone from the store`);
    if (now.status !== 'running') return;
  }
}

/** Replays into `result` the `finish` / `give_up` calls an ended operation published (its outcome lived in the dead process). */
export async function replayResultCalls(store: Store, operationId: string, result: ResultTools): Promise<void> {
  const messages = await store.listMessages(operationId, { includeCompacted: true });
  const succeeded = new Set(messages.filter((m) => m.role === 'tool' && m.toolResult?.success === true).map((m) => m.toolCallId));
  for (const m of messages) {
    for (const call of m.role === 'assistant' ? (m.toolCalls ?? []) : []) {
      if (call.identifier === HARNESS_TOOL_IDENTIFIER && (call.apiName === FINISH_TOOL_NAME || call.apiName === GIVE_UP_TOOL_NAME) && succeeded.has(call.id)) result.call(call.apiName, call.args, call.id);
    }
  }
}

function excerpt(text: string | undefined): string {
  const t = (text ?? '').replace(/\s+/g, ' ');
  return t.length > 60 ? `${t.slice(0, 60)}…` : t;
}
