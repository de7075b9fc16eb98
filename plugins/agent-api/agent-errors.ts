import type { ErrorCode } from '../../kernel/error-catalog.js';
import { HookgateError } from '../../kernel/errors.js';

/**
 * The base of document 001's typed errors: a HookgateError (stable `code`)
 * that also carries the document's wire `type` and the HTTP status the
 * transports render it with (`{ error: { type, message, details } }`).
 */
export class AgentApiError extends HookgateError {
  /** The document's snake_case error type (`invalid_request`, `agent_instance_exists`, ...). */
  readonly type: string;
  /** The HTTP status of the error envelope. */
  readonly status: number;

  constructor(code: ErrorCode, type: string, status: number, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(code, message, options);
    this.name = 'AgentApiError';
    this.type = type;
    this.status = status;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), type: this.type, status: this.status };
  }
}

/** A malformed request (message, id, payload, `uid` with `initialData`): 400 `invalid_request`. */
export class InvalidRequestError extends AgentApiError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('INVALID_REQUEST', 'invalid_request', 400, message, { details });
    this.name = 'InvalidRequestError';
  }
}

/** A send conditioned on a uid that found no instance or another incarnation: 404 `agent_instance_not_found`. */
export class AgentInstanceNotFoundError extends AgentApiError {
  constructor(agent: string, id: string, uid: string) {
    super('AGENT_INSTANCE_NOT_FOUND', 'agent_instance_not_found', 404, `agent '${agent}' has no instance '${id}' with uid '${uid}'`, { details: { agent, id, uid } });
    this.name = 'AgentInstanceNotFoundError';
  }
}

/** A `uid: null` send that found an existing instance: 409 `agent_instance_exists`, its uid on `.uid` and in `details`. */
export class AgentInstanceExistsError extends AgentApiError {
  readonly uid: string | undefined;
  constructor(agent: string, id: string, uid: string | undefined) {
    super('AGENT_INSTANCE_EXISTS', 'agent_instance_exists', 409, `agent '${agent}' already has an instance '${id}'`, { details: { agent, id, uid } });
    this.name = 'AgentInstanceExistsError';
    this.uid = uid;
  }
}

/** An agent function broke a rule of rendering (the message says which, naming the agent or hook). */
export class AgentRenderError extends AgentApiError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('AGENT_RENDER_INVALID', 'invalid_request', 400, message, { details });
    this.name = 'AgentRenderError';
  }
}

/** One render declared two tools with one name. */
export class ToolNameConflictError extends AgentApiError {
  readonly toolName: string;
  constructor(toolName: string) {
    super('TOOL_NAME_CONFLICT', 'invalid_request', 400, `two tools named '${toolName}' in one render`, { details: { toolName } });
    this.name = 'ToolNameConflictError';
    this.toolName = toolName;
  }
}

/** The rejection of an awaited handle send whose submission settled `failed` or `aborted`; the recorded error is `cause`. */
export class AgentRunError extends AgentApiError {
  readonly outcome: 'failed' | 'aborted';
  readonly submissionId: string;
  constructor(outcome: 'failed' | 'aborted', submissionId: string, message: string, cause?: unknown) {
    super('AGENT_RUN_FAILED', 'agent_run_failed', 500, message, { cause, details: { outcome, submissionId } });
    this.name = 'AgentRunError';
    this.outcome = outcome;
    this.submissionId = submissionId;
  }
}

/** A submission interrupted more often than `durability.maxAttempts` allows (its settlement error). */
export class SubmissionRetryExhaustedError extends AgentApiError {
  constructor(submissionId: string, attempts: number) {
    super('SUBMISSION_RETRY_EXHAUSTED', 'submission_retry_exhausted', 500, `submission '${submissionId}' was interrupted ${attempts} times, its agent's durability.maxAttempts`, { details: { submissionId, attempts } });
    this.name = 'SubmissionRetryExhaustedError';
  }
}

/** A submission past `durability.timeoutMs` (its settlement error). */
export class SubmissionTimeoutError extends AgentApiError {
  constructor(submissionId: string, timeoutMs: number) {
    super('SUBMISSION_TIMEOUT', 'submission_timeout', 500, `submission '${submissionId}' ran past its agent's durability.timeoutMs (${timeoutMs} ms)`, { details: { submissionId, timeoutMs } });
    this.name = 'SubmissionTimeoutError';
  }
}

/** A function that is not one of the runtime's registered agents (dispatch, init, getAgentInstance): 400 `invalid_request`. */
export class AgentNotRegisteredError extends AgentApiError {
  constructor(name: string, registered: readonly string[]) {
    super('AGENT_NOT_REGISTERED', 'invalid_request', 400, `the agent ${name} is not registered with this runtime; start({ agents }) registered: ${registered.join(', ') || 'none'}`, {
      details: { agent: name, registered: [...registered] },
    });
    this.name = 'AgentNotRegisteredError';
  }
}

/** The agent API used with no runtime configured in this process (before `start()` or after `stop()`): 503 `runtime_unavailable`. */
export class AgentRuntimeNotStartedError extends AgentApiError {
  constructor(what: string) {
    super('AGENT_RUNTIME_NOT_STARTED', 'runtime_unavailable', 503, `${what} needs an agent runtime: call start({ agents }) first (from 'hookgate')`);
    this.name = 'AgentRuntimeNotStartedError';
  }
}

/** `start()` while this process already holds a runtime (one per process). */
export class AgentRuntimeRunningError extends AgentApiError {
  constructor() {
    super('AGENT_RUNTIME_RUNNING', 'invalid_request', 400, 'this process already has an agent runtime: start() may be called once (stop() the first runtime before starting another)');
    this.name = 'AgentRuntimeRunningError';
  }
}

/** A conversation read for an instance that never received a message: 404 `stream_not_found`. */
export class StreamNotFoundError extends AgentApiError {
  constructor(agent: string, id: string) {
    super('STREAM_NOT_FOUND', 'stream_not_found', 404, `agent '${agent}' has no instance '${escapeForMessage(id)}' (its stream begins with the first admitted message)`, { details: { agent, id } });
    this.name = 'StreamNotFoundError';
  }
}

/** An attachment id that names no attachment of the instance's conversation: 404 `attachment_not_found`. */
export class AttachmentNotFoundError extends AgentApiError {
  constructor(attachmentId: string) {
    super('ATTACHMENT_NOT_FOUND', 'attachment_not_found', 404, `no attachment '${escapeForMessage(attachmentId)}' in this conversation`, { details: { attachmentId } });
    this.name = 'AttachmentNotFoundError';
  }
}

/** A path no route serves: 404 `route_not_found` (the routes are not listed). */
export class RouteNotFoundError extends AgentApiError {
  constructor(method: string, path: string) {
    super('HTTP_ROUTE_NOT_FOUND', 'route_not_found', 404, `no route serves ${method} ${escapeForMessage(path)}`);
    this.name = 'RouteNotFoundError';
  }
}

/** A method the route does not serve: 405 `method_not_allowed`; `allow` goes into the `Allow` header. */
export class MethodNotAllowedError extends AgentApiError {
  readonly allow: readonly string[];
  constructor(method: string, allow: readonly string[]) {
    super('HTTP_METHOD_NOT_ALLOWED', 'method_not_allowed', 405, `this route does not serve ${method}; it serves ${allow.join(', ')}`, { details: { allow: [...allow] } });
    this.name = 'MethodNotAllowedError';
    this.allow = allow;
  }
}

/** A body not sent as JSON: 415 `unsupported_media_type`. */
export class UnsupportedMediaTypeError extends AgentApiError {
  constructor(contentType: string | undefined) {
    super('HTTP_UNSUPPORTED_MEDIA_TYPE', 'unsupported_media_type', 415, `the body must be sent with Content-Type: application/json (got ${contentType ? `'${escapeForMessage(contentType.slice(0, 100))}'` : 'none'})`);
    this.name = 'UnsupportedMediaTypeError';
  }
}

/** A JSON body that does not parse: 400 `invalid_json`, the parser's report in `details.reason`. */
export class InvalidJsonError extends AgentApiError {
  constructor(reason: string) {
    super('HTTP_INVALID_JSON', 'invalid_json', 400, `the body is not valid JSON: ${reason}`, { details: { reason } });
    this.name = 'InvalidJsonError';
  }
}

/** A body over the route's limit: 413 `payload_too_large` (nothing of it is read past the limit). */
export class PayloadTooLargeError extends AgentApiError {
  constructor(limitBytes: number) {
    super('HTTP_PAYLOAD_TOO_LARGE', 'payload_too_large', 413, `the body is larger than ${limitBytes} bytes, the most this route accepts`, { details: { limitBytes } });
    this.name = 'PayloadTooLargeError';
  }
}

/** Text from a request (ids, paths) shown in a message: control characters escaped, at most 200 characters. */
function escapeForMessage(text: string): string {
  const short = text.length > 200 ? `${text.slice(0, 200)}...` : text;
  return short.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
