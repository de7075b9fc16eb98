import { pathToFileURL } from 'node:url';
import jsonata from 'jsonata';
import { LRUCache } from 'lru-cache';
import RE2 from 're2';
import type { CodePolicyDefinition, CodePolicyVerdict, PolicyEventInput } from '../define-policy.js';
import { ASK_ON_RESULT, POLICY_EFFECTS } from '../policy-types.js';
import { BRANCH_RECORDER, branchPoints, jsonataTruthy } from '../authoring/condition-branches.js';
import type { AstNode } from '../authoring/jsonata-ast.js';
import type { ConditionTask, DescribeOutcome, EvaluateBatchTask, EvaluateOutcome, ExplainOutcome, ExplainTask, JsonataLimits, WorkerTask } from './worker-protocol.js';

/**
 * The piscina worker: evaluates candidate policies. Everything a pack author
 * wrote (JSONata, code policy modules) runs here, never in the main thread.
 * Compiled expressions and imported modules are cached per pack version and
 * policy id, so a policy compiles once per worker.
 */
interface CompiledEntry {
  when?: jsonata.Expression;
  reason?: jsonata.Expression;
  module?: CodePolicyDefinition;
}

const cache = new LRUCache<string, CompiledEntry>({ max: 2000 });
let describeCounter = 0;

export default async function run(task: WorkerTask): Promise<EvaluateOutcome[] | DescribeOutcome | ExplainOutcome | true> {
  if (task.kind === 'ping') return true;
  if (task.kind === 'describe') return describe(task.module);
  if (task.kind === 'explain') return explain(task);
  return evaluateBatch(task);
}

/** Evaluates the batch's conditions in order, recording in `progress` which one runs since when (see EvaluateBatchTask). */
async function evaluateBatch(task: EvaluateBatchTask): Promise<EvaluateOutcome[]> {
  const { progress, epoch, conditions } = task;
  const out: EvaluateOutcome[] = new Array(conditions.length);
  for (let i = 0; i < conditions.length; i++) {
    Atomics.store(progress, 1 + i, Date.now() - epoch);
    Atomics.store(progress, 0, 2 * i + 1);
    try {
      out[i] = await evaluate(conditions[i]!);
    } catch (err) {
      out[i] = { matched: false, error: errorText(err) };
    }
    Atomics.store(progress, 0, 2 * i + 2);
  }
  return out;
}

async function evaluate(task: ConditionTask): Promise<EvaluateOutcome> {
  const entry = await compiled(task);
  const input = task.eventType === undefined ? task.input : { ...task.input, type: task.eventType };
  if (entry.module) return evaluateModule(entry.module, input);
  if (entry.when) {
    const value = await entry.when.evaluate(input);
    if (value === undefined || value === false) return { matched: false };
    if (value !== true) return { matched: false, error: `when must return a boolean, got ${describeValue(value)}` };
  }
  if (entry.reason) {
    const value = await entry.reason.evaluate(input);
    if (value !== undefined && typeof value !== 'string') return { matched: true, error: `reason must return a string, got ${describeValue(value)}` };
    return { matched: true, reason: value };
  }
  return { matched: true };
}

/** Evaluates an instrumented copy of a `when` (compiled for this task only) and reports each branch point it passed. */
async function explain(task: ExplainTask): Promise<ExplainOutcome> {
  const branches: Array<[number, boolean]> = [];
  try {
    const expr = compileExpression(task.when, task.limits);
    // ast() is the tree evaluate() walks: instrumenting it instruments this expression.
    branchPoints(expr.ast() as unknown as AstNode, true);
    const record = (id: number, value: unknown) => {
      branches.push([id, jsonataTruthy(value)]);
      return value;
    };
    const value: unknown = await expr.evaluate(task.input, { [BRANCH_RECORDER]: record });
    return { value: value === undefined ? undefined : JSON.parse(JSON.stringify(value) ?? 'null'), branches };
  } catch (err) {
    return { error: errorText(err), branches };
  }
}

async function evaluateModule(def: CodePolicyDefinition, input: Record<string, unknown>): Promise<EvaluateOutcome> {
  const verdict: CodePolicyVerdict | undefined | null = await def.evaluate(input as PolicyEventInput);
  if (verdict === undefined || verdict === null) return { matched: false };
  if (typeof verdict !== 'object' || !(POLICY_EFFECTS as readonly string[]).includes(verdict.effect)) {
    return { matched: true, error: `evaluate returned no valid effect (${describeValue(verdict)})` };
  }
  if (def.effects !== undefined && !def.effects.includes(verdict.effect)) {
    return { matched: true, error: `evaluate returned effect "${verdict.effect}", which its definePolicy effects (${def.effects.join(', ')}) do not list` };
  }
  // Refused at load when declared; a result cannot wait for a human, so an undeclared ask fails closed here.
  if (verdict.effect === 'ask' && input.type !== 'beforeToolCall') return { matched: true, error: ASK_ON_RESULT };
  const reason = typeof verdict.reason === 'string' ? verdict.reason : undefined;
  if (verdict.effect !== 'redact') return { matched: true, effect: verdict.effect, reason };
  if (!Array.isArray(verdict.redact) || verdict.redact.some((r) => typeof r?.pattern !== 'string')) {
    return { matched: true, error: 'a redact verdict needs redact: [{ pattern, replacement? }]' };
  }
  const redact = verdict.redact.map((r) => ({ pattern: r.pattern, replacement: typeof r.replacement === 'string' ? r.replacement : undefined, flags: r.flags }));
  return { matched: true, effect: 'redact', reason, redact };
}

async function compiled(task: ConditionTask): Promise<CompiledEntry> {
  const hit = cache.get(task.key);
  if (hit) return hit;
  const entry: CompiledEntry = {};
  if (task.when !== undefined) entry.when = compileExpression(task.when, task.limits);
  if (task.reasonExpr !== undefined) entry.reason = compileExpression(task.reasonExpr, task.limits);
  if (task.module !== undefined) {
    // The query makes a reloaded pack import the edited module, not the cached one.
    const version = task.key.slice(0, task.key.indexOf(':'));
    entry.module = await importPolicy(pathToFileURL(task.module).href + '?v=' + version);
    if (entry.module.id !== task.policyId) throw new Error(`module declares id "${entry.module.id}", pack says "${task.policyId}"`);
  }
  cache.set(task.key, entry);
  return entry;
}

function compileExpression(source: string, limits: JsonataLimits): jsonata.Expression {
  const expr = jsonata(source, { ...limits, RegexEngine: RE2 as unknown as RegExpConstructor });
  // $eval would compile attacker-controlled text without these limits.
  expr.registerFunction('eval', () => {
    throw new Error('$eval is not allowed in policies');
  });
  return expr;
}

async function importPolicy(url: string): Promise<CodePolicyDefinition> {
  const mod = (await import(url)) as { default?: unknown };
  const def = mod.default as Partial<CodePolicyDefinition> | undefined;
  if (!def || typeof def !== 'object' || typeof def.id !== 'string' || !Array.isArray(def.events) || typeof def.evaluate !== 'function') {
    throw new Error('the module must default-export definePolicy({ id, events, match?, evaluate })');
  }
  if (def.match !== undefined && typeof def.match !== 'string') throw new Error('definePolicy match must be a string (a re2 pattern)');
  if (def.effects !== undefined && !Array.isArray(def.effects)) throw new Error('definePolicy effects must be a list (allow, deny, ask, redact)');
  return def as CodePolicyDefinition;
}

async function describe(module: string): Promise<DescribeOutcome> {
  try {
    const def = await importPolicy(pathToFileURL(module).href + '?describe=' + ++describeCounter);
    return { ok: true, id: def.id, events: def.events.map(String), match: def.match, ...(def.effects === undefined ? {} : { effects: def.effects.map(String) }) };
  } catch (err) {
    return { ok: false, error: errorText(err) };
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  const e = err as { code?: string; message?: string } | null;
  if (e && typeof e === 'object') return [e.code, e.message].filter(Boolean).join(': ') || 'unknown error';
  return String(err);
}
