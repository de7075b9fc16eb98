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

/** A tool definition with the legacy `parameters` / `execute` fields (the shape is `input` / `run`): thrown by defineTool and useTool. */
export class ToolLegacyDefinitionError extends AgentApiError {
  readonly toolName: string | undefined;
  constructor(toolName: string | undefined, where: string, field: 'parameters' | 'execute') {
    super('TOOL_LEGACY_DEFINITION', 'tool_legacy_definition', 500, `${where}: "${field}" is the legacy shape; a tool is { name, description, input, output, run }`, { details: { tool: toolName, field } });
    this.name = 'ToolLegacyDefinitionError';
    this.toolName = toolName;
  }
}

/** One problem a valibot schema found: where (a dot path, `(input)` / `(output)` for the whole value) and what. */
export interface ToolValidationIssue {
  path: string;
  message: string;
}

/**
 * A call's arguments failed its tool's `input` schema, before `run`: the model
 * gets this message as the call's tool error and may call again with
 * corrected arguments (the submission goes on).
 */
export class ToolInputValidationError extends AgentApiError {
  readonly issues: readonly ToolValidationIssue[];
  constructor(toolName: string, issues: readonly ToolValidationIssue[]) {
    super('TOOL_ARGS_INVALID', 'tool_input_validation', 400, `Arguments for tool "${toolName}" do not match its input schema: ${issueText(issues)}. Call the tool again with corrected arguments.`, { details: { tool: toolName, issues } });
    this.name = 'ToolInputValidationError';
    this.issues = issues;
  }
}

/** A tool's return value failed its `output` schema: a tool error the model sees (the submission goes on). */
export class ToolOutputValidationError extends AgentApiError {
  readonly issues: readonly ToolValidationIssue[];
  constructor(toolName: string, issues: readonly ToolValidationIssue[]) {
    super('TOOL_OUTPUT_INVALID', 'tool_output_validation', 500, `Tool "${toolName}" returned a value that does not match its output schema: ${issueText(issues)}`, { details: { tool: toolName, issues } });
    this.name = 'ToolOutputValidationError';
    this.issues = issues;
  }
}

/** A tool's return value is not JSON (a function, a cycle, a class instance, NaN...), or its `output` schema produced undefined: a tool error the model sees. */
export class ToolOutputSerializationError extends AgentApiError {
  constructor(toolName: string, reason: string, cause?: unknown) {
    super('TOOL_OUTPUT_NOT_JSON', 'tool_output_serialization', 500, `Tool "${toolName}" output is not JSON-serializable: ${reason}`, { cause, details: { tool: toolName } });
    this.name = 'ToolOutputSerializationError';
  }
}

/** A durable tool misused `step.do` (the message says how): thrown into the tool's `run`, so unless it catches it, a tool error the model sees. */
export class ToolStepError extends AgentApiError {
  constructor(toolName: string, message: string, details: Record<string, unknown> = {}) {
    super('TOOL_STEP_INVALID', 'tool_step_invalid', 500, `Tool "${toolName}" ${message}`, { details: { tool: toolName, ...details } });
    this.name = 'ToolStepError';
  }
}

/** At most the first eight issues, `path: message`; the count of the rest. */
function issueText(issues: readonly ToolValidationIssue[]): string {
  const shown = issues.slice(0, 8).map((i) => `${i.path}: ${i.message}`).join('; ');
  return issues.length > 8 ? `${shown}; and ${issues.length - 8} more` : shown;
}

/**
 * A call of a tool that is not durable was found started by an earlier
 * execution that never recorded its result (the process stopped, or lost
 * the operation, mid-call): it is not run again, and the model gets this as
 * the call's tool error, since its outcome is unknown. Durable tools are
 * re-executed instead, their recorded steps replayed.
 */
export class ToolCallInterruptedError extends AgentApiError {
  constructor(toolName: string, toolCallId: string) {
    super('TOOL_CALL_INTERRUPTED', 'tool_call_interrupted', 500, `The call of tool "${toolName}" was interrupted before its result was recorded, so its outcome is unknown; it was not run again. Check whether its effect happened before calling it again.`, { details: { tool: toolName, toolCallId } });
    this.name = 'ToolCallInterruptedError';
  }
}

/** One field-level problem of a skill or subagent definition: the field (`name`, `files["a/../b"]`, ...) and what is wrong with it. */
export interface DefinitionIssue {
  readonly field: string;
  readonly message: string;
}

function issueList(issues: readonly DefinitionIssue[]): string {
  return issues.map((i) => `${i.field}: ${i.message}`).join('; ');
}

/** A `defineSkill` (or `useSkill`) definition that is not valid: every problem found, field by field, on `.issues`. */
export class SkillDefinitionValidationError extends AgentApiError {
  readonly issues: readonly DefinitionIssue[];
  constructor(skill: string | undefined, issues: readonly DefinitionIssue[]) {
    super('SKILL_DEFINITION_INVALID', 'invalid_request', 400, `defineSkill(${skill ?? '(unnamed)'}): ${issueList(issues)}`, { details: { skill, issues: issues.map((i) => ({ ...i })) } });
    this.name = 'SkillDefinitionValidationError';
    this.issues = Object.freeze(issues.map((i) => Object.freeze({ ...i })));
  }
}

/** A `defineSubagent` (or `useSubagent`) definition that is not valid: every problem found, field by field, on `.issues`. */
export class SubagentDefinitionValidationError extends AgentApiError {
  readonly issues: readonly DefinitionIssue[];
  constructor(subagent: string | undefined, issues: readonly DefinitionIssue[]) {
    super('SUBAGENT_DEFINITION_INVALID', 'invalid_request', 400, `defineSubagent(${subagent ?? '(unnamed)'}): ${issueList(issues)}`, { details: { subagent, issues: issues.map((i) => ({ ...i })) } });
    this.name = 'SubagentDefinitionValidationError';
    this.issues = Object.freeze(issues.map((i) => Object.freeze({ ...i })));
  }
}

/** One render declared two skills, or two subagents, with one name. */
export class ResourceNameConflictError extends AgentApiError {
  readonly kind: 'skill' | 'subagent';
  readonly resourceName: string;
  constructor(kind: 'skill' | 'subagent', resourceName: string) {
    super('RESOURCE_NAME_CONFLICT', 'invalid_request', 400, `two ${kind}s named '${resourceName}' in one render`, { details: { kind, name: resourceName } });
    this.name = 'ResourceNameConflictError';
    this.kind = kind;
    this.resourceName = resourceName;
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
