import { HookgateError } from '../errors.js';
import type { ToolCall, ToolResult } from '../messages.js';
import { toFunctionName } from '../model-tool-names.js';
import { toolMapOf } from './agent-source-view.js';
import { toolCallContext, type RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { executeToolCall } from './tool-call-execution.js';
import { admitToolCalls, gateToolCall, toolEntryFor } from './tool-call-gate.js';
import { controlResult } from './tool-result-control.js';

/**
 * `state.invokeTool()` of document 003: a thread hook runs a tool now and
 * gets its result. No tool hook runs for it (no `tool_call_started` /
 * `tool_call_done`, no result hooks) and nothing is stored, but it is never a
 * way around the gate: the call gets a minted identity and frozen,
 * schema-checked arguments and passes the same stages as a model's call
 * (allow-list, arguments, approval, policies, control webhooks, mocks), then
 * result control. A call that needs a human's approval is refused (a hook
 * cannot park the run).
 */

/** The most JSON characters of arguments a hook may pass to a tool (a model's calls are bounded by its output). */
export const MAX_HOOK_TOOL_ARGS_CHARS = 1_000_000;

/**
 * The tool a hook names, by the function name the model is offered
 * (`toFunctionName`) or `identifier/apiName`, compared exactly: a name that
 * differs by case or by a look-alike character names no tool. Undefined when
 * no tool of the agent has that name.
 */
export function toolNamed(deps: RuntimeDeps, op: RunningOperation, name: string): { identifier: string; apiName: string } | undefined {
  for (const entry of toolMapOf(op.agent, deps.tools).values()) {
    const { identifier, apiName } = entry.tool;
    if (name === `${identifier}/${apiName}` || name === toFunctionName(identifier, apiName)) return { identifier, apiName };
  }
  return undefined;
}

/**
 * A hook's tool call as the gate takes it: the name resolved, the arguments
 * checked (a JSON object within MAX_HOOK_TOOL_ARGS_CHARS) and admitted like
 * a model's (minted id, deep-frozen, schema-checked). Throws
 * THREAD_HOOK_INVALID for a malformed request; an unknown name resolves to
 * `undefined` (the caller answers with the gate's "does not exist").
 */
export function hookToolCall(deps: RuntimeDeps, op: RunningOperation, name: unknown, args: unknown, method: string): ToolCall | { unknown: string } {
  if (typeof name !== 'string' || name === '') throw new HookgateError('THREAD_HOOK_INVALID', `${method}: the tool name must be a non-empty string`);
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new HookgateError('THREAD_HOOK_INVALID', `${method}("${name.slice(0, 64)}"): the arguments must be an object`);
  let size: number;
  try {
    size = JSON.stringify(args).length;
  } catch (err) {
    throw new HookgateError('THREAD_HOOK_INVALID', `${method}("${name.slice(0, 64)}"): the arguments must be JSON (${(err as Error).message})`);
  }
  if (size > MAX_HOOK_TOOL_ARGS_CHARS) throw new HookgateError('THREAD_HOOK_INVALID', `${method}("${name.slice(0, 64)}"): the arguments are ${size} JSON characters, more than ${MAX_HOOK_TOOL_ARGS_CHARS}`);
  const named = toolNamed(deps, op, name);
  if (named === undefined) return { unknown: name };
  return admitToolCalls(deps, op.agent, [{ id: '', identifier: named.identifier, apiName: named.apiName, args: args as Record<string, unknown> }])[0]!;
}

/**
 * Runs one tool for a hook through the gate and result control, and
 * resolves with the result (a denial is a failed result, as the model would
 * see it). Rejects with THREAD_HOOK_INVALID for a malformed request, and
 * with THREAD_HOOK_TOOL_CANCELLED when the operation is aborted meanwhile.
 */
export async function invokeToolNow(deps: RuntimeDeps, op: RunningOperation, name: unknown, args: unknown): Promise<ToolResult> {
  const call = hookToolCall(deps, op, name, args, 'invokeTool');
  if ('unknown' in call) return refusal(`Tool "${call.unknown.slice(0, 200)}" does not exist.`, 'tool_not_found');
  const entry = toolEntryFor(deps, op.agent, call);
  const context = toolCallContext(op, call, op.record.state.stepIndex, entry?.tool.toolSource);
  const verdict = await gateToolCall(deps, op, call, context, entry);
  switch (verdict.kind) {
    case 'cancelled':
      throw cancelled(op);
    case 'needs_approval':
      return refusal(`Tool "${call.identifier}/${call.apiName}" needs a human's approval; a hook cannot invoke it.`, 'tool_not_allowed');
    case 'denied':
      return verdict.result;
    default:
      break;
  }
  const mocked = verdict.kind === 'mocked';
  const execution = await executeToolCall(deps, op, call, context, mocked ? { mocked: verdict.result } : { entry: entry! });
  if (execution.kind === 'cancelled') throw cancelled(op);
  if (execution.kind !== 'result') return refusal(`Tool "${call.identifier}/${call.apiName}" answers later or delegates; a hook cannot invoke it.`, 'tool_error');
  const result = await controlResult(deps, op, context, execution.result, mocked);
  if (result === 'cancelled') throw cancelled(op);
  return result;
}

function refusal(content: string, error: string): ToolResult {
  return { content, success: false, error, executionTime: 0 };
}

function cancelled(op: RunningOperation): HookgateError {
  return new HookgateError('THREAD_HOOK_TOOL_CANCELLED', `operation ${op.record.id} was cancelled while a hook invoked a tool`);
}
