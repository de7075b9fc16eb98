import { createHash } from 'node:crypto';
import { deepFreeze, isDeepFrozen } from '../../kernel/agent-definition.js';

/** An agent definition as `agent_definitions` stores it: its JSON text, the text's sha256 and the value read back. */
export interface AgentText {
  text: string;
  digest: string;
  /** What a read of the stored text returns: shared and frozen for a deep-frozen definition, else a fresh parse. */
  readBack(): unknown;
}

/**
 * The stored form of the agent definitions `createOperation` receives,
 * worked out once per deep-frozen definition (the runtime's are: it starts
 * every operation of an agent with the same frozen object), so an operation
 * does not serialize, hash and parse kilobytes of definition again. A
 * definition that is not deep-frozen may change between operations and is
 * serialized every time. Synchronous; throws what JSON.stringify throws.
 */
export class AgentTexts {
  private readonly frozen = new WeakMap<object, AgentText>();

  of(agent: unknown): AgentText {
    const shareable = agent !== null && typeof agent === 'object' && isDeepFrozen(agent);
    if (shareable) {
      const known = this.frozen.get(agent);
      if (known) return known;
    }
    const text = JSON.stringify(agent ?? null);
    const digest = createHash('sha256').update(text).digest('hex');
    if (!shareable) return { text, digest, readBack: () => JSON.parse(text) as unknown };
    const shared = deepFreeze(JSON.parse(text) as unknown);
    const entry: AgentText = { text, digest, readBack: () => shared };
    this.frozen.set(agent, entry);
    return entry;
  }
}
