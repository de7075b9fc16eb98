import { AGENT_IDENTITY_PATTERN, type Agent, type StartAgentEntry } from './agent.js';
import type { AgentDirectory } from './agent-directory.js';
import { InvalidRequestError } from './agent-errors.js';
import { resolveDurability } from './durability.js';

/**
 * The directory of `start({ agents })`: each entry's identity is its `name`,
 * else the agent's `agentName` static, else the function's own name; never
 * its position. Throws InvalidRequestError (naming `agents[i]`) for an empty
 * list, an entry that is not an agent, an anonymous agent with no name, an
 * identity outside AGENT_IDENTITY_PATTERN, two entries with one identity,
 * one function under two identities, or an invalid `durability` static.
 * (The render engine's `createAgentDirectory` replaces this once merged.)
 */
export function registerAgents(entries: readonly StartAgentEntry[]): AgentDirectory {
  if (!Array.isArray(entries) || entries.length === 0) throw new InvalidRequestError('start({ agents }) needs a non-empty array of agents', { field: 'agents' });
  const byIdentity = new Map<string, Agent>();
  const byFunction = new Map<Agent, string>();
  entries.forEach((entry, i) => {
    const where = `agents[${i}]`;
    const { agent, name } = typeof entry === 'function' ? { agent: entry, name: undefined } : (entry ?? ({} as { agent?: Agent; name?: string }));
    if (typeof agent !== 'function') throw new InvalidRequestError(`${where} must be an agent function or { agent, name }`, { field: where });
    if (name !== undefined && typeof name !== 'string') throw new InvalidRequestError(`${where}.name must be a string`, { field: `${where}.name` });
    const identity = name ?? agent.agentName ?? (agent.name || undefined);
    if (identity === undefined) throw new InvalidRequestError(`${where} is an anonymous function with no agentName static: give it { agent, name }`, { field: where });
    if (typeof identity !== 'string' || !AGENT_IDENTITY_PATTERN.test(identity)) {
      throw new InvalidRequestError(`${where}: the identity ${JSON.stringify(identity)} does not match ${String(AGENT_IDENTITY_PATTERN)} (PascalCase or kebab-case, no ':', no leading digit)`, { field: where });
    }
    if (byIdentity.has(identity)) throw new InvalidRequestError(`${where}: two agents have the identity '${identity}'`, { field: where });
    const earlier = byFunction.get(agent);
    if (earlier !== undefined) throw new InvalidRequestError(`${where}: this function is registered already, as '${earlier}'; one function has one identity`, { field: where });
    resolveDurability(agent, identity);
    byIdentity.set(identity, agent);
    byFunction.set(agent, identity);
  });
  const identities = Object.freeze([...byIdentity.keys()]);
  return Object.freeze({
    byIdentity: (identity: string) => byIdentity.get(identity),
    identityOf: (agent: Agent) => byFunction.get(agent),
    identities: () => identities,
  });
}
