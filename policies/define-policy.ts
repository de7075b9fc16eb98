import type { CanonicalArg } from '../kernel/tools.js';
import type { PolicyEffect, PolicyEventName } from './policy-types.js';
import type { RedactRequest } from './worker/worker-protocol.js';

/** What a code policy sees: the event as plain data (`type`, `tool`, identifier, apiName, args, result...). */
export type PolicyEventInput = Record<string, unknown> & {
  type: PolicyEventName;
  tool: string;
  identifier: string;
  apiName: string;
  args: Record<string, unknown>;
  /** What path, URL and command arguments really name (policies/README.md, "Canonical arguments"); absent when none has a canonical form. */
  canonical?: Record<string, CanonicalArg>;
};

/** A code policy's verdict; `undefined`/`null` means it has nothing to say. */
export interface CodePolicyVerdict {
  effect: PolicyEffect;
  reason?: string;
  /** With `effect: 'redact'`: re2 rewrites applied to the result in pack order. */
  redact?: RedactRequest[];
}

/** A code policy (a module in a pack): `definePolicy({ id, events, match?, effects?, evaluate })`. */
export interface CodePolicyDefinition {
  id: string;
  events: PolicyEventName[];
  /** re2 pattern on `identifier/apiName`; omitted matches every tool. */
  match?: string;
  /**
   * The effects `evaluate` may return. Optional; when given, loading (and
   * `hookgate policy check`) refuses what cannot take effect (`ask` when the
   * policy lists only afterToolCall / onToolCallError: a tool result cannot
   * wait for a human), and a verdict outside the list fails closed (deny).
   * Declared or not, an `ask` verdict on a result event fails closed.
   */
  effects?: PolicyEffect[];
  /**
   * Runs only inside a policy worker, under the same deadline and memory
   * limits as JSONata conditions. May be async. Throwing fails closed (deny).
   */
  evaluate(event: PolicyEventInput): CodePolicyVerdict | undefined | null | Promise<CodePolicyVerdict | undefined | null>;
}

/**
 * Declares a code policy: the module's default export. An identity function
 * that exists for typing; a module may also default-export the plain object.
 */
export function definePolicy(definition: CodePolicyDefinition): CodePolicyDefinition {
  return definition;
}
