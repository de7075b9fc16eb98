import type { CanonicalArgs } from '../../kernel/tools.js';
import { canonicalScanStrings } from '../canonical-args.js';
import { effectOf, type PolicyVerdict } from '../combine-decisions.js';
import type { EvaluationSettings, PolicyEvaluation } from '../evaluate-decision.js';
import { evaluateTestEvent } from '../pack-tests.js';
import { toolKey } from '../policy-input.js';
import type { PolicyPool } from '../policy-pool.js';
import { argMatcherAccepts, type PolicySet } from '../policy-set.js';
import type { CompiledPolicy, PolicyEventName } from '../policy-types.js';
import { compileRe2 } from '../re2-compile.js';
import type { ExplainOutcome } from '../worker/worker-protocol.js';
import { branchPoints, type BranchPoint } from './condition-branches.js';
import { parseJsonata } from './jsonata-ast.js';

/** One branch point of a `when` and what this evaluation did there (`not evaluated`: short-circuited or not reached). */
export interface BranchOutcome extends BranchPoint {
  /** Outcomes in evaluation order (a point inside `$map` can be passed more than once). */
  outcomes: boolean[];
}

/** Why one policy did or did not take part in a decision. */
export interface PolicyExplanation {
  id: string;
  pack: string;
  mode: 'enforce' | 'shadow';
  /** The event the policy was asked for (onToolCallError for a failed result it lists). */
  event: PolicyEventName;
  /** `match` and whether it accepted `identifier/apiName`; absent: matches every tool. */
  match?: { pattern: string; hit: boolean };
  args: Array<{ key: string; pattern: string; hit: boolean }>;
  /** The matchers accepted the call, so the policy was evaluated. */
  candidate: boolean;
  /** For an evaluated `when`: its value (absent = undefined) or error, and every branch point. */
  when?: { source: string; value?: unknown; error?: string; branches: BranchOutcome[] };
  /** A code policy decided in its module. */
  module?: string;
  /** The verdict as the decision used it. */
  verdict?: { applies: boolean; effect?: string; reason?: string; error?: string };
  /** What this policy did to the decision, in words. */
  outcome: string;
}

export interface EventExplanation {
  evaluation: PolicyEvaluation;
  tool: string;
  policies: PolicyExplanation[];
  /** Policies that do not run on this event at all. */
  otherEvents: string[];
  /** How the verdicts combined into the decision, step by step. */
  combination: string[];
}

const matchers = new WeakMap<CompiledPolicy, ReturnType<typeof compileRe2> | null>();

/**
 * Decides `raw` (a test or `policy eval` event) exactly as `evaluateTestEvent`
 * does, then explains it: for every policy listening to the event, which
 * matchers accepted the call, what its `when` evaluated to at each branch
 * point (an instrumented copy evaluated in a worker), its verdict, and how
 * the verdicts combined.
 */
export async function explainEvent(set: PolicySet, pool: PolicyPool, settings: EvaluationSettings, raw: Record<string, unknown>): Promise<EventExplanation> {
  const evaluation = await evaluateTestEvent(set, pool, settings, raw);
  const input = evaluation.input;
  const key = toolKey(input as { identifier?: unknown; apiName?: unknown });
  const args = input.args as Record<string, unknown> | undefined;
  const extra = canonicalScanStrings(input.canonical as CanonicalArgs | undefined);
  const failed = evaluation.type === 'afterToolCall' && (input.result as { success?: boolean } | undefined)?.success === false;
  const candidates = new Map<CompiledPolicy, PolicyEventName>();
  if (failed) for (const p of set.candidates('onToolCallError', key, args, () => extra)) candidates.set(p, 'onToolCallError');
  for (const p of set.candidates(evaluation.type, key, args, () => extra)) candidates.set(p, evaluation.type);

  const policies: PolicyExplanation[] = [];
  const otherEvents: string[] = [];
  const pending: Array<Promise<void>> = [];
  for (const policy of set.policies) {
    const event: PolicyEventName | undefined = policy.events.has(evaluation.type) ? evaluation.type : failed && policy.events.has('onToolCallError') ? 'onToolCallError' : undefined;
    if (event === undefined) {
      otherEvents.push(policy.id);
      continue;
    }
    const re = matcherOf(policy);
    const x: PolicyExplanation = {
      id: policy.id,
      pack: policy.packName,
      mode: policy.mode,
      event: candidates.get(policy) ?? event,
      ...(policy.matchSource !== undefined ? { match: { pattern: policy.matchSource, hit: re!.test(key) } } : {}),
      args: policy.args.map((m) => ({ key: m.path.join('.'), pattern: m.source, hit: argMatcherAccepts(m, args, extra) })),
      candidate: candidates.has(policy),
      ...(policy.module !== undefined ? { module: policy.module } : {}),
      outcome: '',
    };
    const verdict = evaluation.verdicts.find((v) => v.policy === policy);
    if (verdict) x.verdict = verdictOf(verdict);
    if (x.candidate && policy.when !== undefined) {
      const when = policy.when;
      const task = { kind: 'explain' as const, when, limits: settings.limits, input: x.event === input.type ? input : { ...input, type: x.event } };
      pending.push(
        pool.run<ExplainOutcome>(task, AbortSignal.timeout(settings.deadlineMs * 4)).then(
          (out) => void (x.when = whenOf(when, out)),
          (err: unknown) => void (x.when = { source: when, error: (err as Error)?.message ?? String(err), branches: [] }),
        ),
      );
    }
    policies.push(x);
  }
  await Promise.all(pending);
  for (const x of policies) x.outcome = outcomeOf(x, evaluation);
  return { evaluation, tool: key, policies, otherEvents, combination: combinationOf(evaluation, settings) };
}

function matcherOf(policy: CompiledPolicy): ReturnType<typeof compileRe2> | null {
  let re = matchers.get(policy);
  if (re === undefined) {
    re = policy.matchSource === undefined ? null : compileRe2(policy.matchSource);
    matchers.set(policy, re);
  }
  return re;
}

function whenOf(source: string, out: ExplainOutcome): NonNullable<PolicyExplanation['when']> {
  const points = branchPoints(parseJsonata(source));
  const branches: BranchOutcome[] = points.map((p) => ({ ...p, outcomes: [] }));
  for (const [id, truthy] of out.branches) branches[id]?.outcomes.push(truthy);
  return { source, ...(out.value !== undefined ? { value: out.value } : {}), ...(out.error !== undefined ? { error: out.error } : {}), branches };
}

function verdictOf(v: PolicyVerdict): NonNullable<PolicyExplanation['verdict']> {
  const effect = effectOf(v);
  return { applies: v.matched || v.error !== undefined, ...(effect ? { effect } : {}), ...(v.reason ? { reason: v.reason } : {}), ...(v.error ? { error: v.error } : {}) };
}

function outcomeOf(x: PolicyExplanation, e: PolicyEvaluation): string {
  if (!x.candidate) {
    if (x.match && !x.match.hit) return `not a candidate: match /${x.match.pattern}/ does not accept ${JSON.stringify(e.input.tool)}`;
    const missed = x.args.filter((a) => !a.hit).map((a) => `args.${a.key} /${a.pattern}/`);
    return `not a candidate: ${missed.join(', ')} did not match`;
  }
  const v = x.verdict;
  if (v?.error) return `failed (${v.error}): counts as deny${x.mode === 'shadow' ? ', but shadow: logged only' : ' (fail closed)'}`;
  if (!v?.applies) return x.module ? 'the module returned no verdict: no opinion' : `when is ${x.when?.value === undefined ? 'undefined' : JSON.stringify(x.when.value)}: does not apply`;
  const effect = v.effect ?? '?';
  if (x.mode === 'shadow') return `applies: ${effect} (shadow: logged, not enforced)`;
  const winning = e.policyIds.includes(x.id);
  return `applies: ${effect}${winning ? ' (decides)' : ` (outweighed: ${e.decision} wins)`}`;
}

function combinationOf(e: PolicyEvaluation, settings: EvaluationSettings): string[] {
  const lines: string[] = [];
  const enforced = e.verdicts.filter((v) => v.policy.mode === 'enforce' && (v.matched || v.error !== undefined));
  const shadow = e.verdicts.filter((v) => v.policy.mode === 'shadow' && (v.matched || v.error !== undefined));
  if (shadow.length > 0) lines.push(`shadow, not counted: ${shadow.map((v) => `${v.policy.id}=${effectOf(v)}`).join(', ')}`);
  if (enforced.length > 0) lines.push(`enforced: ${enforced.map((v) => `${v.policy.id}=${effectOf(v)}${v.error ? ' (failed closed)' : ''}`).join(', ')}`);
  if (e.defaulted) {
    const source = e.type === 'beforeToolCall' ? `policies.defaultDecision (${settings.defaultDecision})` : 'results default to allow';
    lines.push(`no enforced policy applies: ${e.decision} by default, ${source}`);
  } else {
    lines.push(`deny beats ask beats allow: ${e.effect} from ${e.policyIds.join(', ')}`);
    if (e.redactions.length > 0) lines.push(`redactions in pack order: ${e.redactions.length}${e.redactedResult ? '' : ' (matched nothing: logged as allow)'}`);
  }
  lines.push(`decision: ${e.decision}`);
  return lines;
}
