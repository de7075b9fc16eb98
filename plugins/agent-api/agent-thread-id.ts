import { randomBytes } from 'node:crypto';
import { timeOrderedId } from '../../kernel/time-ordered-id.js';

/**
 * The thread of an agent instance: deterministic from the agent's identity
 * and the instance id, so admission finds an instance with one read and two
 * racing first contacts meet on the store's unique thread id. Identities
 * contain no `:` (AGENT_IDENTITY_PATTERN), so no two pairs share a thread id.
 */
export function agentThreadId(identity: string, instanceId: string): string {
  return `agent:${identity}:${instanceId}`;
}

/** A new incarnation's uid: `inst_` and 20 random bytes in base64url (opaque; unguessable by accident). */
export function mintInstanceUid(): string {
  return `inst_${randomBytes(20).toString('base64url')}`;
}

/** A fresh instance id for `init()` without one (a throwaway instance). */
export function mintInstanceId(): string {
  return `anon_${timeOrderedId()}`;
}

/** A delivery's receipt id. */
export function mintDispatchId(): string {
  return `dsp_${timeOrderedId()}`;
}

/** A submission's id (time-ordered: the store's admission order follows it). */
export function mintSubmissionId(): string {
  return `sub_${timeOrderedId()}`;
}
