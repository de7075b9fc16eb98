import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { canonicalDigest, canonicalJson, writeCanonicalJson } from '../../policies/canonical-json.js';

/** A deterministic generator of JSON data (seeded xorshift), so a failure can be replayed. */
function jsonData(seed: number): () => unknown {
  let x = seed;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) / 0x100000000);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const strings = ['', 'a', 'A', 'é', '€', '\u0080', '\r\n\t', '"\\/', '\u0000\u001f', '\u2028', '😀', '\ufb33', 'k1', 'k10', 'k2'];
  const numbers = [0, -0, 1, -1, 4.5, 0.002, 1e-7, 1e-27, 1e21, 1e30, 333333333.33333329, 2 ** 53, -(2 ** 31), Number.MIN_VALUE, Number.MAX_VALUE];
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 4 || r < 0.35) return pick<unknown>([null, true, false, pick(numbers), pick(strings), next() * 1e6 - 5e5]);
    if (r < 0.65) return Array.from({ length: Math.floor(next() * 5) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(next() * 6) }, () => [pick(strings) + pick(strings), value(depth + 1)]));
  };
  return () => value(0);
}

describe('canonical JSON (RFC 8785 for JSON data)', () => {
  it("writes RFC 8785's own example: sorted keys, ECMAScript numbers, minimal string escapes", () => {
    const input = JSON.parse('{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}');
    assert.equal(canonicalJson(input), '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it("sorts keys by UTF-16 code units (RFC 8785's sorting example)", () => {
    const input = { '€': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '😀': 'Emoji: Grinning Face', '\u0080': 'Control', 'ö': 'Latin Small Letter O With Diaeresis' };
    // Read the keys off the text: Object.keys would put the integer-like "1" first whatever the text says.
    const keys = [...canonicalJson(input).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
    assert.deepEqual(keys, ['\r', '1', '\u0080', 'ö', '€', '😀', '\ufb33']);
  });

  it('agrees with canonicalize (an RFC 8785 implementation) on 2,000 generated JSON values', () => {
    const next = jsonData(0x5eed);
    for (let i = 0; i < 2000; i++) {
      const value = next();
      assert.equal(canonicalJson(value), canonicalize(value), `value ${i}: ${JSON.stringify(value)}`);
    }
  });

  it('streams a large value in chunks of about 64 KB, and the digest is the sha256 of the same text', () => {
    const value = { result: { content: 'z'.repeat(1 << 20) }, items: Array.from({ length: 20_000 }, (_, i) => ({ i })) };
    const chunks: string[] = [];
    writeCanonicalJson(value, (c) => chunks.push(c));
    assert.ok(chunks.length > 2, `${chunks.length} chunks`);
    assert.ok(chunks.slice(0, -1).every((c) => c.length >= 1 << 16 && c.length < (1 << 20) + (1 << 17)));
    assert.equal(chunks.join(''), canonicalize(value));
    assert.equal(canonicalDigest(value), createHash('sha256').update(chunks.join('')).digest('hex'));
  });

  it('digests any policy input without throwing, where RFC 8785 refuses it', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    const cases: Array<[string, unknown, string | RegExp]> = [
      ['a lone surrogate (valid JSON from a model)', JSON.parse('{"s":"\\ud800"}'), '{"s":"\\ud800"}'],
      ['NaN and Infinity', { n: Number.NaN, i: -Infinity }, '{"i":null,"n":null}'],
      ['a BigInt', { b: 10n }, '{"b":"10"}'],
      ['a cycle', cyclic, /^\{"a":1,"self":\{"a":1,"self":.*"\[Circular\]"\}+$/],
      ['100,000 levels of nesting', deep, /^(\{"d":){100000}"leaf"\}{100000}$/],
    ];
    for (const [what, input, expected] of cases) {
      const text = canonicalJson(input);
      if (typeof expected === 'string') assert.equal(text, expected, what);
      else assert.match(text, expected, what);
      assert.match(canonicalDigest(input), /^[0-9a-f]{64}$/, what);
    }
    // The library refuses the first four (RFC 8785 has no form for them); the decision log must still get a digest.
    for (const [what, input] of cases.slice(0, 4)) assert.throws(() => canonicalize(input), Error, what);
  });
});
