import * as v from 'valibot';
import { nowIso } from '../../kernel/clock.js';
import { jsonCopy } from '../../kernel/json-copy.js';
import type { Store, ThreadRecord } from '../../kernel/store.js';
import type { SubmissionRecord } from '../../kernel/submissions.js';
import type { Agent } from './agent.js';
import type { AgentDirectory } from './agent-directory.js';
import { AgentInstanceExistsError, AgentInstanceNotFoundError, AgentNotRegisteredError, InvalidRequestError } from './agent-errors.js';
import { agentThreadId, mintDispatchId, mintInstanceUid, mintSubmissionId } from './agent-thread-id.js';
import { parseDeliveredMessage } from './delivered-message.js';

/** The longest instance id accepted (UTF-16 code units): ids are keys, not payloads. */
export const MAX_INSTANCE_ID_LENGTH = 512;

/** One send as every transport hands it to admission (fields unchecked: admission validates them). */
export interface DeliveryRequest {
  agent: unknown;
  id: unknown;
  message: unknown;
  /** Whether the request carried an `initialData` key (`undefined` as a value is still "given"). */
  hasInitialData: boolean;
  initialData?: unknown;
  uid?: unknown;
  /** A dispatch id the caller already minted (admitting it again is idempotent); minted here when absent. */
  dispatchId?: string;
}

/** What admission stored: the receipt fields and the records behind them. */
export interface Admitted {
  dispatchId: string;
  acceptedAt: string;
  uid?: string;
  identity: string;
  agent: Agent;
  submission: SubmissionRecord;
  thread: ThreadRecord;
  /** Whether this send created the instance. */
  created: boolean;
}

/** What admission reads: the store and the registered agents. */
export interface AdmissionDeps {
  store: Store;
  directory: AgentDirectory;
}

/**
 * The registered identity of an agent value. InvalidRequestError when it is
 * not a function, AgentNotRegisteredError when the runtime does not serve it.
 */
export function identityOfAgent(directory: AgentDirectory, agent: unknown): { identity: string; agent: Agent } {
  if (typeof agent !== 'function') throw new InvalidRequestError(`agent must be an agent function (got ${agent === null ? 'null' : typeof agent})`, { field: 'agent' });
  const identity = directory.identityOf(agent as Agent);
  if (identity === undefined) throw new AgentNotRegisteredError(agent.name ? `'${agent.name}'` : '(anonymous function)', directory.identities());
  return { identity, agent: agent as Agent };
}

/** An instance id: a non-empty, well-formed (no unpaired surrogate) string of at most {@link MAX_INSTANCE_ID_LENGTH} code units. InvalidRequestError naming `field` otherwise. */
export function checkInstanceId(id: unknown, field = 'id'): string {
  if (typeof id !== 'string' || id === '') throw new InvalidRequestError(`${field} must be a non-empty string naming the agent instance (got ${id === '' ? 'an empty string' : id === null ? 'null' : typeof id})`, { field });
  if (id.length > MAX_INSTANCE_ID_LENGTH) throw new InvalidRequestError(`${field} has ${id.length} characters; at most ${MAX_INSTANCE_ID_LENGTH} are allowed`, { field });
  // A store keeping UTF-8 cannot keep an unpaired surrogate: it reads back as U+FFFD, so two such ids would come back as one.
  if (UNPAIRED_SURROGATE.test(id)) throw new InvalidRequestError(`${field} holds an unpaired surrogate (not well-formed UTF-16); instance ids must be valid Unicode text`, { field });
  return id;
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A send condition: absent, a non-empty string, or null. InvalidRequestError otherwise. */
export function checkUidCondition(uid: unknown, field = 'uid'): string | null | undefined {
  if (uid === undefined || uid === null) return uid;
  if (typeof uid !== 'string' || uid === '') throw new InvalidRequestError(`${field} must be a uid string, null (create only) or absent (got ${uid === '' ? 'an empty string' : typeof uid})`, { field });
  return uid;
}

/**
 * Admits one delivery (document 001 `dispatch()` and every other send):
 * validates the agent, id, condition, message and `initialData` before
 * anything is stored, then stores the submission `queued` in one
 * transaction with the condition check and (on first contact) the instance
 * thread: `uid` minted, `initialData` as the agent's `initialData` schema
 * parsed it (validated only when this send would create the instance; the
 * value of a send that continues one is ignored). Resolves the receipt.
 *
 * Rejects, with nothing stored: InvalidRequestError (bad agent value, id,
 * uid, message, a string `uid` with `initialData`, initialData failing the
 * schema or not JSON), AgentNotRegisteredError, AgentInstanceNotFoundError
 * (string uid: no such instance, or another incarnation),
 * AgentInstanceExistsError (`uid: null` and the instance exists; its uid on
 * `.uid`). A `dispatchId` admitted before resolves with the first admission.
 */
export async function admitDelivery(deps: AdmissionDeps, request: DeliveryRequest): Promise<Admitted> {
  const acceptedAt = nowIso();
  const { identity, agent } = identityOfAgent(deps.directory, request.agent);
  const id = checkInstanceId(request.id);
  const uid = checkUidCondition(request.uid);
  if (typeof uid === 'string' && request.hasInitialData) {
    throw new InvalidRequestError('initialData cannot be combined with a string uid: the condition forbids creating the instance, so the data could never apply', { field: 'initialData' });
  }
  const message = parseDeliveredMessage(request.message);
  const threadId = agentThreadId(identity, id);
  // initialData is consulted only when this send creates the instance: validated once, at first contact.
  const existing = typeof uid === 'string' ? undefined : await deps.store.getThread(threadId);
  const initialData = existing || typeof uid === 'string' ? undefined : parseInitialData(agent, identity, request.initialData);
  const dispatchId = request.dispatchId ?? mintDispatchId();
  const result = await deps.store.admitSubmission({
    submission: { id: mintSubmissionId(), dispatchId, agentId: identity, message, acceptedAt },
    thread: { id: threadId, agentId: identity, instanceId: id, uid: mintInstanceUid(), ...(initialData !== undefined ? { initialData } : {}) },
    ...(uid !== undefined ? { uid } : {}),
  });
  switch (result.outcome) {
    case 'admitted':
    case 'duplicate': {
      const receiptUid = result.thread.uid;
      return {
        dispatchId: result.submission.dispatchId,
        acceptedAt: result.submission.acceptedAt,
        ...(receiptUid !== undefined ? { uid: receiptUid } : {}),
        identity,
        agent,
        submission: result.submission,
        thread: result.thread,
        created: result.outcome === 'admitted' && result.created,
      };
    }
    case 'instance_not_found':
      throw new AgentInstanceNotFoundError(identity, id, uid as string);
    case 'instance_exists':
      throw new AgentInstanceExistsError(identity, id, result.thread.uid);
    default: {
      const never: never = result;
      throw new Error(`unknown admission outcome ${JSON.stringify(never)}`);
    }
  }
}

/**
 * The data a creating send records: the schema's parsed output when the
 * agent declares `initialData` (a mismatch, absence included unless the
 * schema accepts `undefined`, is InvalidRequestError listing each issue's
 * path), else the value as given. Either way it must be JSON (it is stored).
 */
function parseInitialData(agent: Agent, identity: string, value: unknown): unknown {
  let parsed = value;
  if (agent.initialData !== undefined) {
    const result = v.safeParse(agent.initialData, value);
    if (!result.success) {
      const issues = result.issues.map((issue) => `${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`);
      throw new InvalidRequestError(`initialData does not match ${identity}'s initialData schema: ${issues.join('; ')}`, { field: 'initialData', issues });
    }
    parsed = result.output;
  }
  if (parsed === undefined) return undefined;
  try {
    return jsonCopy(parsed);
  } catch (err) {
    throw new InvalidRequestError(`initialData must be JSON data (it is recorded with the instance): ${(err as Error).message}`, { field: 'initialData' });
  }
}
