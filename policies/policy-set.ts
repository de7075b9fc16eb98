import RE2 from 're2';
import type { ArgMatcher, CompiledPack, CompiledPolicy, PolicyEventName } from './policy-types.js';
import { POLICY_EVENTS } from './policy-types.js';

const CANDIDATE_CACHE_LIMIT = 4096;

interface EventIndex {
  policies: CompiledPolicy[];
  /** One re2 pass over `identifier/apiName` for every policy with a `match`. */
  set?: InstanceType<typeof RE2.Set>;
  /** Position in `set` for each policy, or -1 when it matches every tool. */
  slot: number[];
  /** One re2 pass per argument string for every `args: { '*': ... }` matcher of this event. */
  anySet?: InstanceType<typeof RE2.Set>;
  /** Position of each policy's `'*'` matcher in `anySet`, or -1. */
  anySlot: Map<CompiledPolicy, number>;
}

/**
 * An immutable, compiled set of packs. Candidate selection runs in the calling
 * thread with re2 only (linear time in the input), and is cached per tool name.
 * Swapped as a whole on reload, so a decision that started on a set ends on it.
 */
export class PolicySet {
  readonly policies: readonly CompiledPolicy[];
  readonly version: string;
  /** Pack order of each policy (redactions and reasons follow it). */
  readonly order: ReadonlyMap<CompiledPolicy, number>;
  private readonly index = new Map<PolicyEventName, EventIndex>();
  private readonly cache = new Map<string, CompiledPolicy[]>();

  constructor(readonly packs: readonly CompiledPack[]) {
    this.policies = packs.flatMap((p) => p.policies);
    this.order = new Map(this.policies.map((p, i) => [p, i]));
    this.version = packs.map((p) => `${p.name}@${p.version}`).join(',');
    for (const event of POLICY_EVENTS) {
      const policies = this.policies.filter((p) => p.events.has(event));
      const sources: string[] = [];
      const slot = policies.map((p) => (p.matchSource === undefined ? -1 : sources.push(p.matchSource) - 1));
      const anySources: string[] = [];
      const anySlot = new Map<CompiledPolicy, number>();
      for (const p of policies) {
        const any = p.args.find((m) => isAnyPath(m.path));
        if (any) anySlot.set(p, anySources.push(any.source) - 1);
      }
      this.index.set(event, {
        policies,
        slot,
        set: sources.length > 0 ? new RE2.Set(sources) : undefined,
        anySet: anySources.length > 0 ? new RE2.Set(anySources) : undefined,
        anySlot,
      });
    }
  }

  static empty(): PolicySet {
    return new PolicySet([]);
  }

  /**
   * The policies that apply to this tool call, in pack order: their `match`
   * accepts `identifier/apiName` and every `args` matcher accepts its argument.
   * `'*'` matchers scan every string in `args` and each of `extraStrings()`
   * (the canonical forms of the arguments; asked only when a `'*'` matcher runs).
   */
  candidates(event: PolicyEventName, toolKey: string, args: Record<string, unknown> | undefined, extraStrings?: () => readonly string[]): CompiledPolicy[] {
    const byTool = this.byTool(event, toolKey);
    if (byTool.length === 0) return byTool;
    const idx = this.index.get(event)!;
    // Scanned lazily and once: every argument string against every '*' pattern in one re2 pass.
    let anyHits: Set<number> | undefined;
    const anyMatches = (p: CompiledPolicy): boolean => {
      if (anyHits === undefined) {
        const extra = extraStrings?.() ?? [];
        anyHits = scanStrings(extra.length > 0 ? [args, extra] : args, idx.anySet!);
      }
      return anyHits.has(idx.anySlot.get(p)!);
    };
    let filtered: CompiledPolicy[] | undefined;
    for (let i = 0; i < byTool.length; i++) {
      const p = byTool[i]!;
      const ok = p.args.length === 0 || p.args.every((m) => (isAnyPath(m.path) ? anyMatches(p) : argMatches(args, m.path, m.re)));
      if (!ok && filtered === undefined) filtered = byTool.slice(0, i);
      else if (ok && filtered !== undefined) filtered.push(p);
    }
    return filtered ?? byTool;
  }

  private byTool(event: PolicyEventName, toolKey: string): CompiledPolicy[] {
    const idx = this.index.get(event);
    if (idx === undefined || idx.policies.length === 0) return [];
    const key = event + '\u0000' + toolKey;
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    const matched = idx.set ? new Set(idx.set.match(toolKey)) : new Set<number>();
    const out = idx.policies.filter((_, i) => idx.slot[i] === -1 || matched.has(idx.slot[i]!));
    if (this.cache.size >= CANDIDATE_CACHE_LIMIT) this.cache.clear();
    this.cache.set(key, out);
    return out;
  }
}

/**
 * Whether one `args` matcher accepts a call, exactly as `candidates` decides
 * it (for `policy eval --explain` and `policy test --coverage`, which report
 * each matcher on its own). `'*'` scans `args` and `extraStrings`.
 */
export function argMatcherAccepts(m: ArgMatcher, args: Record<string, unknown> | undefined, extraStrings: readonly string[] = []): boolean {
  if (!isAnyPath(m.path)) return argMatches(args, m.path, m.re);
  return scanStrings(extraStrings.length > 0 ? [args, extraStrings] : args, new RE2.Set([m.source])).size > 0;
}

function isAnyPath(path: readonly string[]): boolean {
  return path.length === 1 && path[0] === '*';
}

function argMatches(args: Record<string, unknown> | undefined, path: string[], re: RE2): boolean {
  let value: unknown = args;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return false;
    value = (value as Record<string, unknown>)[key];
  }
  const test = (x: unknown) =>
    (typeof x === 'string' && re.test(x)) || ((typeof x === 'number' || typeof x === 'boolean') && re.test(String(x)));
  return Array.isArray(value) ? value.some(test) : test(value);
}

/**
 * Which patterns of `set` match any string (or number/boolean) anywhere in
 * `args`. Iterative (deep nesting cannot overflow the stack), each value
 * scanned once, stops when every pattern has matched. Linear time.
 */
function scanStrings(args: unknown, set: InstanceType<typeof RE2.Set>): Set<number> {
  const hits = new Set<number>();
  const stack: unknown[] = [args];
  const seen = new Set<object>();
  while (stack.length > 0 && hits.size < set.size) {
    const v = stack.pop();
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      for (const i of set.match(typeof v === 'string' ? v : String(v))) hits.add(i);
    } else if (v !== null && typeof v === 'object' && !seen.has(v)) {
      seen.add(v);
      if (Array.isArray(v)) for (let i = 0; i < v.length; i++) stack.push(v[i]);
      else for (const key in v) if (Object.hasOwn(v, key)) stack.push((v as Record<string, unknown>)[key]);
    }
  }
  return hits;
}
