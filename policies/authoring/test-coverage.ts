import type { EvaluationSettings } from '../evaluate-decision.js';
import type { PolicyPool } from '../policy-pool.js';
import { PolicySet } from '../policy-set.js';
import type { CompiledPack, CompiledPolicy } from '../policy-types.js';
import { branchPoints } from './condition-branches.js';
import { explainEvent } from './explain-event.js';
import { parseJsonata } from './jsonata-ast.js';

/** One thing a test can exercise in a policy, with how often each of its outcomes was seen. */
export interface CoverageItem {
  kind: 'policy' | 'match' | 'args' | 'when' | 'operand' | 'condition';
  /** The matcher, expression or operand, as written. */
  label: string;
  /** Outcome name → number of tests that produced it (every outcome is listed, 0 = not exercised). */
  counts: Record<string, number>;
}

export interface PolicyCoverage {
  id: string;
  pack: string;
  file: string;
  /** Tests of the pack whose event this policy runs on. */
  tests: number;
  items: CoverageItem[];
  covered: number;
  total: number;
}

export interface CoverageReport {
  policies: PolicyCoverage[];
  covered: number;
  total: number;
}

/**
 * Which policies and which branches the inline tests exercise: each test is
 * explained (`explainEvent`, against its own pack, as `runPackTests` runs it)
 * and for every policy on its event the outcomes are counted: the policy
 * applied or not, `match` hit or miss, each `args` matcher hit or miss (when
 * `match` let the call through), the `when` true or false, each `and`/`or`
 * operand true or false, each `? :` then or else. An outcome no test
 * produced is a gap.
 */
export async function measureCoverage(packs: readonly CompiledPack[], pool: PolicyPool, settings: EvaluationSettings): Promise<CoverageReport> {
  const policies: PolicyCoverage[] = [];
  for (const pack of packs) {
    const byPolicy = new Map<string, PolicyCoverage>();
    for (const policy of pack.policies) {
      const entry = emptyCoverage(pack, policy);
      byPolicy.set(policy.id, entry);
      policies.push(entry);
    }
    const set = new PolicySet([pack]);
    for (const test of pack.tests) {
      const x = await explainEvent(set, pool, { ...settings, defaultDecision: 'allow' }, test.event);
      for (const p of x.policies) {
        const c = byPolicy.get(p.id);
        if (!c) continue;
        c.tests++;
        let i = 0;
        const bump = (outcome: string) => void c.items[i]!.counts[outcome]!++;
        bump(p.candidate && p.verdict?.applies ? 'applies' : 'does not apply');
        i++;
        if (p.match) {
          bump(p.match.hit ? 'hit' : 'miss');
          i++;
        }
        for (const a of p.args) {
          if (!p.match || p.match.hit) bump(a.hit ? 'hit' : 'miss');
          i++;
        }
        const whenItem = c.items.findIndex((it) => it.kind === 'when');
        if (whenItem >= 0 && p.when) {
          if (p.when.error === undefined) c.items[whenItem]!.counts[p.when.value === true ? 'true' : 'false']!++;
          for (const b of p.when.branches) {
            const item = c.items[whenItem + 1 + b.id]!;
            for (const o of new Set(b.outcomes)) item.counts[b.kind === 'condition' ? (o ? 'then' : 'else') : String(o)]!++;
          }
        }
      }
    }
  }
  for (const p of policies) {
    p.total = p.items.reduce((n, it) => n + Object.keys(it.counts).length, 0);
    p.covered = p.items.reduce((n, it) => n + Object.values(it.counts).filter((v) => v > 0).length, 0);
  }
  return { policies, covered: policies.reduce((n, p) => n + p.covered, 0), total: policies.reduce((n, p) => n + p.total, 0) };
}

function emptyCoverage(pack: CompiledPack, policy: CompiledPolicy): PolicyCoverage {
  const items: CoverageItem[] = [{ kind: 'policy', label: policy.id, counts: { applies: 0, 'does not apply': 0 } }];
  if (policy.matchSource !== undefined) items.push({ kind: 'match', label: `/${policy.matchSource}/`, counts: { hit: 0, miss: 0 } });
  for (const m of policy.args) items.push({ kind: 'args', label: `args.${m.path.join('.')} /${m.source}/`, counts: { hit: 0, miss: 0 } });
  if (policy.when !== undefined) {
    items.push({ kind: 'when', label: policy.when, counts: { true: 0, false: 0 } });
    for (const b of branchPoints(parseJsonata(policy.when))) {
      items.push(b.kind === 'condition' ? { kind: 'condition', label: b.text, counts: { then: 0, else: 0 } } : { kind: 'operand', label: `${b.operator} ${b.text}`, counts: { true: 0, false: 0 } });
    }
  }
  return { id: policy.id, pack: pack.name, file: pack.file, tests: 0, items, covered: 0, total: 0 };
}
