import type { Context } from 'koa';
import Router from '@koa/router';
import type { Agent } from '../agent.js';
import { AttachmentNotFoundError, InvalidRequestError, MethodNotAllowedError, RouteNotFoundError, StreamNotFoundError } from '../agent-errors.js';
import { resolveAgentIdentity } from '../agent-identity.js';
import { checkInstanceId } from '../admission.js';
import { agentThreadId } from '../agent-thread-id.js';
import { threadHeadPosition } from '../conversation-head.js';
import { attachmentIdOf } from '../conversation-projection.js';
import { formatOffset, offsetAfterMessage, parseOffset, STREAM_START, type ConversationChunkPosition } from '../conversation-stream.js';
import { parseDeliveredMessage } from '../delivered-message.js';
import { currentRuntime, type ActiveRuntime } from '../start.js';
import { FIXED_RESPONSE_HEADERS, respondWithError } from './error-envelope.js';
import { readJsonBody } from './json-body.js';
import { DEFAULT_HEARTBEAT_MS, SseWriter } from './sse-writer.js';
import { checkUserId } from '../../../kernel/user-values.js';

/** Tuning the server that mounts routers may set (not part of document 001's factory: every field has a default). */
export interface AgentRouterTuning {
  /** Idle SSE heartbeat period; default 15 s. */
  heartbeatMs?: number;
  /** How often an open SSE stream reads again without being woken; default 1 s. */
  pollMs?: number;
  /** Told of every request that failed with an unexpected error (rendered as 500 internal_error); default: nothing. */
  onUnexpectedError?: (err: unknown, ctx: Context) => void;
  /** Told when an SSE stream opens (returns the function that says it closed): a server draining on shutdown counts them. */
  onStreamOpen?: (close: () => void) => () => void;
}

const SEND_ALLOW = ['GET', 'HEAD', 'POST'] as const;
const ATTACHMENT_ID = /^(sub_[A-Za-z0-9_-]{1,64})\.(\d{1,4})$/;

/**
 * One agent's HTTP surface (document 001 `createAgentRouter`) as a Koa
 * router (@koa/router), relative to wherever it is mounted:
 *
 * - `POST /:id` sends a DeliveredMessage (top-level `initialData` and `uid`
 *   beside it): 202 `{ streamUrl, offset, submissionId, uid }` once admitted;
 * - `GET /:id` reads the conversation stream after `?offset=` (default `-1`,
 *   the start) as a JSON chunk array, or with `?live=sse` (or
 *   `Accept: text/event-stream`) as Server-Sent Events: history, then live
 *   chunks, heartbeats while idle, resumable from `offset` or `Last-Event-ID`;
 *   live thread events (`tool_call_started`, `tool_call_done`, a hook's
 *   `state.emit`) as `thread_event` frames `{ event, data }` without an id;
 *   a stream whose request carries `ctx.state.userId` (set by the host
 *   app's middleware) is a client of that user: the agent's
 *   `user_client_attached` / `user_client_detached` thread hooks run when it
 *   opens and when it ends (runtime.clients, stream-clients.ts);
 *   `HEAD /:id` answers the stream's head offset in `Stream-Next-Offset`;
 * - `POST /:id/abort` aborts the instance's running and queued submissions;
 * - `GET /:id/attachments/:attachmentId` serves an attachment's bytes.
 *
 * Other methods are 405 with `Allow`, other paths under the mount 404
 * `route_not_found`, every error the JSON envelope
 * `{ error: { type, message, details } }` (an unexpected one 500
 * `internal_error`, no stack). A pure factory: no side effects; the
 * runtime is looked up per request (503 `runtime_unavailable` with
 * `Retry-After` when none is started). Throws InvalidRequestError at
 * creation when the agent's identity cannot be resolved. No
 * authentication: whoever mounts it decides who reaches it.
 */
export function createAgentRouter(agent: Agent, tuning: AgentRouterTuning = {}): Router {
  const identity = resolveAgentIdentity(agent);
  const router = new Router();
  const handle = (fn: (ctx: Context, runtime: ActiveRuntime) => Promise<void>) => async (ctx: Context) => {
    try {
      ctx.set(FIXED_RESPONSE_HEADERS);
      const runtime = currentRuntime(`the ${identity} agent route`);
      if (runtime.directory.identityOf(agent) === undefined) throw new Error(`the agent ${identity} is mounted but not registered with this runtime`);
      await fn(ctx, runtime);
    } catch (err) {
      if (ctx.respond === false) return; // an event stream already answered
      respondWithError(ctx, err, (e) => tuning.onUnexpectedError?.(e, ctx));
    }
  };
  const routeNotFound = async (ctx: Context) => {
    ctx.set(FIXED_RESPONSE_HEADERS);
    respondWithError(ctx, new RouteNotFoundError(ctx.method, ctx.path));
  };

  router.all('/:id', handle(async (ctx, runtime) => {
    const id = instanceIdOf(ctx);
    switch (ctx.method) {
      case 'POST':
        return send(ctx, runtime, agent, identity, id);
      case 'GET':
        return read(ctx, runtime, identity, id, tuning);
      case 'HEAD':
        return head(ctx, runtime, identity, id);
      default:
        throw new MethodNotAllowedError(ctx.method, SEND_ALLOW);
    }
  }));
  router.all('/:id/abort', handle(async (ctx, runtime) => {
    const id = instanceIdOf(ctx);
    if (ctx.method !== 'POST') throw new MethodNotAllowedError(ctx.method, ['POST']);
    const threadId = agentThreadId(identity, id);
    const unsettled = await runtime.kernel.store.listSubmissions({ threadId, statuses: ['queued', 'running', 'joined'] });
    for (const submission of unsettled) await runtime.coordinator.requestAbort(submission.id);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { aborted: unsettled.length > 0 };
  }));
  router.all('/:id/attachments/:attachmentId', handle(async (ctx, runtime) => {
    const id = instanceIdOf(ctx);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new MethodNotAllowedError(ctx.method, ['GET', 'HEAD']);
    return attachment(ctx, runtime, identity, id, String(ctx.params.attachmentId ?? ''));
  }));
  router.all('/', routeNotFound);
  router.all('/{*rest}', routeNotFound);
  return router;
}

/** The `:id` segment: non-empty, not only whitespace, a valid instance id (InvalidRequestError otherwise). */
function instanceIdOf(ctx: Context): string {
  // The router keeps a segment it cannot decode as written: refused, so one instance has one spelling.
  for (const segment of ctx.path.split('/')) {
    try {
      decodeURIComponent(segment);
    } catch {
      throw new InvalidRequestError('the path is not valid percent-encoded UTF-8', { field: 'id' });
    }
  }
  const raw = (ctx as Context & { params: Record<string, string> }).params.id;
  if (typeof raw !== 'string' || raw.trim() === '') throw new InvalidRequestError('the instance id segment of the path is empty', { field: 'id' });
  return checkInstanceId(raw);
}

async function send(ctx: Context, runtime: ActiveRuntime, agent: Agent, identity: string, id: string): Promise<void> {
  if ('wait' in ctx.query) throw new InvalidRequestError('there is no wait mode: read the outcome from the conversation stream', { field: 'wait' });
  const body = await readJsonBody(ctx);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError("the body must be a DeliveredMessage object ({ kind: 'user', body } or { kind: 'signal', type, body }), optionally with initialData and uid", { field: 'body' });
  }
  const { initialData, uid, ...message } = body as Record<string, unknown>;
  // Validated before anything is read, so a malformed message never costs a store read.
  parseDeliveredMessage(message);
  const headRead = threadHeadPosition(runtime.kernel.store, agentThreadId(identity, id));
  headRead.catch(() => undefined);
  const admitted = await runtime.coordinator.admit({ agent, id, message, hasInitialData: 'initialData' in body, initialData, uid });
  const offset = formatOffset(offsetAfterMessage(await headRead, admitted.submission.seq));
  const streamUrl = `${ctx.protocol}://${ctx.host}${ctx.originalUrl.split('?', 1)[0]}`;
  ctx.status = 202;
  ctx.set({ Location: streamUrl, 'Stream-Next-Offset': offset, 'Cache-Control': 'no-store' });
  ctx.body = { streamUrl, offset, submissionId: admitted.submission.id, ...(admitted.uid !== undefined ? { uid: admitted.uid } : {}) };
}

/** The thread of an instance that exists, or StreamNotFoundError. */
async function existingThread(runtime: ActiveRuntime, identity: string, id: string): Promise<string> {
  const threadId = agentThreadId(identity, id);
  if (!(await runtime.kernel.store.getThread(threadId))) throw new StreamNotFoundError(identity, id);
  return threadId;
}

/** A query parameter given at most once (InvalidRequestError when repeated). */
function single(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw new InvalidRequestError(`the query parameter '${name}' may be given once`, { field: name });
  return value;
}

async function read(ctx: Context, runtime: ActiveRuntime, identity: string, id: string, tuning: AgentRouterTuning): Promise<void> {
  const view = single(ctx, 'view');
  if (view !== undefined && view !== 'updates') throw new InvalidRequestError("view must be 'updates' (the chunk stream; materialized snapshots are not served)", { field: 'view' });
  const live = single(ctx, 'live');
  if (live !== undefined && live !== 'sse') throw new InvalidRequestError("live must be 'sse' (or leave it out for one read)", { field: 'live' });
  const sse = live === 'sse' || (ctx.get('Accept') ?? '').includes('text/event-stream');
  const offsetParam = single(ctx, 'offset');
  const lastEventId = sse ? ctx.get('Last-Event-ID') : '';
  const after: ConversationChunkPosition =
    offsetParam !== undefined ? parseOffset(offsetParam) : lastEventId !== '' ? parseOffset(lastEventId, 'Last-Event-ID') : STREAM_START;
  const threadId = await existingThread(runtime, identity, id);
  const userId = sse ? streamUserOf(ctx) : undefined;
  if (!sse) {
    const { chunks, next } = await runtime.feed.read(threadId, after);
    ctx.set({ 'Stream-Next-Offset': formatOffset(next), 'Stream-Up-To-Date': 'true', 'Cache-Control': 'no-store' });
    ctx.body = chunks;
    return;
  }
  // From here on the response is the event stream: Koa does not answer it.
  ctx.respond = false;
  const res = ctx.res;
  res.writeHead(200, { ...FIXED_RESPONSE_HEADERS, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  res.flushHeaders();
  const writer = new SseWriter(res, tuning.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
  const closed = tuning.onStreamOpen?.(() => writer.close());
  // A client of a user (document 003's user scope): attached now, detached however the stream ends.
  const client = runtime.clients.attach({ agentId: identity, threadId, userId, close: () => writer.close() });
  try {
    await writer.send('control', { streamNextOffset: formatOffset(after), upToDate: false });
    await runtime.feed.follow(
      threadId,
      after,
      async (chunks, next) => {
        const offset = formatOffset(next);
        await writer.send('data', chunks, offset);
        await writer.send('control', { streamNextOffset: offset, upToDate: true });
      },
      {
        signal: writer.signal,
        ...(tuning.pollMs !== undefined ? { pollMs: tuning.pollMs } : {}),
        // Thread events (document 003) go out as they happen, without an id: they are not part of the stored stream.
        onThreadEvent: (event, data) => void writer.send('thread_event', { event, data }).catch(() => undefined),
      },
    );
  } catch (err) {
    tuning.onUnexpectedError?.(err, ctx);
  } finally {
    writer.close();
    closed?.();
    await client.detach();
  }
}

/**
 * The user a stream's client belongs to: `ctx.state.userId`, as the host
 * app's auth middleware in front of the router set it (the router trusts it
 * and never reads a user from the request itself). Absent (undefined or
 * null): nobody's. Anything else must be a user id (1 to 256 characters, no
 * control characters), else 400 invalid_request, before the stream opens.
 */
function streamUserOf(ctx: Context): string | undefined {
  const userId = (ctx.state as { userId?: unknown }).userId;
  if (userId === undefined || userId === null) return undefined;
  try {
    checkUserId(userId, "the stream's user (ctx.state.userId, set by the middleware in front of the router)");
  } catch (err) {
    throw new InvalidRequestError((err as Error).message, { field: 'userId' });
  }
  return userId;
}

async function head(ctx: Context, runtime: ActiveRuntime, identity: string, id: string): Promise<void> {
  const threadId = await existingThread(runtime, identity, id);
  const { next } = await runtime.feed.read(threadId);
  ctx.status = 200;
  ctx.set({ 'Content-Type': 'application/json', 'Stream-Next-Offset': formatOffset(next), 'Stream-Up-To-Date': 'true', 'Cache-Control': 'no-store' });
  ctx.body = null;
}

async function attachment(ctx: Context, runtime: ActiveRuntime, identity: string, id: string, attachmentId: string): Promise<void> {
  const threadId = await existingThread(runtime, identity, id);
  const match = ATTACHMENT_ID.exec(attachmentId);
  if (!match) throw new AttachmentNotFoundError(attachmentId);
  const submission = await runtime.kernel.store.getSubmission(match[1]!);
  const index = Number(match[2]);
  if (!submission || submission.threadId !== threadId || attachmentIdOf(submission.id, index) !== attachmentId) throw new AttachmentNotFoundError(attachmentId);
  const message = submission.message as { kind?: string; attachments?: Array<{ data: string; mimeType: string }> };
  const found = message.kind === 'user' ? message.attachments?.[index] : undefined;
  if (!found) throw new AttachmentNotFoundError(attachmentId);
  const bytes = Buffer.from(found.data, 'base64');
  ctx.status = 200;
  ctx.set({
    'Content-Type': found.mimeType,
    'Content-Length': String(bytes.length),
    'Content-Disposition': 'inline',
    'Cache-Control': 'private, max-age=31536000, immutable',
    'Content-Security-Policy': 'sandbox',
  });
  ctx.body = ctx.method === 'HEAD' ? null : bytes;
}
