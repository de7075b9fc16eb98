import { HookgateError } from '../errors.js';
import { parseAgentDefinition, type AgentDefinition } from '../agent-definition.js';

/** The agents a kernel knows by id (agent files loaded by the CLI, or defined in code). */
export class AgentRegistry {
  private readonly agents = new Map<string, AgentDefinition>();

  /** Validates and adds (or replaces) an agent. */
  define(raw: unknown, source = 'agent'): AgentDefinition {
    const agent = parseAgentDefinition(raw, source);
    this.agents.set(agent.id, agent);
    return agent;
  }

  get(id: string): AgentDefinition {
    const agent = this.agents.get(id);
    if (!agent) throw new HookgateError('AGENT_NOT_FOUND', `no agent has id "${id}"; define it first (kernel.agents.define or an agent file)`, { details: { agentId: id } });
    return agent;
  }

  has(id: string): boolean {
    return this.agents.has(id);
  }

  list(): AgentDefinition[] {
    return [...this.agents.values()];
  }
}
