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
import type { EvaluateOutcome, EvaluateTask, JsonataLimits } from './worker/worker-protocol.js';

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
}

export type EvaluableEvent = { identifier: string; apiName: string; args?: Record<string, unknown>; result?: ToolResult } & object;

const MAX_ERROR_CHARS = 300;

/**
 * Decides one event against one policy set. Candidates come from re2 matchers
 * in this thread; those needing a `when`, a reason expression or code go to
 * the pool in parallel under one deadline (`settings.deadlineMs`, or `signal`
 * aborting first). Never rejects: every failure becomes a fail-closed verdict.
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
  if (candidates.length > 0) verdicts = await decideCandidates(pool, settings, candidates, inputs, signal);
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
): Promise<PolicyVerdict[]> {
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
  const controller = new AbortController();
  let deadlineHit = false;
  const timer = setTimeout(() => {
    deadlineHit = true;
    controller.abort(new Error('deadline'));
  }, settings.deadlineMs);
  const onAbort = () => controller.abort(new Error('cancelled'));
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.all(
      remote.map(async (i) => {
        const [policy, eventType] = candidates[i]!;
        const task: EvaluateTask = {
          kind: 'evaluate',
          key: `${policy.packVersion}:${policy.id}`,
          policyId: policy.id,
          when: policy.when,
          reasonExpr: policy.reason && 'expr' in policy.reason ? policy.reason.expr : undefined,
          module: policy.module,
          limits: settings.limits,
          input: eventType === input.type ? input : { ...input, type: eventType },
        };
        try {
          const out = await pool.run<EvaluateOutcome>(task, controller.signal);
          verdicts[i] = fromOutcome(policy, out);
        } catch (err) {
          verdicts[i] = failure(policy, describeFailure(err, deadlineHit, settings.deadlineMs));
        }
      }),
    );
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
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

/** Names the failure for a fail-closed reason. */
export function describeFailure(err: unknown, deadlineHit: boolean, deadlineMs: number): string {
  const e = err as { name?: string; code?: string; message?: string } | null;
  const message = e?.message ?? String(err);
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'worker ran out of memory (resource limit reached, worker terminated)';
  if (e?.name === 'AbortError') return deadlineHit ? `timed out after the ${deadlineMs}ms deadline (worker terminated)` : 'cancelled by the caller';
  if (/worker exited|terminated/i.test(message)) return `worker crashed (${message})`;
  return `evaluation error: ${message}`;
}
