import { HookgateError } from '../errors.js';
import { STATIC_AGENT_SOURCE_ID, type AgentSource } from './agent-source.js';

const SOURCE_ID = /^[a-z0-9][a-z0-9_.-]*$/;

/**
 * The agent sources a kernel knows by id: the static source (agent files,
 * `kernel.agents.define`) and the ones plugins add (`AgentSources` token,
 * collected when the kernel starts) or code adds (`kernel.agentSources.add`,
 * at any time: an operation looks its source up when it is started or loaded,
 * and asks it before every step).
 */
export class AgentSourceRegistry {
  private readonly sources = new Map<string, AgentSource>();

  /** Adds a source; AGENT_SOURCE_INVALID for a bad shape or id, or an id already taken. */
  add(source: AgentSource, from = 'kernel.agentSources.add'): void {
    const id = (source as Partial<AgentSource> | null)?.id;
    if (source === null || typeof source !== 'object' || typeof source.resolve !== 'function' || typeof id !== 'string') {
      throw new HookgateError('AGENT_SOURCE_INVALID', `${from}: an agent source needs a string id and a resolve(ref, context) method`, { details: { from } });
    }
    if (!SOURCE_ID.test(id)) {
      throw new HookgateError('AGENT_SOURCE_INVALID', `${from}: agent source id "${id}" must be lowercase letters, digits, "-", "_" or "."`, { details: { from, source: id } });
    }
    if (this.sources.has(id)) {
      const what = id === STATIC_AGENT_SOURCE_ID ? 'is the source of agent files and kernel.agents.define agents' : 'is taken by another source';
      throw new HookgateError('AGENT_SOURCE_INVALID', `${from}: agent source id "${id}" ${what}`, { details: { from, source: id } });
    }
    this.sources.set(id, source);
  }

  /** The source with this id, or AGENT_SOURCE_NOT_FOUND listing the ones there are. */
  get(id: string): AgentSource {
    const source = this.sources.get(id);
    if (source === undefined) {
      throw new HookgateError('AGENT_SOURCE_NOT_FOUND', `no agent source has id "${id}" (have: ${this.ids().join(', ')}); add it with the AgentSources token or kernel.agentSources.add`, {
        details: { source: id },
      });
    }
    return source;
  }

  /** The source with this id, if there is one. */
  find(id: string): AgentSource | undefined {
    return this.sources.get(id);
  }

  has(id: string): boolean {
    return this.sources.has(id);
  }

  /** The ids of every source, in the order they were added. */
  ids(): string[] {
    return [...this.sources.keys()];
  }
}
