import RE2 from 're2';
import type { ArgMatcher, CompiledPack, CompiledPolicy, PolicyEventName } from './policy-types.js';
import { POLICY_EVENTS } from './policy-types.js';
import { ToolMatchIndex } from './tool-match-index.js';

interface EventIndex {
  policies: CompiledPolicy[];
  /** The policies whose `match` accepts a tool key (exact names, literal prefixes, then re2 for the rest). */
  byTool: ToolMatchIndex;
  /** One re2 pass per argument string for every `args: { '*': ... }` matcher of this event. */
  anySet?: InstanceType<typeof RE2.Set>;
  /** Position of each policy's `'*'` matcher in `anySet`, or -1. */
  anySlot: Map<CompiledPolicy, number>;
}

/**
 * An immutable, compiled set of packs. Candidate selection runs in the calling
 * thread with re2 only (linear time in the input); which policies a tool name
 * selects comes from an index over the `match` patterns (ToolMatchIndex), so
 * its cost depends neither on how many distinct tool names are seen nor,
 * for exact and prefix patterns, on how many rules there are.
 * Swapped as a whole on reload, so a decision that started on a set ends on it.
 */
export class PolicySet {
  readonly policies: readonly CompiledPolicy[];
  readonly version: string;
  /** Pack order of each policy (redactions and reasons follow it). */
  readonly order: ReadonlyMap<CompiledPolicy, number>;
  private readonly index = new Map<PolicyEventName, EventIndex>();

  constructor(readonly packs: readonly CompiledPack[]) {
    this.policies = packs.flatMap((p) => p.policies);
    this.order = new Map(this.policies.map((p, i) => [p, i]));
    this.version = packs.map((p) => `${p.name}@${p.version}`).join(',');
    for (const event of POLICY_EVENTS) {
      const policies = this.policies.filter((p) => p.events.has(event));
      const anySources: string[] = [];
      const anySlot = new Map<CompiledPolicy, number>();
      for (const p of policies) {
        const any = p.args.find((m) => isAnyPath(m.path));
        if (any) anySlot.set(p, anySources.push(any.source) - 1);
      }
      this.index.set(event, {
        policies,
        byTool: new ToolMatchIndex(policies),
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
  candidates(event: PolicyEventName, toolKey: string, args: Record<string, unknown> | undefined, extraStrings?: () => readonly string[]): readonly CompiledPolicy[] {
    const idx = this.index.get(event);
    if (idx === undefined) return [];
    const byTool = idx.byTool.lookup(toolKey);
    if (byTool.length === 0) return byTool;
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
