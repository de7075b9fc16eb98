import type { Agent } from './agent.js';
import { InvalidRequestError } from './agent-errors.js';
import type { DeliveredMessageInput } from './delivered-message.js';
import { currentRuntime } from './start.js';

/** One fire-and-forget delivery (document 001 `AgentDispatchRequest`). */
export interface AgentDispatchRequest {
  /** The instance id; created on first contact. */
  id: string;
  message: DeliveredMessageInput;
  /** Instance-creation data: validated and recorded only when this send creates the instance. */
  initialData?: unknown;
  /** The send condition: absent (continue or create), a uid (continue only it), `null` (create only). */
  uid?: string | null;
}

/** What `dispatch()` resolves with once the delivery is admitted. */
export interface DispatchReceipt {
  dispatchId: string;
  /** ISO time admission began. */
  acceptedAt: string;
  /** The contacted incarnation's uid (minted when this send created the instance). */
  uid?: string;
  /** The queued submission's id. */
  submissionId: string;
}

/**
 * Delivers one message to one agent instance and resolves once it is
 * durably admitted and queued (not when the model answered: use an
 * `init()` handle to await the reply). Rejects, storing nothing:
 * AgentRuntimeNotStartedError before `start()`; InvalidRequestError for a
 * non-function agent, a missing or empty `id`, a malformed message, a bad
 * `uid`, `initialData` with a string `uid` or failing the agent's schema;
 * AgentNotRegisteredError; AgentInstanceNotFoundError (404) and
 * AgentInstanceExistsError (409, the existing uid on `.uid`) for failed
 * conditions.
 */
export async function dispatch(agent: Agent, request: AgentDispatchRequest): Promise<DispatchReceipt> {
  const runtime = currentRuntime('dispatch()');
  if (typeof request !== 'object' || request === null) throw new InvalidRequestError('dispatch(agent, request) needs a request { id, message, initialData?, uid? }', { field: 'request' });
  const admitted = await runtime.coordinator.admit({
    agent,
    id: request.id,
    message: request.message,
    hasInitialData: 'initialData' in request,
    initialData: request.initialData,
    uid: request.uid,
  });
  return {
    dispatchId: admitted.dispatchId,
    acceptedAt: admitted.acceptedAt,
    ...(admitted.uid !== undefined ? { uid: admitted.uid } : {}),
    submissionId: admitted.submission.id,
  };
}
