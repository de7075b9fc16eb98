import { SETTLED_SUBMISSION_STATUSES } from '../../kernel/submissions.js';
import type { Agent } from './agent.js';
import { InvalidRequestError } from './agent-errors.js';
import { replyOf, type AgentReply } from './agent-reply.js';
import { checkInstanceId, checkUidCondition } from './admission.js';
import { agentThreadId, mintInstanceId } from './agent-thread-id.js';
import { threadHeadPosition } from './conversation-head.js';
import { offsetAfterMessage, type ConversationStreamChunk } from './conversation-stream.js';
import type { DeliveredMessageInput } from './delivered-message.js';
import { currentRuntime } from './start.js';
import { runErrorOf } from './submission-settlement.js';

/** What `init()` takes: the instance address and the first contact's condition. */
export interface InitOptions {
  /** The instance id; omitted: a fresh unique id (a throwaway instance). */
  id?: string;
  /** The condition of the handle's first send (as `dispatch()`'s `uid`); later sends continue the incarnation it contacted. */
  uid?: string | null;
}

/** A handle send's payload: `dispatch()`'s request without the `id` / `uid` the handle owns. */
export interface AgentHandleDispatchRequest {
  message: DeliveredMessageInput;
  initialData?: unknown;
}

/** How one awaited send is observed and cancelled. */
export interface AgentDispatchOptions {
  /**
   * Every chunk of the instance's conversation stream recorded after the
   * send was admitted (the same ConversationStreamChunk projection an HTTP
   * stream reader gets, with positions), through this submission's
   * `submission-settled` chunk; the send resolves after that chunk was
   * handed over. A throwing listener is ignored.
   */
  onEvent?: (chunk: ConversationStreamChunk) => void;
  /** Firing it requests a durable abort; the send then rejects with the `aborted` settlement. Already aborted: rejects at once. */
  signal?: AbortSignal;
}

/** The programmatic client of one agent instance: an address, not a resource. */
export interface AgentInstanceHandle {
  readonly id: string;
  /**
   * Delivers one message through the same queue as every other send and
   * waits for its submission to settle: resolves the AgentReply of a
   * completed one, rejects with AgentRunError (`outcome`, `cause`) for a
   * failed or aborted one, and with the admission errors of `dispatch()`.
   * A bare string is `{ message }`. The await is not durable: if the
   * process dies, the admitted submission survives as the store keeps it.
   */
  dispatch(request: string | AgentHandleDispatchRequest, options?: AgentDispatchOptions): Promise<AgentReply>;
}

/**
 * A handle on one agent instance (document 001 `init()`). Does no I/O and
 * needs no runtime yet (the runtime is looked up at each send), so it is safe
 * at module scope. Throws InvalidRequestError for a non-function agent, an
 * empty or non-string `id`, or a bad `uid`.
 */
export function init(agent: Agent, options: InitOptions = {}): AgentInstanceHandle {
  if (typeof agent !== 'function') throw new InvalidRequestError(`init(agent) needs an agent function (got ${agent === null ? 'null' : typeof agent})`, { field: 'agent' });
  if (typeof options !== 'object' || options === null) throw new InvalidRequestError('init(agent, options) takes { id?, uid? }', { field: 'options' });
  const id = options.id === undefined ? mintInstanceId() : checkInstanceId(options.id);
  // The first contact's condition; once a send was admitted, the incarnation it reached.
  let condition = checkUidCondition(options.uid);
  return Object.freeze({
    id,
    async dispatch(request: string | AgentHandleDispatchRequest, sendOptions: AgentDispatchOptions = {}): Promise<AgentReply> {
      const payload = payloadOf(request);
      const signal = sendOptions.signal;
      if (signal?.aborted) throw signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
      const runtime = currentRuntime('an init() handle send');
      const onEvent = sendOptions.onEvent;
      const identity = onEvent ? runtime.directory.identityOf(agent) : undefined;
      // The head as admission begins (read alongside it, so a send made after this one is still admitted after it):
      // the listener hears everything recorded after it.
      const headRead = identity !== undefined ? threadHeadPosition(runtime.kernel.store, agentThreadId(identity, id)) : Promise.resolve(-1);
      headRead.catch(() => undefined);
      const admitted = await runtime.coordinator.admit({ agent, id, message: payload.message, hasInitialData: 'initialData' in payload, initialData: payload.initialData, uid: condition });
      const head = await headRead;
      if (admitted.uid !== undefined) condition = admitted.uid;
      const submissionId = admitted.submission.id;
      const onAbort = () => void runtime.coordinator.requestAbort(submissionId).catch(() => undefined);
      signal?.addEventListener('abort', onAbort, { once: true });
      const stopFollowing = new AbortController();
      const following = onEvent && !SETTLED_SUBMISSION_STATUSES.has(admitted.submission.status)
        ? runtime.feed
            .follow(
              admitted.thread.id,
              offsetAfterMessage(head, admitted.submission.seq),
              (chunks) => {
                for (const chunk of chunks) {
                  try {
                    onEvent(chunk);
                  } catch {
                    // A listener never breaks the send.
                  }
                  if (chunk.type === 'submission-settled' && chunk.submissionId === submissionId) return true;
                }
                return false;
              },
              { signal: stopFollowing.signal },
            )
            .catch(() => undefined)
        : undefined;
      try {
        const settled = await runtime.coordinator.settled(submissionId);
        await following;
        if (settled.status === 'completed') return replyOf(settled, admitted.uid);
        throw runErrorOf(settled);
      } finally {
        stopFollowing.abort();
        signal?.removeEventListener('abort', onAbort);
      }
    },
  });
}

function payloadOf(request: unknown): AgentHandleDispatchRequest {
  if (typeof request === 'string') return { message: request };
  if (typeof request !== 'object' || request === null || !('message' in request)) {
    throw new InvalidRequestError('handle.dispatch() takes a message string or { message, initialData? }', { field: 'request' });
  }
  for (const key of ['id', 'uid']) {
    if (key in request) throw new InvalidRequestError(`handle.dispatch() payloads cannot carry '${key}': pass it to init(agent, { id, uid })`, { field: `request.${key}` });
  }
  return request as AgentHandleDispatchRequest;
}
