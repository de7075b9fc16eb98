import { errorMessage } from '../errors.js';
import { MAX_RESULT_DATA_DEPTH, nestsDeeperThan } from '../json-depth.js';
import type { ToolCallHookContext } from '../hooks/hook-types.js';
import type { ToolCall, ToolResult } from '../messages.js';
import type { ToolEntry } from './call-facts.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { openToolLog } from './tool-log.js';
import type { DelegatedToolResult } from '../tools.js';

/** What running an admitted tool call produced, before result control. */
export type ToolExecution =
  /** `threw`: the tool's error message, for onToolCallError (the result says `tool_error`). */
  | { kind: 'result'; result: ToolResult; threw?: string; durationMs: number }
  /** The tool answers later (kernel.completeToolCall); its placeholder is written now. */
  | { kind: 'deferred' }
  /** The tool delegates the call to a sub-agent (DelegatedToolResult): the step starts the child. */
  | { kind: 'delegated'; delegate: DelegatedToolResult['delegate'] }
  /** The operation was aborted while the tool ran: nothing of it is published. */
  | { kind: 'cancelled' };

/**
 * The third stage of a tool call, after the gate let it through: runs the
 * tool (or takes the mock the gate's mock stage returned) and times it. The
 * tool gets exactly what the gates saw: the call's deep-frozen arguments,
 * which nobody can change. A tool that throws produces a `tool_error`
 * result; it never fails the operation, and neither does a result whose
 * `data` nests deeper than MAX_RESULT_DATA_DEPTH (a `tool_error` too).
 */
export async function executeToolCall(
  deps: RuntimeDeps,
  op: RunningOperation,
  call: ToolCall,
  context: ToolCallHookContext,
  run: { entry: ToolEntry } | { mocked: ToolResult },
): Promise<ToolExecution> {
  const operationId = op.record.id;
  const signal = op.abort.signal;
  deps.events.emit({ type: 'tool_started', operationId, stepIndex: context.stepIndex, toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, args: call.args });
  const started = performance.now();
  let result: ToolResult;
  let threw: string | undefined;
  if ('mocked' in run) {
    result = run.mocked;
  } else {
    // Progress lines go to event listeners only, until the call returns (tool-log.ts).
    const progress = openToolLog(deps.events, { operationId, stepIndex: context.stepIndex, toolCallId: call.id, identifier: call.identifier, apiName: call.apiName });
    try {
      const out = await run.entry.source.execute(
        { identifier: call.identifier, apiName: call.apiName, args: call.args },
        { operationId, toolCallId: call.id, agentId: op.agent.id, userId: context.userId, signal, log: progress.log },
      );
      if (typeof out === 'object' && 'deferred' in out && out.deferred === true) return { kind: 'deferred' };
      if (typeof out === 'object' && out !== null && 'delegate' in out) {
        const delegate = delegationOf(out.delegate);
        if (signal.aborted) return { kind: 'cancelled' };
        return { kind: 'delegated', delegate };
      }
      const executionTime = Math.round(performance.now() - started);
      if (typeof out === 'object' && out !== null && nestsDeeperThan((out as { data?: unknown }).data, MAX_RESULT_DATA_DEPTH)) {
        throw new Error(`tool ${call.identifier}/${call.apiName} returned data that nests deeper than ${MAX_RESULT_DATA_DEPTH} levels`);
      }
      result = typeof out === 'string' ? { content: out, success: true, executionTime } : { success: true, ...(out as { content: string }), executionTime };
    } catch (err) {
      threw = errorMessage(err);
      result = { content: `Error: ${threw}`, success: false, error: 'tool_error', executionTime: Math.round(performance.now() - started) };
    } finally {
      progress.close();
    }
  }
  if (signal.aborted) return { kind: 'cancelled' };
  return { kind: 'result', result, ...(threw !== undefined ? { threw } : {}), durationMs: Math.round(performance.now() - started) };
}

/** A tool source's delegation, checked (a malformed one is the tool's error, which the model sees). */
function delegationOf(raw: unknown): DelegatedToolResult['delegate'] {
  const d = raw as Partial<DelegatedToolResult['delegate']> | null;
  if (d === null || typeof d !== 'object' || typeof d.agentId !== 'string' || d.agentId === '' || typeof d.prompt !== 'string' || (d.agentSource !== undefined && typeof d.agentSource !== 'string')) {
    throw new Error('the tool delegated with a malformed delegation (expected { agentId, prompt, agentSource? } strings)');
  }
  return { agentId: d.agentId, prompt: d.prompt, ...(d.agentSource !== undefined ? { agentSource: d.agentSource } : {}) };
}
