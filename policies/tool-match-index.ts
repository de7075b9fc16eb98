import { LRUCache } from 'lru-cache';
import RE2 from 're2';
import { isWellFormedKey, matchShape } from './match-shape.js';
import type { CompiledPolicy } from './policy-types.js';

type RE2Set = InstanceType<typeof RE2.Set>;

/** Patterns per RE2.Set of the residual matchers (one set of 100,000 patterns does not compile within re2's memory budget). */
export const RESIDUAL_SET_SIZE = 2048;

/**
 * Bounds of the memo of residual answers per tool name: entries, and their
 * total size in positions (+1 each), so a name that many residual patterns
 * accept counts for what it holds. A miss costs one pass of the residual sets
 * (which is all a lookup without the memo would cost), never the rule count.
 */
export const RESIDUAL_MEMO = { names: 16_384, positions: 1 << 20 };

interface PrefixEntry {
  position: number;
  /** The whole `match` pattern, when the prefix alone does not decide (`MatchShape.verify`). */
  verify?: RE2Set;
}

interface ExactEntry {
  /** Positions in the event's policy list, ascending, of every keyed policy whose `match` accepts this name. */
  positions: number[];
  policies: CompiledPolicy[];
}

/**
 * The policies of one event whose `match` accepts a tool key (`identifier/apiName`),
 * in pack order, exactly as running every `match` pattern through re2 would
 * say, but without a per-name cache and without work that grows with the
 * rule count:
 *
 * - a policy with no `match` (or one that matches everything) is in every answer;
 * - exact names (`^fs/readFile$`) are one map lookup, and each such name's full
 *   answer (prefix and regex policies that also accept it) is computed once, here;
 * - literal prefixes (`^fs/`) are looked up by length: one map probe per distinct
 *   prefix length, re2 only for the policies whose pattern goes on after the prefix;
 * - only what is left (unanchored or otherwise unreadable patterns) runs through
 *   re2, as `RE2.Set`s of up to `RESIDUAL_SET_SIZE` patterns (one pass each),
 *   its answer per name kept in a bounded LRU memo (`RESIDUAL_MEMO`).
 *
 * Its answers never change; `lookup` answers shared arrays, which callers must not change.
 */
export class ToolMatchIndex {
  private readonly everyToolPositions: number[] = [];
  private readonly everyTool: CompiledPolicy[];
  private readonly exact = new Map<string, ExactEntry>();
  private readonly byPrefix = new Map<string, PrefixEntry[]>();
  /** The distinct prefix lengths (UTF-16 units), ascending. */
  private readonly prefixLengths: number[];
  private readonly residual: Array<{ set: RE2Set; positions: number[] }> = [];
  /**
   * Every policy with a pattern, as re2 sets, for keys that are not well-formed
   * UTF-16 (a lone surrogate): how re2 converts one differs between Node
   * releases (Node 20 and 24 disagree), so such a key is never answered from
   * the maps; re2 decides it, whatever it does on this runtime. Built on first use.
   */
  private wholeScan: Array<{ set: RE2Set; positions: number[] }> | undefined;
  /**
   * The residual sets' answer per name: a case-insensitive or unanchored
   * pattern costs re2 several µs per call even in a small set, and agents call
   * the same few tools over and over.
   */
  private readonly residualMemo = new LRUCache<string, number[]>({ max: RESIDUAL_MEMO.names, maxSize: RESIDUAL_MEMO.positions, sizeCalculation: (v) => v.length + 1 });

  /** `policies`: one event's policies, in pack order. */
  constructor(private readonly policies: readonly CompiledPolicy[]) {
    const exactNames = new Map<string, number[]>();
    const residualPositions: number[] = [];
    policies.forEach((p, position) => {
      const shape = matchShape(p.matchSource);
      switch (shape.kind) {
        case 'everyTool':
          this.everyToolPositions.push(position);
          break;
        case 'exact':
          for (const name of shape.names) pushTo(exactNames, name, position);
          break;
        case 'prefix': {
          const verify = shape.verify ? new RE2.Set([p.matchSource!]) : undefined;
          for (const prefix of shape.prefixes) pushTo(this.byPrefix, prefix, verify === undefined ? { position } : { position, verify });
          break;
        }
        case 'regex':
          residualPositions.push(position);
          break;
        default: {
          const never: never = shape;
          throw new Error(`unknown match shape ${JSON.stringify(never)}`);
        }
      }
    });
    this.everyTool = this.everyToolPositions.map((i) => policies[i]!);
    this.prefixLengths = [...new Set([...this.byPrefix.keys()].map((k) => k.length))].sort((a, b) => a - b);
    this.addResidual(residualPositions);
    for (const [name, positions] of exactNames) {
      const all = sortedUnique([...positions, ...this.keyedPositions(name, false)]);
      this.exact.set(name, { positions: all, policies: all.map((i) => policies[i]!) });
    }
  }

  /** The policies whose `match` accepts `key`, in pack order (a shared array: do not change it). */
  lookup(key: string): readonly CompiledPolicy[] {
    if (!isWellFormedKey(key)) return this.scanned(key);
    const name = key;
    const exact = this.exact.get(name);
    if (exact !== undefined) return this.everyTool.length === 0 ? exact.policies : this.withEveryTool(exact.positions);
    if (this.prefixLengths.length === 0 && this.residual.length === 0) return this.everyTool;
    const positions = this.keyedPositions(name);
    if (positions.length === 0) return this.everyTool;
    return this.withEveryTool(positions);
  }

  /** Positions of the prefix and residual policies that accept `name`, ascending (`memo`: false at load, for exact names). */
  private keyedPositions(name: string, memo = true): number[] {
    const out: number[] = [];
    for (const length of this.prefixLengths) {
      if (length > name.length) break;
      const entries = this.byPrefix.get(length === name.length ? name : name.slice(0, length));
      if (entries === undefined) continue;
      for (const e of entries) if (e.verify === undefined || e.verify.test(name)) out.push(e.position);
    }
    if (this.residual.length > 0) for (const i of this.residualPositions(name, memo)) out.push(i);
    return out.length > 1 ? sortedUnique(out) : out;
  }

  private residualPositions(name: string, memo: boolean): readonly number[] {
    const hit = memo ? this.residualMemo.get(name) : undefined;
    if (hit !== undefined) return hit;
    const out: number[] = [];
    for (const r of this.residual) for (const i of r.set.match(name)) out.push(r.positions[i]!);
    if (memo) this.residualMemo.set(name, out);
    return out;
  }

  private withEveryTool(positions: readonly number[]): CompiledPolicy[] {
    const every = this.everyToolPositions;
    if (every.length === 0) return positions.map((i) => this.policies[i]!);
    const out: CompiledPolicy[] = new Array(positions.length + every.length);
    let a = 0;
    let b = 0;
    for (let k = 0; k < out.length; k++) {
      const next = b >= every.length || (a < positions.length && positions[a]! < every[b]!) ? positions[a++]! : every[b++]!;
      out[k] = this.policies[next]!;
    }
    return out;
  }

  /** A key with a lone surrogate: every pattern through re2 (see `wholeScan`), policies without a pattern included. */
  private scanned(key: string): CompiledPolicy[] {
    if (this.wholeScan === undefined) {
      this.wholeScan = [];
      const withPattern = this.policies.flatMap((p, i) => (p.matchSource === undefined ? [] : [i]));
      for (let start = 0; start < withPattern.length; start += RESIDUAL_SET_SIZE) this.addChunk(this.wholeScan, withPattern.slice(start, start + RESIDUAL_SET_SIZE));
    }
    const positions = this.policies.flatMap((p, i) => (p.matchSource === undefined ? [i] : []));
    for (const r of this.wholeScan) for (const i of r.set.match(key)) positions.push(r.positions[i]!);
    return sortedUnique(positions).map((i) => this.policies[i]!);
  }

  /** Compiles the residual patterns into sets; a chunk re2 cannot compile as one set is split. */
  private addResidual(positions: number[]): void {
    for (let start = 0; start < positions.length; start += RESIDUAL_SET_SIZE) this.addChunk(this.residual, positions.slice(start, start + RESIDUAL_SET_SIZE));
  }

  private addChunk(into: Array<{ set: RE2Set; positions: number[] }>, positions: number[]): void {
    if (positions.length === 0) return;
    try {
      into.push({ set: new RE2.Set(positions.map((i) => this.policies[i]!.matchSource!)), positions });
    } catch (err) {
      if (positions.length === 1) throw err;
      const half = Math.ceil(positions.length / 2);
      this.addChunk(into, positions.slice(0, half));
      this.addChunk(into, positions.slice(half));
    }
  }
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

function sortedUnique(values: number[]): number[] {
  values.sort((a, b) => a - b);
  let n = 0;
  for (let i = 0; i < values.length; i++) if (i === 0 || values[i] !== values[i - 1]) values[n++] = values[i]!;
  values.length = n;
  return values;
}
