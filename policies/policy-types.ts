import type RE2 from 're2';

/** Hook events a policy can decide on. */
export const POLICY_EVENTS = ['beforeToolCall', 'afterToolCall', 'onToolCallError'] as const;
/** A hook event a policy can decide on. */
export type PolicyEventName = (typeof POLICY_EVENTS)[number];

export const POLICY_EFFECTS = ['allow', 'deny', 'ask', 'redact'] as const;
/** What a policy does when it matches: allow, deny, ask (park for a human), redact (rewrite the result). */
export type PolicyEffect = (typeof POLICY_EFFECTS)[number];

/** Why `ask` is refused on afterToolCall / onToolCallError: only a call that has not run yet can wait for a human. */
export const ASK_ON_RESULT = 'effect "ask" applies only to beforeToolCall; a tool result cannot wait for a human (use deny or redact)';

export type PolicyMode = 'enforce' | 'shadow';

/** A `reason`: literal text, or a JSONata expression (`{ expr: ... }`) evaluated in a worker. */
export type PolicyReason = { text: string } | { expr: string };

/** One re2 rewrite applied to tool results. */
export interface CompiledRedaction {
  source: string;
  re: RE2;
  replacement: string;
}

/** A re2 matcher on one argument (dotted path into `args`). */
export interface ArgMatcher {
  path: string[];
  source: string;
  re: RE2;
}

/** An inline test: an event in, the expected outcome out. */
export interface InlineTest {
  name: string;
  /** Where the test was declared (policy id, or undefined for pack-level tests). */
  policyId?: string;
  event: Record<string, unknown>;
  expect: { effect: PolicyEffect; reason?: string; content?: string };
}

/** A policy after validation and compilation; immutable once in a set. */
export interface CompiledPolicy {
  id: string;
  description?: string;
  packName: string;
  packFile: string;
  /** Content digest of the pack (YAML and code modules): the worker cache key prefix. */
  packVersion: string;
  events: ReadonlySet<PolicyEventName>;
  /** re2 on `identifier/apiName` (the policy set compiles it into one RE2.Set); undefined matches every tool. */
  matchSource?: string;
  args: ArgMatcher[];
  /** JSONata source; compiled once per worker. */
  when?: string;
  /** Undefined only for code policies (the module decides). */
  effect?: PolicyEffect;
  reason?: PolicyReason;
  redact: CompiledRedaction[];
  mode: PolicyMode;
  /** Absolute path of a code policy module. */
  module?: string;
  tests: InlineTest[];
  /** True when a worker must be asked (a `when`, a `reason` expression or a code policy). */
  needsWorker: boolean;
}

export interface CompiledPack {
  name: string;
  description?: string;
  file: string;
  version: string;
  policies: CompiledPolicy[];
  /** Pack-level tests plus every policy's tests. */
  tests: InlineTest[];
}

/** A load problem: always names the file, and the policy id and field when known. */
export interface PolicyLoadError {
  file: string;
  policyId?: string;
  field?: string;
  message: string;
}

export function formatLoadError(e: PolicyLoadError): string {
  const where = [e.file, e.policyId ? `policy "${e.policyId}"` : undefined, e.field ? `field "${e.field}"` : undefined]
    .filter((s) => s !== undefined)
    .join(': ');
  return `${where}: ${e.message}`;
}
