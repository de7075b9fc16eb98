import { createToken } from '../../kernel/token.js';
import type { Agent } from './agent.js';

/**
 * The agents one runtime serves, by durable identity: what `start({ agents })`
 * registered. The render source looks an operation's agent up here (the
 * operation's `agentId` is the identity); `dispatch` / `init` /
 * `getAgentInstance` resolve the function value they are given.
 */
export interface AgentDirectory {
  /** The agent registered under this identity. */
  byIdentity(identity: string): Agent | undefined;
  /** The identity this function value is registered under (undefined: not registered). */
  identityOf(agent: Agent): string | undefined;
  /** Every registered identity. */
  identities(): readonly string[];
}

/** Where the agent-api plugin binds the directory of the runtime's agents. */
export const AgentDirectory = createToken<AgentDirectory>('agent-api.directory');
