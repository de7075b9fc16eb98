/**
 * What a policy's `match` regex says about a tool key, when that can be read
 * off the pattern without running it. The policy set indexes policies by it
 * (policies/tool-match-index.ts): exact names in a map, literal prefixes in a
 * prefix table, and only the rest through re2, so a decision's cost does not
 * grow with the rule count or depend on a per-name cache.
 *
 * - `everyTool`: the pattern matches every key (`.*`, `^`, `^.*`, `^(|x)`).
 * - `exact`: it matches exactly the keys in `names` (`^fs/readFile$`, `^fs/(readFile|writeFile)$`).
 * - `prefix`: a key it matches starts with one of `prefixes`; with `verify`
 *   false that is also enough (`^fs/`, `^fs/.*`), with `verify` true re2 must
 *   still run the whole pattern on a key that has the prefix (`^fs/read.+$`).
 * - `regex`: nothing usable (unanchored, a top-level `|`, inline flags first...).
 *
 * Only what is certain is read: a literal is a character outside
 * `\^$.|?*+()[]{}` or a backslash before ASCII punctuation, a group is `(…)`
 * or `(?:…)` of `|`-separated literals, and anything else ends the readable
 * part (a quantified literal or group is left to the rest). The rest may not
 * contain `|` at all, so it cannot undo the anchor. re2 matches UTF-8, and how a
 * lone surrogate reaches it differs between Node releases: one in a pattern is
 * never read as a literal (re2 decides the pattern), and a key with one is
 * decided by re2 on every pattern (`isWellFormedKey`).
 */
export type MatchShape =
  | { kind: 'everyTool' }
  | { kind: 'exact'; names: string[] }
  | { kind: 'prefix'; prefixes: string[]; verify: boolean }
  | { kind: 'regex' };

/** More alternatives than this (a product of groups) are left to re2. */
export const MAX_LITERAL_ALTERNATIVES = 64;

const META = new Set(['\\', '^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}']);
const QUANTIFIERS = new Set(['*', '+', '?', '{']);
/** ASCII punctuation re2 reads as itself after a backslash (`_` is a word character: `\_` is an error in re2). */
const ESCAPABLE = new Set(Array.from('!"#$%&\'()*+,-./:;<=>?@[\\]^`{|}~'));

export function matchShape(source: string | undefined): MatchShape {
  if (source === undefined || source === '' || source === '.*') return { kind: 'everyTool' };
  const cps = Array.from(source);
  if (cps[0] !== '^') return { kind: 'regex' };
  let literals = [''];
  let i = 1;
  for (;;) {
    if (i === cps.length) return complete(literals);
    if (cps[i] === '$' && i === cps.length - 1) return { kind: 'exact', names: [...new Set(literals)] };
    if (cps[i] === '.' && cps[i + 1] === '*' && i + 2 === cps.length) return complete(literals);
    const atom = readLiteral(cps, i) ?? readGroup(cps, i);
    if (atom === undefined || QUANTIFIERS.has(cps[atom.end]!)) break;
    if (literals.length * atom.alternatives.length > MAX_LITERAL_ALTERNATIVES) break;
    literals = literals.flatMap((l) => atom.alternatives.map((a) => l + a));
    i = atom.end;
  }
  // The rest must still be checked by re2; without a `|` anywhere in it, it cannot drop the `^` + literal.
  const rest = cps.slice(i);
  if (rest.includes('|') || literals.includes('')) return { kind: 'regex' };
  return { kind: 'prefix', prefixes: [...new Set(literals)], verify: true };
}

function complete(literals: string[]): MatchShape {
  if (literals.includes('')) return { kind: 'everyTool' };
  return { kind: 'prefix', prefixes: [...new Set(literals)], verify: false };
}

interface Atom {
  alternatives: string[];
  /** Index of the code point after the atom. */
  end: number;
}

/** One literal character at `i` (possibly escaped), or undefined. */
function readLiteral(cps: readonly string[], i: number): Atom | undefined {
  const c = cps[i]!;
  if (c === '\\') {
    const next = cps[i + 1];
    return next !== undefined && ESCAPABLE.has(next) ? { alternatives: [next], end: i + 2 } : undefined;
  }
  if (META.has(c) || isLoneSurrogate(c)) return undefined;
  return { alternatives: [c], end: i + 1 };
}

/** `(a|b|)` or `(?:a|b)` of literals at `i`, or undefined. */
function readGroup(cps: readonly string[], i: number): Atom | undefined {
  if (cps[i] !== '(') return undefined;
  let j = i + 1;
  if (cps[j] === '?') {
    if (cps[j + 1] !== ':') return undefined;
    j += 2;
  }
  const alternatives: string[] = [];
  let current = '';
  for (;;) {
    const c = cps[j];
    if (c === undefined) return undefined;
    if (c === ')') {
      alternatives.push(current);
      return { alternatives, end: j + 1 };
    }
    if (c === '|') {
      alternatives.push(current);
      current = '';
      j++;
      continue;
    }
    const lit = readLiteral(cps, j);
    // A quantifier inside the group would make its literal optional or repeated.
    if (lit === undefined || QUANTIFIERS.has(cps[lit.end]!)) return undefined;
    current += lit.alternatives[0];
    j = lit.end;
  }
}

/** `c` is one code point of `Array.from(source)`: a surrogate alone in it has no partner. */
function isLoneSurrogate(c: string): boolean {
  return c.length === 1 && c >= '\uD800' && c <= '\uDFFF';
}

type WellFormed = { isWellFormed(): boolean };

/**
 * Whether `key` is well-formed UTF-16 (no lone surrogate). The index answers
 * only such keys from its maps; how re2 sees a lone surrogate differs between
 * Node releases, so re2 itself decides the others (tool-match-index.ts).
 */
export function isWellFormedKey(key: string): boolean {
  return (key as unknown as WellFormed).isWellFormed();
}
