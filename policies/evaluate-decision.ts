import type { ToolResult } from '../kernel/messages.js';
import type { CanonicalArgs } from '../kernel/tools.js';
import { applyRedactions } from './apply-redactions.js';
import { canonicalScanStrings } from './canonical-args.js';
import { nestingDepthExceeds } from './canonical-json.js';
import { combineVerdicts, type CombinedDecision, type PolicyVerdict } from './combine-decisions.js';
import { policyInputs, toolKey, type PolicyInputs } from './policy-input.js';
import type { PolicyPool } from './policy-pool.js';
import type { PolicySet } from './policy-set.js';
import type { CompiledPolicy, CompiledRedaction, PolicyEventName } from './policy-types.js';
import { compileRe2 } from './re2-compile.js';
import type { ConditionTask, EvaluateOutcome, JsonataLimits } from './worker/worker-protocol.js';

export interface EvaluationSettings {
  deadlineMs: number;
  defaultDecision: 'allow' | 'deny';
  limits: JsonataLimits;
  /** Inputs nested deeper than this are not sent to workers (fail closed). */
  maxInputDepth: number;
}

/** A decision with everything the log and `policy eval` show. */
export interface PolicyEvaluation extends CombinedDecision {
  type: PolicyEventName;
  verdicts: PolicyVerdict[];
  redactedResult?: ToolResult;
  latencyMicros: number;
  input: Record<string, unknown>;
  /**
   * Set when the pool was at capacity and refused the decision: no policy
   * decided (no verdicts), the effect is a fail-closed deny with the
   * `policy_overloaded` reason, and nothing of it belongs in the decision log.
   */
  overloaded?: true;
}

/** The classification of a decision refused because the worker pool was at capacity (not a policy's decision). */
export const POLICY_OVERLOADED = 'policy_overloaded';

/**
 * What the model (as the tool result's content) and hooks (`state.reason`)
 * read for a refused decision: the classification first, then that no policy
 * decided, what happened to the call, and that it is worth trying again.
 */
export function overloadedReason(type: 'beforeToolCall' | 'afterToolCall', capacity: number): string {
  const full = `the policy engine is at capacity (${capacity.toLocaleString('en-US')} decision${capacity === 1 ? '' : 's'} in flight)`;
  return type === 'beforeToolCall'
    ? `${POLICY_OVERLOADED}: ${full}, so no policy evaluated this tool call and it did not run. It may succeed if called again later.`
    : `${POLICY_OVERLOADED}: ${full}, so no policy checked this tool result and it is withheld. The tool did run.`;
}

function overloaded(type: 'beforeToolCall' | 'afterToolCall', input: Record<string, unknown>, capacity: number, started: bigint): PolicyEvaluation {
  return {
    type,
    effect: 'deny',
    decision: 'deny',
    reason: overloadedReason(type, capacity),
    policyIds: [],
    redactions: [],
    defaulted: false,
    verdicts: [],
    input,
    latencyMicros: Number(process.hrtime.bigint() - started) / 1000,
    overloaded: true,
  };
}

export type EvaluableEvent = { identifier: string; apiName: string; args?: Record<string, unknown>; result?: ToolResult } & object;

const MAX_ERROR_CHARS = 300;

/**
 * Decides one event against one policy set. Candidates come from re2 matchers
 * in this thread; those needing a `when`, a reason expression or code go to
 * the pool together, each under `settings.deadlineMs` from when a worker
 * starts it (`signal` aborting cancels). Never rejects: every failure becomes
 * a fail-closed verdict, and a pool at capacity an `overloaded` evaluation.
 * With no candidate it resolves without touching the pool.
 *
 * `fullInput` (default true): the evaluation's `input` is what policies see
 * (`policyInput`, with the derived canonical forms). False: it may be the
 * input the decision log digests instead (see `PolicyInputs`; same digest),
 * so a decision no policy reads the input of derives no canonical form.
 */
export async function evaluateEvent(
  set: PolicySet,
  pool: PolicyPool,
  settings: EvaluationSettings,
  type: 'beforeToolCall' | 'afterToolCall',
  event: EvaluableEvent,
  signal?: AbortSignal,
  options?: { fullInput?: boolean },
): Promise<PolicyEvaluation> {
  const started = process.hrtime.bigint();
  const key = toolKey(event);
  const inputs = policyInputs(type, event);
  const failed = type === 'afterToolCall' && event.result?.success === false;
  // `'*'` matchers also scan the canonical forms: `app//.env/.` is matched as `app/.env`.
  let scanned: string[] | undefined;
  const canonicalStrings = () => (scanned ??= canonicalScanStrings(inputs.full().canonical as CanonicalArgs | undefined));
  let candidates: Array<[CompiledPolicy, PolicyEventName]> = set.candidates(type, key, event.args, canonicalStrings).map((p) => [p, type]);
  if (failed) {
    const errorCandidates = set.candidates('onToolCallError', key, event.args, canonicalStrings);
    if (errorCandidates.length > 0) {
      const byPolicy = new Map(candidates);
      for (const p of errorCandidates) byPolicy.set(p, 'onToolCallError');
      candidates = [...byPolicy].sort((a, b) => set.order.get(a[0])! - set.order.get(b[0])!);
    }
  }
  let verdicts: PolicyVerdict[] = [];
  if (candidates.length > 0) {
    const decided = await decideCandidates(pool, settings, candidates, inputs, signal);
    if (decided === 'overloaded') return overloaded(type, options?.fullInput === false ? inputs.digested : inputs.full(), pool.maxInFlight, started);
    verdicts = decided;
  }
  const defaultEffect = type === 'beforeToolCall' ? settings.defaultDecision : 'allow';
  const combined = combineVerdicts(verdicts, defaultEffect);
  const input = options?.fullInput === false ? inputs.digested : inputs.full();
  const evaluation: PolicyEvaluation = { ...combined, type, verdicts, input, latencyMicros: 0 };
  if (event.result !== undefined && combined.redactions.length > 0) {
    const redacted = applyRedactions(event.result, combined.redactions);
    // A redaction that matched nothing changed nothing: log it as the allow it was.
    if (redacted !== event.result) evaluation.redactedResult = redacted;
    else if (evaluation.decision === 'redact') evaluation.decision = 'allow';
  }
  evaluation.latencyMicros = Number(process.hrtime.bigint() - started) / 1000;
  return evaluation;
}

async function decideCandidates(
  pool: PolicyPool,
  settings: EvaluationSettings,
  candidates: Array<[CompiledPolicy, PolicyEventName]>,
  inputs: PolicyInputs,
  signal: AbortSignal | undefined,
): Promise<PolicyVerdict[] | 'overloaded'> {
  const verdicts: PolicyVerdict[] = new Array(candidates.length);
  const remote: number[] = [];
  candidates.forEach(([p], i) => {
    if (p.needsWorker) remote.push(i);
    else verdicts[i] = { policy: p, matched: true, effect: p.effect, reason: reasonText(p), redact: p.redact };
  });
  if (remote.length === 0) return verdicts;

  const input = inputs.full();
  if (nestingDepthExceeds(input, settings.maxInputDepth)) {
    for (const i of remote) verdicts[i] = failure(candidates[i]![0], `input is nested deeper than ${settings.maxInputDepth} levels`);
    return verdicts;
  }
  const conditions: ConditionTask[] = remote.map((i) => {
    const [policy, eventType] = candidates[i]!;
    const task: ConditionTask = { key: `${policy.packVersion}:${policy.id}`, policyId: policy.id, limits: settings.limits, input };
    if (policy.when !== undefined) task.when = policy.when;
    if (policy.reason && 'expr' in policy.reason) task.reasonExpr = policy.reason.expr;
    if (policy.module !== undefined) task.module = policy.module;
    if (eventType !== input.type) task.eventType = eventType;
    return task;
  });
  const pending = pool.evaluate(conditions, settings.deadlineMs, signal);
  if (pending === 'overloaded') return 'overloaded';
  const results = await pending;
  remote.forEach((ci, k) => {
    const policy = candidates[ci]![0];
    const r = results[k]!;
    verdicts[ci] = r.ok ? fromOutcome(policy, r.outcome) : failure(policy, r.failure);
  });
  return verdicts;
}

function fromOutcome(policy: CompiledPolicy, out: EvaluateOutcome): PolicyVerdict {
  if (out.error !== undefined) return failure(policy, `evaluation error: ${out.error}`);
  if (!out.matched) return { policy, matched: false, redact: [] };
  let redact: CompiledRedaction[] = policy.redact;
  if (out.redact) {
    try {
      redact = out.redact.map((r) => ({ source: r.pattern, re: compileRe2(r.pattern, 'g' + (r.flags ?? '')), replacement: r.replacement ?? '[REDACTED]' }));
    } catch (err) {
      return failure(policy, `evaluation error: ${(err as Error).message}`);
    }
  }
  return { policy, matched: true, effect: policy.effect ?? out.effect, reason: out.reason ?? reasonText(policy), redact };
}

function failure(policy: CompiledPolicy, error: string): PolicyVerdict {
  return { policy, matched: true, effect: 'deny', redact: [], error: error.length > MAX_ERROR_CHARS ? error.slice(0, MAX_ERROR_CHARS) + '…' : error };
}

function reasonText(p: CompiledPolicy): string | undefined {
  return p.reason && 'text' in p.reason ? p.reason.text : undefined;
}
