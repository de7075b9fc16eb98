import { errorMessage } from '../errors.js';
import type { ControlVerdict, PendingTool, ToolCallHookContext } from '../hooks/hook-types.js';
import type { MockOutcome } from '../hooks/hook-dispatcher.js';
import type { ToolCall, ToolResult } from '../messages.js';
import type { CanonicalArgs } from '../tools.js';
import type { AgentDefinition } from '../agent-definition.js';
import { argumentSchemaError } from './argument-schema.js';
import { toolMapOf } from './agent-source-view.js';
import { callFacts, toolEntryIn, type ToolEntry } from './call-facts.js';
import { callAllowed, SUBAGENT_IDENTIFIER, SUBAGENT_PARAMETERS } from './next-step.js';
import { isMintedCallId, mintToolCalls } from './tool-call-identity.js';
import type { OperationState } from '../store.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';

/** What the gate let through, refused, or parked. */
export type GateVerdict =
  /** Every gate said yes: run the tool with the arguments the gates saw. */
  | { kind: 'allowed' }
  /** A local mock supplied the result: nothing runs; the result still passes result control. */
  | { kind: 'mocked'; result: ToolResult }
  /**
   * Refused: nothing runs, the result is published as is. `observed` is false
   * for calls refused before any hook saw them (outside the allow-list, an
   * unknown tool, arguments that fail the schema): no afterToolCall either.
   */
  | { kind: 'denied'; result: ToolResult; observed: boolean }
  /** A human must decide first (the approval requirement or a policy's `ask`). */
  | { kind: 'needs_approval'; pending: PendingTool }
  | { kind: 'cancelled' };

/**
 * The tool a call of `agent` names among the tools of its step (the agent
 * source's view for the step; the kernel's catalogue for the static
 * source), only when identifier and apiName match exactly (no `a/b` + `c` vs
 * `a` + `b/c` confusion); remembered per admitted call and tool map
 * (call-facts.ts).
 */
export function toolEntryFor(deps: RuntimeDeps, agent: AgentDefinition, call: ToolCall): ToolEntry | undefined {
  return toolEntryIn(toolMapOf(agent, deps.tools), agent, call);
}

/**
 * The tool calls of a model turn as the runtime stores and gates them: a
 * minted identity each, deep-frozen arguments, and `argumentError` for
 * arguments the tool's input schema refuses (checked here, once, so no
 * policy ever sees them). Calls the agent may not make are left for the
 * gate's allow-list. Synchronous; never throws.
 */
export function admitToolCalls(deps: RuntimeDeps, agent: AgentDefinition, calls: readonly ToolCall[], options?: { keepIds?: boolean }): ToolCall[] {
  if (calls.length === 0) return [];
  const minted = mintToolCalls(calls, options);
  for (let i = 0; i < minted.length; i++) {
    const call = minted[i]!;
    if (call.argumentError !== undefined || !callAllowed(agent, call)) continue;
    const schema = call.identifier === SUBAGENT_IDENTIFIER ? SUBAGENT_PARAMETERS : toolEntryFor(deps, agent, call)?.tool.parameters;
    const problem = argumentSchemaError(call, schema as Record<string, unknown> | undefined, call.args);
    if (problem !== undefined) minted[i] = Object.freeze({ ...call, argumentError: problem });
    else checkedAgainst.set(call, schema);
  }
  return minted;
}

/**
 * The input schema each call's arguments were found valid against (at
 * admission, or later at the gate), per frozen call. The agent's tools can
 * change between the model turn and the call's step (an agent source's view
 * per step): a call admitted while its tool was not allowed, absent or
 * different is checked at the gate against the tool it would run.
 */
const checkedAgainst = new WeakMap<ToolCall, object | undefined>();

/** Why the call's arguments fail the schema of what it would run now, unless they already passed that very schema. */
function argumentErrorNow(call: ToolCall, entry: ToolEntry | undefined): string | undefined {
  const schema = call.identifier === SUBAGENT_IDENTIFIER ? SUBAGENT_PARAMETERS : entry?.tool.parameters;
  if (checkedAgainst.has(call) && checkedAgainst.get(call) === schema) return undefined;
  const problem = argumentSchemaError(call, schema as Record<string, unknown> | undefined, call.args);
  if (problem === undefined && Object.isFrozen(call)) checkedAgainst.set(call, schema);
  return problem;
}

/**
 * An operation stored before call identities were minted (its pending calls
 * carry the model's ids): approvals recorded under such ids are dropped, as
 * nothing tells which call they were given for (a model may reuse an id), so
 * a human is asked again; its pending calls get frozen arguments and the
 * schema check, keeping their ids. Returns the state unchanged when there is
 * nothing to do.
 */
export function readmitLegacyState(deps: RuntimeDeps, agent: AgentDefinition, state: OperationState): OperationState {
  const legacyCalls = state.pendingToolCalls.some((c) => !isMintedCallId(c.id));
  const legacyApprovals = state.approvedToolCallIds.some((id) => !isMintedCallId(id));
  if (!legacyCalls && !legacyApprovals) return state;
  return {
    ...state,
    approvedToolCallIds: state.approvedToolCallIds.filter(isMintedCallId),
    pendingToolCalls: legacyCalls ? admitToolCalls(deps, agent, state.pendingToolCalls, { keepIds: true }) : state.pendingToolCalls,
  };
}

/**
 * The one gate every kind of tool call passes (builtin, plugin tool sources,
 * sub-agents), in this order; the first stage that refuses ends it:
 *
 * 1. allow-list and existence: a call the agent may not make, or of a tool
 *    nobody provides, gets `tool_not_allowed` / `tool_not_found` before any
 *    policy, webhook, decision log or mock sees it;
 * 2. arguments: refused by the input schema (or too deep) at the model turn,
 *    answered here with `invalid_arguments` (the model may retry);
 * 3. the approval requirement (`approval.tools`): parks until a human decides;
 * 4. policies, on the arguments and their canonical form (`canonical`, from
 *    the tool source): deny refuses, `ask` parks unless a human approved this
 *    very call;
 * 5. webhook controls (the caller's in order, then environment hooks);
 * 6. beforeToolCall handlers with `mock()` (and observation webhooks, in the
 *    background).
 *
 * Every stage sees the same deep-frozen arguments (`context.args`, which is
 * `call.args`), so what runs is what the gates saw and what is stored. An
 * approval counts only for the call identity it was given for.
 */
export function gateToolCall(
  deps: RuntimeDeps,
  op: RunningOperation,
  call: ToolCall,
  context: ToolCallHookContext,
  /** `toolEntryFor(deps, op.agent, call)`, which the caller already looked up (undefined for sub-agent calls). */
  entry: ToolEntry | undefined,
): GateVerdict | Promise<GateVerdict> {
  const isSubagent = call.identifier === SUBAGENT_IDENTIFIER;

  // 1-2. Nothing downstream sees these calls.
  const facts = callFacts(op.agent, call);
  if (!facts.allowed) return refused(`Tool "${nameOf(call)}" is not available to this agent.`, 'tool_not_allowed');
  if (!isSubagent && !entry) return refused(`Tool "${nameOf(call)}" does not exist.`, 'tool_not_found');
  const argumentError = call.argumentError ?? argumentErrorNow(call, entry);
  if (argumentError !== undefined) return refused(`Error: ${argumentError}. Fix the arguments and call the tool again.`, 'invalid_arguments');

  // 3. The approval requirement; no policy or control is asked while waiting.
  const approved = op.record.state.approvedToolCallIds.includes(call.id);
  if (!approved && facts.needsApproval) return { kind: 'needs_approval', pending: pendingTool(call, 'This tool needs approval.') };

  // 4-6. Synchronous while nothing is asynchronous: no policy, no control webhook, handlers that return no promise.
  // (With a source's canonicalArgs the policy stage always runs: a failure to derive them denies, as it always did.)
  if (deps.policies.length > 0 && (entry?.source.canonicalArgs !== undefined || anyPolicyMayDecide(deps))) return policyStage(deps, op, call, context, entry, approved);
  if (deps.dispatcher.mightHandle(op.record.id, 'beforeToolCall', 'control')) return controlStage(deps, op, context);
  return mockStage(deps, op, context);
}

/** Whether a policy would decide a beforeToolCall (a policy engine without packs never does: `mayDecide`). */
function anyPolicyMayDecide(deps: RuntimeDeps): boolean {
  // Indexed: runs for every tool call, and a loop without an iterator costs least.
  for (let i = 0; i < deps.policies.length; i++) if (deps.policies[i]!.mayDecide?.('beforeToolCall') !== false) return true;
  return false;
}

/** 4. Policies (in-process controls, before webhooks: a local deny costs no HTTP call), then 5 and 6. */
async function policyStage(
  deps: RuntimeDeps,
  op: RunningOperation,
  call: ToolCall,
  context: ToolCallHookContext,
  entry: ToolEntry | undefined,
  approved: boolean,
): Promise<GateVerdict> {
  const signal = op.abort.signal;
  let policyEvent: ToolCallHookContext & { canonical?: CanonicalArgs } = context;
  if (entry?.source.canonicalArgs) {
    try {
      const canonical = await entry.source.canonicalArgs({ identifier: call.identifier, apiName: call.apiName, args: call.args });
      policyEvent = { ...context, canonical };
    } catch (err) {
      // Fail closed: a policy must never decide on a spelling the tool would resolve differently.
      return denied(`Blocked: what the arguments of ${nameOf(call)} name could not be determined (${errorMessage(err)}).`);
    }
  }
  for (const policy of deps.policies) {
    if (policy.mayDecide?.('beforeToolCall') === false) continue;
    const decision = await policy.evaluateToolCall(policyEvent, signal);
    if (decision.effect === 'deny') return denied(decision.reason ?? 'Blocked by policy.', decision.classification);
    if (decision.effect === 'ask' && !approved) return { kind: 'needs_approval', pending: pendingTool(call, decision.reason) };
  }
  if (deps.dispatcher.mightHandle(op.record.id, 'beforeToolCall', 'control')) return controlStage(deps, op, context);
  return mockStage(deps, op, context);
}

/** 5. Webhook controls, then 6. */
async function controlStage(deps: RuntimeDeps, op: RunningOperation, context: ToolCallHookContext): Promise<GateVerdict> {
  const verdict: ControlVerdict = await deps.dispatcher.evaluateToolCall(op.record.id, context, op.abort.signal);
  if (verdict.decision === 'cancelled') return CANCELLED;
  if (verdict.decision === 'blocked') return { kind: 'denied', result: blockedResult(verdict.reason, verdict.classification), observed: true };
  return mockStage(deps, op, context);
}

/** 6. Observation webhooks (in the background; they never block execution), then mocks. */
function mockStage(deps: RuntimeDeps, op: RunningOperation, context: ToolCallHookContext): GateVerdict | Promise<GateVerdict> {
  const operationId = op.record.id;
  const signal = op.abort.signal;
  if (deps.dispatcher.mightHandle(operationId, 'beforeToolCall', 'webhook-notification')) {
    void deps.dispatcher.dispatch(operationId, 'beforeToolCall', context as never, { signal, webhooksOnly: true }).catch((err) =>
      deps.logger.warn('beforeToolCall observation failed', { operationId, error: errorMessage(err) }),
    );
  }
  const mock = deps.dispatcher.runMockHandlers(operationId, context);
  return mock instanceof Promise ? mock.then((m) => mockVerdict(m, signal)) : mockVerdict(mock, signal);
}

function mockVerdict(mock: MockOutcome, signal: AbortSignal): GateVerdict {
  if (signal.aborted) return CANCELLED;
  if (mock) return { kind: 'mocked', result: { success: true, executionTime: 0, ...mock.result } };
  return ALLOWED;
}

// Verdicts without data, shared (frozen) instead of built for every call.
const ALLOWED: GateVerdict = Object.freeze({ kind: 'allowed' });
const CANCELLED: GateVerdict = Object.freeze({ kind: 'cancelled' });

/** `identifier/apiName`, for messages (built only when one is needed). */
function nameOf(call: ToolCall): string {
  return `${call.identifier}/${call.apiName}`;
}

/** The results the gate or its result control made for a denial (so no later stage can turn them back into an answer). */
const gateDenials = new WeakSet<ToolResult>();

/** The result of a denied or control-failed call: costs nothing, runs nothing. */
export function blockedResult(reason: string, classification: 'hook_denied' | 'hook_control_error' | 'policy_overloaded'): ToolResult {
  const result: ToolResult = { content: reason, error: classification, executionTime: 0, state: { type: 'blocked', reason }, success: false };
  gateDenials.add(result);
  return result;
}

/** Whether `result` is a denial the gate or result control made ({@link blockedResult}): thread hooks never rewrite it. */
export function isGateDenial(result: ToolResult): boolean {
  return gateDenials.has(result);
}

function denied(reason: string, classification: 'hook_denied' | 'policy_overloaded' = 'hook_denied'): GateVerdict {
  return { kind: 'denied', result: blockedResult(reason, classification), observed: true };
}

function refused(content: string, error: 'tool_not_allowed' | 'tool_not_found' | 'invalid_arguments'): GateVerdict {
  return { kind: 'denied', result: { content, success: false, error, executionTime: 0 }, observed: false };
}

export function pendingTool(call: ToolCall, reason: string | undefined): PendingTool {
  const pending: PendingTool = { toolCallId: call.id, identifier: call.identifier, apiName: call.apiName, args: call.args };
  if (call.nativeId !== undefined) pending.nativeToolCallId = call.nativeId;
  if (reason !== undefined) pending.reason = reason;
  return pending;
}
