import type { CompiledPolicy, CompiledRedaction, PolicyEffect } from './policy-types.js';

/** One candidate policy's outcome for one event. */
export interface PolicyVerdict {
  policy: CompiledPolicy;
  /** The policy applies (its `when` held, or its module returned a verdict). */
  matched: boolean;
  effect?: PolicyEffect;
  reason?: string;
  redact: CompiledRedaction[];
  /** Set when evaluation failed; an enforced failure is a deny (fail closed). */
  error?: string;
}

export interface CombinedDecision {
  effect: 'allow' | 'deny' | 'ask';
  /** As logged: `redact` when an allowed result was rewritten. */
  decision: 'allow' | 'deny' | 'ask' | 'redact';
  reason?: string;
  policyIds: string[];
  /** Enforced redactions, in pack order. */
  redactions: CompiledRedaction[];
  defaulted: boolean;
}

/**
 * Deny wins over ask, ask over allow; shadow verdicts never count; an
 * enforced verdict with an error counts as deny. With no enforced verdict the
 * configured default decides (`defaulted`). Redactions compose in pack order.
 */
export function combineVerdicts(verdicts: readonly PolicyVerdict[], defaultEffect: 'allow' | 'deny'): CombinedDecision {
  const enforced = verdicts.filter((v) => v.policy.mode === 'enforce' && (v.matched || v.error !== undefined));
  const redactions = enforced.filter((v) => v.error === undefined && v.effect === 'redact').flatMap((v) => v.redact);
  const withEffect = (effect: PolicyEffect) => enforced.filter((v) => effectOf(v) === effect);
  for (const effect of ['deny', 'ask'] as const) {
    const winners = withEffect(effect);
    if (winners.length > 0) {
      return { effect, decision: effect, reason: joinReasons(winners, effect), policyIds: winners.map((v) => v.policy.id), redactions, defaulted: false };
    }
  }
  const allowed = enforced.filter((v) => effectOf(v) === 'allow' || effectOf(v) === 'redact');
  if (allowed.length > 0) {
    const redacting = redactions.length > 0;
    return {
      effect: 'allow',
      decision: redacting ? 'redact' : 'allow',
      reason: joinReasons(allowed, redacting ? 'redact' : 'allow'),
      policyIds: allowed.map((v) => v.policy.id),
      redactions,
      defaulted: false,
    };
  }
  return {
    effect: defaultEffect,
    decision: defaultEffect,
    reason: defaultEffect === 'deny' ? 'no policy allows this tool call (default deny)' : undefined,
    policyIds: [],
    redactions,
    defaulted: true,
  };
}

/** The effect a verdict stands for: a failed evaluation is a deny. */
export function effectOf(v: PolicyVerdict): PolicyEffect | undefined {
  if (v.error !== undefined) return 'deny';
  return v.matched ? v.effect : undefined;
}

function joinReasons(verdicts: readonly PolicyVerdict[], effect: PolicyEffect | 'redact'): string | undefined {
  const reasons = verdicts.map((v) => verdictReason(v, effect)).filter((r): r is string => r !== undefined);
  return reasons.length > 0 ? reasons.join('; ') : undefined;
}

function verdictReason(v: PolicyVerdict, effect: PolicyEffect): string | undefined {
  if (v.error !== undefined) return `policy "${v.policy.id}" failed closed: ${v.error}`;
  if (v.reason !== undefined) return v.reason;
  if (effect === 'deny') return `denied by policy "${v.policy.id}"`;
  if (effect === 'ask') return `policy "${v.policy.id}" asks for approval`;
  return undefined;
}
