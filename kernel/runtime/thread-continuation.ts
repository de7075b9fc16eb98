import { HookgateError } from '../errors.js';
import { TERMINAL_STATUSES, type Store } from '../store.js';
import { STATIC_AGENT_SOURCE_ID } from './agent-source.js';

/**
 * Checks that `threadId` can take a new operation of `agentId` (from the
 * agent source `sourceId`; an agent instance's thread only from a source
 * other than the static one) and returns
 * the turn counters its previous operation ended with: a continued thread
 * counts model turns and compactions on, so a scripted model plays one
 * script across the thread; the agent source's `sourceState` goes on with
 * them. The store checks "no unfinished operation" again in the create
 * transaction (two starts racing: one gets THREAD_BUSY).
 */
export async function threadContinuation(store: Store, threadId: string, agentId: string, sourceId: string): Promise<{ modelTurns: number; compactions: number; sourceState?: unknown }> {
  const thread = await store.getThread(threadId);
  if (!thread) throw new HookgateError('THREAD_NOT_FOUND', `no thread has id ${threadId}`, { details: { threadId } });
  if (thread.agentId !== agentId) {
    throw new HookgateError('THREAD_AGENT_MISMATCH', `thread ${threadId} belongs to agent "${thread.agentId}", not "${agentId}"; continue it with its own agent`, {
      details: { threadId, threadAgentId: thread.agentId, agentId },
    });
  }
  // An instance's thread is its history: an agent file or inline agent that shares the id must not write into it.
  if (thread.instanceId !== undefined && sourceId === STATIC_AGENT_SOURCE_ID) {
    throw new HookgateError('THREAD_AGENT_MISMATCH', `thread ${threadId} is the thread of agent instance "${thread.instanceId}"; only its agent source continues it, not an agent file or inline agent named "${agentId}"`, {
      details: { threadId, threadAgentId: thread.agentId, agentId, instanceId: thread.instanceId },
    });
  }
  const previous = (await store.listThreadOperations(threadId, { last: 1 })).at(-1);
  if (previous && !TERMINAL_STATUSES.has(previous.status)) {
    throw new HookgateError('THREAD_BUSY', `thread ${threadId} has an unfinished operation (${previous.id} is ${previous.status}); finish, decide or abort it first`, {
      details: { threadId, operationId: previous.id },
    });
  }
  const counters = { modelTurns: previous?.state.modelTurns ?? 0, compactions: previous?.state.compactions ?? 0 };
  return previous?.state.sourceState !== undefined ? { ...counters, sourceState: previous.state.sourceState } : counters;
}
