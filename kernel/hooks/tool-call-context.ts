import { nowIso } from '../clock.js';
import type { ToolCall } from '../messages.js';
import type { ToolCallHookContext } from './hook-types.js';

/** Run-context associations an operation may carry (from execAgent's `context`). */
export interface ToolRunContext {
  operationId: string;
  agentId: string;
  parentOperationId?: string;
  runtime?: { userId?: string; executionTarget?: string; activeDeviceId?: string };
  origin?: { userId?: string };
  /** topicId, sessionId, threadId, groupId, taskId, workspaceId, documentId, sourceMessageId... */
  associations?: Record<string, string | undefined>;
}

const ASSOCIATION_KEYS = ['topicId', 'sessionId', 'threadId', 'groupId', 'taskId', 'workspaceId', 'documentId', 'sourceMessageId'] as const;

/**
 * Builds the shared context of the three tool events once per tool call.
 * `userId` is `runtime.userId ?? origin.userId`. Optional fields are present
 * only when the run context has them.
 */
export function buildToolCallHookContext(input: {
  call: ToolCall;
  assistantMessageId: string;
  callIndex: number;
  stepIndex: number;
  run: ToolRunContext;
  toolSource?: string;
  toolMessageId?: string;
  executor?: 'server' | 'client';
}): ToolCallHookContext {
  const { call, run } = input;
  const ctx: ToolCallHookContext = {
    toolCallId: call.id,
    assistantMessageId: input.assistantMessageId,
    identifier: call.identifier,
    apiName: call.apiName,
    args: call.args,
    callIndex: input.callIndex,
    stepIndex: input.stepIndex,
    operationId: run.operationId,
    executor: input.executor ?? 'server',
    agentId: run.agentId,
    timestamp: nowIso(),
  };
  for (const key of ASSOCIATION_KEYS) {
    const value = run.associations?.[key];
    if (value !== undefined) ctx[key] = value;
  }
  if (run.parentOperationId !== undefined) ctx.parentOperationId = run.parentOperationId;
  const userId = run.runtime?.userId ?? run.origin?.userId;
  if (userId !== undefined) ctx.userId = userId;
  if (call.nativeId !== undefined) ctx.nativeToolCallId = call.nativeId;
  if (input.toolSource !== undefined) ctx.toolSource = input.toolSource;
  if (input.toolMessageId !== undefined) ctx.toolMessageId = input.toolMessageId;
  if (run.runtime?.executionTarget !== undefined) ctx.executionTarget = run.runtime.executionTarget;
  if (run.runtime?.activeDeviceId !== undefined) ctx.activeDeviceId = run.runtime.activeDeviceId;
  return ctx;
}
