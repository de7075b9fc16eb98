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

/** A harness prompt or `compact()` while another operation runs on the harness's conversation (one at a time): 409 `session_busy`. */
export class SessionBusyError extends AgentApiError {
  constructor(what: string, operationId?: string) {
    super('SESSION_BUSY', 'session_busy', 409, `${what}: another operation${operationId !== undefined ? ` (${operationId})` : ''} is running on this harness's conversation; await it (or abort it) first`, {
      details: operationId !== undefined ? { operationId } : {},
    });
    this.name = 'SessionBusyError';
  }
}

/**
 * A harness prompt with a `result` schema ended without a valid `finish`
 * call: the model called `give_up` (`reason` is its reason) or answered
 * without finishing after every follow-up. `assistantText` is what the model
 * wrote meanwhile.
 */
export class ResultUnavailableError extends AgentApiError {
  readonly reason: string;
  readonly assistantText: string;
  constructor(reason: string, assistantText: string, operationId: string) {
    super('RESULT_UNAVAILABLE', 'result_unavailable', 422, `the harness prompt produced no result: ${reason}`, { details: { reason, operationId } });
    this.name = 'ResultUnavailableError';
    this.reason = reason;
    this.assistantText = assistantText;
  }
}

/** A harness prompt whose operation ended in error (its error is `cause` and in `details`), or a compaction that wrote no summary. */
export class HarnessPromptError extends AgentApiError {
  constructor(message: string, details: Record<string, unknown>, cause?: unknown) {
    super('HARNESS_PROMPT_FAILED', 'harness_prompt_failed', 500, message, { details, cause });
    this.name = 'HarnessPromptError';
  }
}

/** `harness.prompt()` given bad text or options (the message names the option). */
export class HarnessOptionsError extends AgentApiError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('HARNESS_OPTIONS_INVALID', 'invalid_request', 400, message, { details });
    this.name = 'HarnessOptionsError';
  }
}

/** A harness used after the invocation that received it (its tool call or callback) ended. */
export class HarnessClosedError extends AgentApiError {
  constructor(what: string) {
    super('HARNESS_CLOSED', 'invalid_request', 400, `${what}: this harness belonged to a tool call or callback that has ended; a harness is scoped to the invocation that received it`);
    this.name = 'HarnessClosedError';
  }
}
