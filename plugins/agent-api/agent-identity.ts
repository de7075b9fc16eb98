import { AGENT_IDENTITY_PATTERN, DEFAULT_DURABILITY, type Agent, type DurabilityConfig, type StartAgentEntry } from './agent.js';
import { AgentDirectory } from './agent-directory.js';
import { InvalidRequestError } from './agent-errors.js';

/**
 * An agent's durable identity (document 001 "The 'use agent' directive"):
 * `name` (a `start()` entry's override), else the `agentName` static, else
 * the function's own name. It must match AGENT_IDENTITY_PATTERN.
 * Synchronous; InvalidRequestError when `agent` is not a function, the
 * identity is not valid, or there is none (an anonymous function).
 */
export function resolveAgentIdentity(agent: Agent, name?: string): string {
  if (typeof agent !== 'function') throw new InvalidRequestError(`an agent is a function; got ${describe(agent)}`, { agent: describe(agent) });
  const statics = agent as Partial<Agent>;
  const [identity, from] =
    name !== undefined ? [name, 'the entry name'] : statics.agentName !== undefined ? [statics.agentName, 'the agentName static'] : [agent.name, 'the function name'];
  if (typeof identity !== 'string') throw new InvalidRequestError(`${from} of an agent must be a string; got ${describe(identity)}`, { from });
  if (identity === '') {
    throw new InvalidRequestError('an anonymous agent function has no identity: give it a name, an agentName static, or a start() entry { agent, name }', { from });
  }
  if (!AGENT_IDENTITY_PATTERN.test(identity)) {
    throw new InvalidRequestError(
      `agent identity "${printable(identity)}" (${from}) is not valid: a PascalCase name or a kebab-case override (letters and digits, words joined by "-", no leading digit, no ":")`,
      { identity: printable(identity), from },
    );
  }
  return identity;
}

/**
 * Checks an agent's statics (document 001 "Agent statics",
 * "DurabilityConfig") and returns its durability with the defaults filled
 * in: `durability` an object of positive integers `maxAttempts` and
 * `timeoutMs` (unknown fields throw), `initialData` a valibot schema.
 * Synchronous; InvalidRequestError naming the agent and the static.
 */
export function validateAgentStatics(agent: Agent, identity: string): Required<DurabilityConfig> {
  const statics = agent as Partial<Agent>;
  const schema: unknown = statics.initialData;
  if (schema !== undefined && !isValibotSchema(schema)) {
    throw new InvalidRequestError(`agent "${identity}": the initialData static must be a valibot schema; got ${describe(schema)}`, { agent: identity, static: 'initialData' });
  }
  const durability: unknown = statics.durability;
  if (durability === undefined) return DEFAULT_DURABILITY;
  if (durability === null || typeof durability !== 'object' || Array.isArray(durability)) {
    throw new InvalidRequestError(`agent "${identity}": the durability static must be an object; got ${describe(durability)}`, { agent: identity, static: 'durability' });
  }
  const fields = durability as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (key !== 'maxAttempts' && key !== 'timeoutMs') {
      throw new InvalidRequestError(`agent "${identity}": durability has an unknown field "${printable(key)}" (known: maxAttempts, timeoutMs)`, { agent: identity, static: 'durability', field: printable(key) });
    }
  }
  const resolved = { ...DEFAULT_DURABILITY };
  for (const key of ['maxAttempts', 'timeoutMs'] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new InvalidRequestError(`agent "${identity}": durability.${key} must be a positive integer; got ${describe(value)}`, { agent: identity, static: 'durability', field: key });
    }
    resolved[key] = value;
  }
  return Object.freeze(resolved);
}

/**
 * The directory of a runtime's agents from `start({ agents })` entries:
 * each identity resolved (never by position) and its statics checked.
 * InvalidRequestError for an empty list, a bad entry, two entries with one
 * identity, or one function under two identities. Synchronous.
 */
export function createAgentDirectory(entries: readonly StartAgentEntry[]): AgentDirectory {
  if (!Array.isArray(entries) || entries.length === 0) throw new InvalidRequestError('agents must be a non-empty list of agent functions or { agent, name } entries', {});
  const byIdentity = new Map<string, Agent>();
  const identityOf = new Map<Agent, string>();
  entries.forEach((entry, index) => {
    const { agent, name } = entryParts(entry, index);
    const identity = resolveAgentIdentity(agent, name);
    validateAgentStatics(agent, identity);
    if (byIdentity.has(identity)) {
      throw new InvalidRequestError(`agents[${index}]: two agents have the identity "${identity}"`, { index, identity });
    }
    const earlier = identityOf.get(agent);
    if (earlier !== undefined) {
      throw new InvalidRequestError(`agents[${index}]: the same agent function is registered as "${earlier}" and "${identity}"`, { index, identity, earlier });
    }
    byIdentity.set(identity, agent);
    identityOf.set(agent, identity);
  });
  const identities = Object.freeze([...byIdentity.keys()]);
  return Object.freeze({
    byIdentity: (identity: string) => byIdentity.get(identity),
    identityOf: (agent: Agent) => identityOf.get(agent),
    identities: () => identities,
  });
}

function entryParts(entry: StartAgentEntry, index: number): { agent: Agent; name?: string } {
  if (typeof entry === 'function') return { agent: entry };
  if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
    const { agent, name, ...rest } = entry as { agent?: unknown; name?: unknown };
    const unknown = Object.keys(rest);
    if (unknown.length > 0) throw new InvalidRequestError(`agents[${index}]: unknown field "${printable(unknown[0]!)}" (an entry is { agent, name? })`, { index });
    if (typeof agent !== 'function') throw new InvalidRequestError(`agents[${index}].agent must be an agent function; got ${describe(agent)}`, { index });
    if (name !== undefined && typeof name !== 'string') throw new InvalidRequestError(`agents[${index}].name must be a string; got ${describe(name)}`, { index });
    return { agent: agent as Agent, ...(name !== undefined ? { name } : {}) };
  }
  throw new InvalidRequestError(`agents[${index}] must be an agent function or { agent, name }; got ${describe(entry)}`, { index });
}

/** Whether `value` looks like a valibot schema (what `v.safeParse` takes). */
export function isValibotSchema(value: unknown): boolean {
  const s = value as { kind?: unknown; '~run'?: unknown; '~standard'?: { vendor?: unknown } } | null;
  return s !== null && typeof s === 'object' && s.kind === 'schema' && typeof s['~run'] === 'function' && s['~standard']?.vendor === 'valibot';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `"${printable(value)}"`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}

/** A name as it may appear in a message: control characters escaped, at most 80 characters. */
function printable(text: string): string {
  const escaped = JSON.stringify(text).slice(1, -1);
  return escaped.length > 80 ? `${escaped.slice(0, 77)}...` : escaped;
}
