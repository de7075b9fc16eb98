import { DEFAULT_DURABILITY, type Agent, type DurabilityConfig } from './agent.js';
import { InvalidRequestError } from './agent-errors.js';

const FIELDS = new Set(['maxAttempts', 'timeoutMs']);

/**
 * An agent's submission retry policy (document 001 "DurabilityConfig"): the
 * `durability` static over the defaults (10 attempts, one hour). Read while
 * the function is not running (admission, recovery). Throws
 * InvalidRequestError naming `<identity>.durability.<field>` for an unknown
 * field or a value that is not a positive integer.
 */
export function resolveDurability(agent: Agent, identity: string): Required<DurabilityConfig> {
  const given: unknown = agent.durability;
  if (given === undefined) return DEFAULT_DURABILITY;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new InvalidRequestError(`${identity}.durability must be an object { maxAttempts?, timeoutMs? }`, { field: `${identity}.durability` });
  }
  for (const key of Object.keys(given)) {
    if (!FIELDS.has(key)) throw new InvalidRequestError(`${identity}.durability.${key} is not a durability field (maxAttempts, timeoutMs)`, { field: `${identity}.durability.${key}` });
  }
  const out = { ...DEFAULT_DURABILITY, ...(given as DurabilityConfig) };
  for (const key of FIELDS) {
    const value = out[key as keyof DurabilityConfig];
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new InvalidRequestError(`${identity}.durability.${key} must be a positive integer (got ${String(value)})`, { field: `${identity}.durability.${key}` });
    }
  }
  return Object.freeze(out);
}
