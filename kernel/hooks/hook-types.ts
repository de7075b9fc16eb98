import type { ToolCall, ToolResult, Usage } from '../messages.js';

/** The 16 lifecycle hook types of document 000, in its order. */
export const HOOK_TYPES = [
  'beforeStep',
  'afterStep',
  'onComplete',
  'onError',
  'beforeToolCall',
  'afterToolCall',
  'onToolCallError',
  'beforeHumanIntervention',
  'afterHumanIntervention',
  'onStopByHumanIntervention',
  'beforeCompact',
  'afterCompact',
  'onCompactError',
  'beforeCallAgent',
  'afterCallAgent',
  'onCallAgentError',
] as const;

/** One of the 16 hook types (`HOOK_TYPES`). */
export type HookType = (typeof HOOK_TYPES)[number];

/** Only these types accept a matcher. */
export const TOOL_HOOK_TYPES: readonly HookType[] = ['beforeToolCall', 'afterToolCall', 'onToolCallError'];
/** Only these types may be controls (`responseHandling: 'toolCall'`). */
export const CONTROL_HOOK_TYPES: readonly HookType[] = ['beforeToolCall', 'afterToolCall'];

/** Whether `value` is one of the 16 hook type names. */
export function isHookType(value: unknown): value is HookType {
  return typeof value === 'string' && (HOOK_TYPES as readonly string[]).includes(value);
}

/** What a step does: a model turn, one tool call, a request for approval, a compaction, a sub-agent call. */
export type StepKind = 'call_llm' | 'call_tool' | 'request_human_approve' | 'compress_context' | 'call_agent';

/** Why an operation ended: `done` (the model answered), `error`, `interrupted` (aborted or rejected), or a limit. */
/**
 * Why an operation ended. `message_hook_error`: a thread hook prevented the
 * message the operation was started with (status `error`); `hook_blocked`: a
 * `prefilter_llm_history` hook blocked the model request (status `done`).
 */
export type TerminalReason = 'done' | 'error' | 'interrupted' | 'max_steps' | 'cost_limit' | 'message_hook_error' | 'hook_blocked';

/** Fields every operation event carries. */
export interface AgentHookEvent {
  operationId: string;
  /** The thread the operation runs on (always set by the runtime; see AfterCallAgentEvent). */
  threadId?: string;
  agentId: string;
  stepIndex: number;
  userId?: string;
  parentOperationId?: string;
  timestamp: string;
}

/** `beforeStep`: a step is about to run. */
export interface BeforeStepEvent extends AgentHookEvent {
  stepType: StepKind;
}

/** `afterStep`: a step committed; what it produced and used. */
export interface AfterStepEvent extends AgentHookEvent {
  stepType: StepKind;
  content?: string;
  toolCalls?: ToolCall[];
  toolResults?: Array<{ toolCallId: string; identifier: string; apiName: string; result: ToolResult }>;
  /** This step's usage. */
  usage: Usage;
  /** Usage of the whole operation so far. */
  totalUsage: Usage;
}

/** `onComplete`: the operation ended (any terminal reason), after everything else it dispatches. */
export interface OnCompleteEvent extends AgentHookEvent {
  reason: TerminalReason;
  status: 'done' | 'error' | 'interrupted';
  totalUsage: Usage;
  stepCount: number;
  /** The last assistant text, when there is one. */
  finalText?: string;
  /** In-process only: the full final state. Never serialized into webhook payloads. */
  finalState?: unknown;
}

/** `onError`: the operation failed; dispatched before its `onComplete`. */
export interface OnErrorEvent extends AgentHookEvent {
  errorMessage: string;
  errorDetail?: unknown;
  errorType?: string;
  errorCode?: string;
}

/** The shared tool context (`buildToolCallHookContext`). */
export interface ToolCallHookContext {
  /** The call identity the runtime minted (unique; what approvals and completions name). */
  toolCallId: string;
  /** The id the model sent, when it sent one (may repeat across calls). */
  nativeToolCallId?: string;
  assistantMessageId: string;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  callIndex: number;
  stepIndex: number;
  operationId: string;
  executor: 'server' | 'client';
  agentId?: string;
  topicId?: string;
  sessionId?: string;
  threadId?: string;
  groupId?: string;
  taskId?: string;
  workspaceId?: string;
  documentId?: string;
  sourceMessageId?: string;
  toolMessageId?: string;
  parentOperationId?: string;
  userId?: string;
  toolSource?: string;
  executionTarget?: string;
  activeDeviceId?: string;
  timestamp: string;
}

/** What a local mock supplies instead of running the tool. */
export type MockResult = Partial<ToolResult> & { content: string };

/** The observation payload (what webhooks see): no `mock`. */
export type BeforeToolCallObservationEvent = ToolCallHookContext;

/** The in-memory handler event: the observation plus `mock()`. */
export interface BeforeToolCallEvent extends ToolCallHookContext {
  /** Supplies the tool's result; only the first call is accepted (returns true), later ones return false. */
  mock(result: MockResult): boolean;
}

/** `afterToolCall`: a tool call has its result (run, or mocked by a beforeToolCall handler). */
export interface AfterToolCallEvent extends ToolCallHookContext {
  result: ToolResult;
  mocked: boolean;
}

/** `onToolCallError`: a tool call failed (the tool threw, was refused, or its arguments were invalid). */
export interface OnToolCallErrorEvent extends ToolCallHookContext {
  error: string;
  errorDetail?: unknown;
}

/** A tool call waiting for a human decision. */
export interface PendingTool {
  /** The call identity the runtime minted: what `approve --tool-call` names. */
  toolCallId: string;
  nativeToolCallId?: string;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  /** Why approval is needed (the tool's rule or a policy's reason). */
  reason?: string;
}

/** `beforeHumanIntervention`: the operation parks until a human decides the pending calls. */
export interface BeforeHumanInterventionEvent extends AgentHookEvent {
  pendingTools: PendingTool[];
}

/** As afterHumanIntervention reports it (the reference's names: a reject-and-continue is `rejectAndContinue`). */
export type HumanAction = 'approve' | 'reject' | 'rejectAndContinue';

/** `afterHumanIntervention`: a human decided (approve, reject, reject and continue). */
export interface AfterHumanInterventionEvent extends AgentHookEvent {
  action: HumanAction;
  toolCallId?: string;
  rejectionReason?: string;
}

/** `onStopByHumanIntervention`: a human's reject halted the run (it ends `interrupted`). */
export interface OnStopByHumanInterventionEvent extends AgentHookEvent {
  toolCallId?: string;
  rejectionReason?: string;
}

/** `beforeCompact`: older messages are about to be summarized. */
export interface BeforeCompactEvent extends AgentHookEvent {
  messageCount: number;
  tokenCount: number;
}

/** `afterCompact`: older messages were replaced by a model-written summary. */
export interface AfterCompactEvent extends AgentHookEvent {
  groupId: string;
  messagesBefore: number;
  messagesAfter: number;
  summary: string;
}

/** `onCompactError`: a compaction failed; the run goes on uncompressed. */
export interface OnCompactErrorEvent extends AgentHookEvent {
  error: string;
  tokenCount: number;
}

/** `beforeCallAgent`: a sub-agent is about to run. CallAgent events dispatch on the parent operation; `agentId` is the sub-agent's. */
export interface BeforeCallAgentEvent extends AgentHookEvent {
  instruction: string;
  callerAgentId: string;
}

/**
 * `afterCallAgent`: a sub-agent operation ended (on the parent operation). Its
 * `threadId` is the sub-agent's thread, `thread_<subOperationId>`, when it started; else the caller's.
 */
export interface AfterCallAgentEvent extends AgentHookEvent {
  subOperationId: string;
  success: boolean;
  callerAgentId: string;
}

/** `onCallAgentError`: a sub-agent operation could not run or failed (on the parent operation). */
export interface OnCallAgentErrorEvent extends AgentHookEvent {
  error: string;
  callerAgentId: string;
  subOperationId?: string;
}

/** Each hook type's event: what a handler of that type receives (`HookEventMap['afterStep']`). */
export interface HookEventMap {
  beforeStep: BeforeStepEvent;
  afterStep: AfterStepEvent;
  onComplete: OnCompleteEvent;
  onError: OnErrorEvent;
  beforeToolCall: BeforeToolCallEvent;
  afterToolCall: AfterToolCallEvent;
  onToolCallError: OnToolCallErrorEvent;
  beforeHumanIntervention: BeforeHumanInterventionEvent;
  afterHumanIntervention: AfterHumanInterventionEvent;
  onStopByHumanIntervention: OnStopByHumanInterventionEvent;
  beforeCompact: BeforeCompactEvent;
  afterCompact: AfterCompactEvent;
  onCompactError: OnCompactErrorEvent;
  beforeCallAgent: BeforeCallAgentEvent;
  afterCallAgent: AfterCallAgentEvent;
  onCallAgentError: OnCallAgentErrorEvent;
}

/** Any hook event. */
export type HookEvent = HookEventMap[HookType];

/** A handler for hook type `T`: gets that type's event; its return value is ignored (a thrown error or rejection is logged, never stops the run). */
export type HookHandler<T extends HookType = HookType> = (event: HookEventMap[T]) => unknown | Promise<unknown>;

/** The hook types that accept a `matcher` (tool events). */
export type ToolHookType = 'beforeToolCall' | 'afterToolCall' | 'onToolCallError';

/** Webhook settings of a hook (validated by webhook-config.ts). */
export interface WebhookConfig {
  url: string;
  delivery?: 'fetch' | 'qstash';
  /** Seconds; default 30. */
  timeout?: number;
  headers?: Record<string, string>;
  allowedEnvVars?: string[];
  eventFields?: string[];
  body?: Record<string, unknown>;
  responseHandling?: 'ignore' | 'toolCall';
  onError?: 'continue' | 'block';
  fallback?: 'fetch' | 'none';
}

/**
 * A hook of one type, as the caller registers it: its `handler` gets exactly
 * `HookEventMap[T]` (a `beforeToolCall` handler sees `args` and `mock()`), and
 * `matcher` exists only on the tool types (beforeToolCall, afterToolCall,
 * onToolCallError; the dispatcher refuses it elsewhere too).
 */
export interface AgentHookOf<T extends HookType> {
  /** Unique among the operation's hooks. */
  id: string;
  type: T;
  /** An re2 regex on `identifier/apiName`; only on tool types. */
  matcher?: T extends ToolHookType ? string : never;
  /** In-process only: not persisted, so it does not survive a restart. */
  handler?: HookHandler<T>;
  /** Delivered over HTTP; persisted with the operation. */
  webhook?: WebhookConfig;
}

/**
 * A hook as the caller registers it through `execAgent({ hooks })`: a union
 * discriminated by `type`, so in
 * `{ type: 'beforeToolCall', handler: (e) => e.mock(...) }` the handler's `e`
 * is a {@link BeforeToolCallEvent} without a cast. `AgentHook<'afterStep'>`
 * names one member.
 */
export type AgentHook<T extends HookType = HookType> = { [K in T]: AgentHookOf<K> }[T];

/** What is persisted: everything but the function. */
export interface SerializedHook {
  id: string;
  type: HookType;
  matcher?: string;
  webhook: WebhookConfig;
}

/** A control's verdict on a tool call or its result. */
export type ControlVerdict =
  | { decision: 'allow' }
  | { decision: 'blocked'; reason: string; classification: 'hook_denied' | 'hook_control_error'; hookId: string }
  | { decision: 'cancelled' };
