import type { ToolCallHookContext } from './hooks/hook-types.js';
import type { ToolResult } from './messages.js';
import type { CanonicalArgs } from './tools.js';

/**
 * An in-process control over tool calls and their results (the policy engine
 * implements it). Asked before webhook controls, so a local deny costs no
 * HTTP call. Must fail closed: an evaluation problem is a deny.
 */
/** A policy set's verdict on a tool call or result. */
export interface ToolPolicyDecision {
  effect: 'allow' | 'deny' | 'ask';
  reason?: string;
  /** Policy ids that decided (for the tool result and the logs). */
  policyIds: string[];
  /** afterToolCall only: the result rewritten by redactions. */
  redactedResult?: ToolResult;
  /** A deny no policy decided (the engine had no capacity): the tool result's error classification instead of `hook_denied`. */
  classification?: 'policy_overloaded';
}

/** An in-process tool policy set (bound to `ToolPolicies`), asked before webhook controls; the policy engine implements it. */
export interface ToolPolicy {
  /** Optional fast check: false when this policy set cannot say anything but allow for the event type (skips the call). */
  mayDecide?(type: 'beforeToolCall' | 'afterToolCall'): boolean;
  /** Whether this policy set has anything to say for the event type at all. */
  evaluateToolCall(event: ToolCallHookContext & { agentId?: string; canonical?: CanonicalArgs }, signal?: AbortSignal): Promise<ToolPolicyDecision>;
  evaluateToolResult(event: ToolCallHookContext & { result: ToolResult; canonical?: CanonicalArgs }, signal?: AbortSignal): Promise<ToolPolicyDecision>;
}
