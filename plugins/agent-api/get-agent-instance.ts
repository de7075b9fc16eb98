import type { Agent } from './agent.js';
import { checkInstanceId, identityOfAgent } from './admission.js';
import { agentThreadId } from './agent-thread-id.js';
import { currentRuntime } from './start.js';

/** An instance as `getAgentInstance()` reports it. */
export interface AgentInstanceInfo {
  id: string;
  /** The incarnation's uid, usable as a send condition. */
  uid?: string;
}

/**
 * Looks an agent instance up by id: `null` when none exists (also after a
 * rejected conditional send: nothing was stored), else its id and uid.
 * One store read. Rejects like `dispatch()` for a bad agent or id, or with
 * no runtime started.
 */
export async function getAgentInstance(agent: Agent, id: string): Promise<AgentInstanceInfo | null> {
  const runtime = currentRuntime('getAgentInstance()');
  const { identity } = identityOfAgent(runtime.directory, agent);
  const instanceId = checkInstanceId(id);
  const thread = await runtime.kernel.store.getThread(agentThreadId(identity, instanceId));
  if (!thread) return null;
  return { id: instanceId, ...(thread.uid !== undefined ? { uid: thread.uid } : {}) };
}
