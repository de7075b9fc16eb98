import assert from 'node:assert/strict';
import RE2 from 're2';
import { combineVerdicts, type PolicyVerdict } from '../../policies/combine-decisions.js';
import type { PolicyEvaluation } from '../../policies/evaluate-decision.js';
import { PolicySet } from '../../policies/policy-set.js';
import { POLICY_EVENTS, type CompiledPolicy, type PolicyEventName } from '../../policies/policy-types.js';
import { RESIDUAL_MEMO, RESIDUAL_SET_SIZE, ToolMatchIndex } from '../../policies/tool-match-index.js';
import { engineWithPack, toolCall, toolResult } from './support/policy-fixtures.js';
import {
  NaiveScan,
  compiledPolicy,
  escapeRe,
  generateRules,
  keyOf,
  keysAround,
  packText,
  seededRandom,
  toolName,
  type GeneratedRule,
} from './support/generated-rules.js';

function setOf(rules: readonly GeneratedRule[]): { set: PolicySet; naive: NaiveScan } {
  const policies = rules.map(compiledPolicy);
  const set = new PolicySet([{ name: 'generated', file: 'generated.yaml', version: 'v1', policies, tests: [] }]);
  return { set, naive: new NaiveScan(policies) };
}

const ids = (ps: readonly CompiledPolicy[]) => ps.map((p) => p.id);

/** Asserts index and naive scan agree on every key for every event; returns how many keys had a candidate. */
function assertSameCandidates(set: PolicySet, naive: NaiveScan, keys: readonly string[], args?: Record<string, unknown>): number {
  let selected = 0;
  for (const key of keys) {
    for (const event of POLICY_EVENTS) {
      const got = ids(set.candidates(event, key, args, () => ['a token']));
      const want = ids(naive.candidates(event, key, args, ['a token']));
      if (got.join('\n') !== want.join('\n')) assert.deepEqual({ event, key, got }, { event, key, got: want });
      if (got.length > 0) selected++;
    }
  }
  return selected;
}

function distinctNames(seed: number, count: number): string[] {
  const rand = seededRandom(seed);
  const names = new Set<string>();
  for (let n = 0; names.size < count; n++) names.add(keyOf(toolName(rand, n)));
  return [...names];
}

describe('policy index: candidates by tool name (equivalence with a plain re2 scan)', () => {
  it('agrees with the scan on generated rule sets of every match shape, events, effects and args matchers', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const rand = seededRandom(seed);
      const names = distinctNames(seed, 300);
      const { set, naive } = setOf(generateRules(rand, 400, names));
      const keys = keysAround(rand, names, 3000);
      const selected = assertSameCandidates(set, naive, keys, { path: '/secret/x' }) + assertSameCandidates(set, naive, keys, { path: '/work/x' });
      assert.ok(selected > 1000, `seed ${seed}: only ${selected} key/event pairs selected a policy, the check would prove little`);
    }
  });

  it('agrees with the scan on more than 4,096 distinct tool names (the old cache size), every name seen twice', () => {
    const rand = seededRandom(11);
    const names = distinctNames(11, 6000);
    const { set, naive } = setOf(generateRules(rand, 800, names));
    const keys = [...names, ...keysAround(rand, names, 2000), ...names.slice().reverse()];
    assert.ok(assertSameCandidates(set, naive, keys) > 5000);
  });

  it('agrees with the scan on 100,000 distinct tool names', () => {
    const rand = seededRandom(12);
    const names = distinctNames(12, 100_000);
    // Exact names (as tool allow/deny lists are) and every other shape.
    const rules: GeneratedRule[] = names.slice(0, 600).map((n, i) => ({ id: `exact-${i}`, match: `^${escapeRe(n)}$`, events: ['beforeToolCall'], effect: i % 3 === 0 ? 'allow' : 'deny' }));
    rules.push(...generateRules(rand, 400, names));
    const { set, naive } = setOf(rules);
    assert.ok(assertSameCandidates(set, naive, names) > 10_000);
  }).timeout(120_000);

  it('agrees with the scan on 10,000 rules', () => {
    const rand = seededRandom(13);
    const names = distinctNames(13, 20_000);
    const rules: GeneratedRule[] = names.slice(0, 8000).map((n, i) => ({ id: `exact-${i}`, match: `^${escapeRe(n)}$`, events: ['beforeToolCall'], effect: i % 3 === 0 ? 'allow' : 'deny' }));
    rules.push(...generateRules(rand, 2000, names));
    const { set, naive } = setOf(rules);
    assert.ok(assertSameCandidates(set, naive, [...names.slice(0, 3000), ...names.slice(-2000), ...keysAround(rand, names, 2000)]) > 5000);
  }).timeout(120_000);

  it('loads 100,000 exact-name rules, which one RE2.Set of every pattern cannot compile', () => {
    const rules: GeneratedRule[] = [];
    for (let i = 0; i < 100_000; i++) rules.push({ id: `r-${i}`, match: `^tool-${i}/run$`, events: ['beforeToolCall'], effect: 'deny' });
    assert.throws(() => new RE2.Set(rules.map((r) => r.match!)), /could not be compiled/);
    const { set, naive } = setOf(rules);
    const keys = ['tool-0/run', 'tool-99999/run', 'tool-100000/run', 'tool-5/run2', 'tool-5/ru', 'xtool-5/run', '/'];
    for (let i = 0; i < 100_000; i += 997) keys.push(`tool-${i}/run`);
    assertSameCandidates(set, naive, keys);
    assert.deepEqual(ids(set.candidates('beforeToolCall', 'tool-99999/run', {})), ['r-99999']);
  }).timeout(60_000);

  it(`answers names the residual memo (${RESIDUAL_MEMO.names} names) has dropped as it did the first time`, () => {
    const rand = seededRandom(14);
    const names = distinctNames(14, RESIDUAL_MEMO.names + 4000);
    // Unanchored and case-insensitive patterns only: every lookup goes through the residual sets and the memo.
    const rules: GeneratedRule[] = [];
    for (let i = 0; i < 60; i++) {
      const n = names[Math.floor(rand() * names.length)]!;
      const part = escapeRe(n.slice(Math.floor(rand() * n.length)).slice(0, 3) || 'x');
      rules.push({ id: `r-${i}`, match: i % 2 === 0 ? part : `(?i)${part}`, events: ['beforeToolCall'], effect: i % 3 === 0 ? 'allow' : 'deny' });
    }
    const { set, naive } = setOf(rules);
    const first = names.map((n) => ids(set.candidates('beforeToolCall', n, {})));
    assert.ok(assertSameCandidates(set, naive, [...names, ...names.slice(0, 4000)]) > 4000);
    names.forEach((n, i) => assert.deepEqual(ids(set.candidates('beforeToolCall', n, {})), first[i]));
  }).timeout(60_000);

  it(`splits more than ${RESIDUAL_SET_SIZE} unanchored patterns over several re2 sets and still answers in pack order`, () => {
    const rules: GeneratedRule[] = [];
    for (let i = 0; i < RESIDUAL_SET_SIZE * 2 + 10; i++) rules.push({ id: `u-${i}`, match: `x${i}y`, events: ['beforeToolCall'], effect: 'deny' });
    rules.push({ id: 'all', events: ['beforeToolCall'], effect: 'allow' });
    rules.unshift({ id: 'first', match: 'y', events: ['beforeToolCall'], effect: 'ask' });
    const { set, naive } = setOf(rules);
    const keys = ['ax1y', 'x4100y', `x${RESIDUAL_SET_SIZE}y/x3y`, 'nothing', 'x1yx2050y'];
    assertSameCandidates(set, naive, keys);
    assert.deepEqual(ids(set.candidates('beforeToolCall', `x${RESIDUAL_SET_SIZE + 1}y/x3y`, {})), ['first', 'u-3', `u-${RESIDUAL_SET_SIZE + 1}`, 'all']);
  });

  describe('edge cases', () => {
    const lookup = (matches: Array<string | undefined>, key: string) =>
      new ToolMatchIndex(matches.map((match, i) => compiledPolicy({ id: `p${i}`, ...(match === undefined ? {} : { match }), events: ['beforeToolCall'], effect: 'deny' })))
        .lookup(key)
        .map((p) => p.id);
    const scan = (matches: Array<string | undefined>, key: string) => matches.flatMap((m, i) => (m === undefined || new RE2(m).test(key) ? [`p${i}`] : []));
    const agree = (matches: Array<string | undefined>, key: string, expected: string[]) => {
      assert.deepEqual(lookup(matches, key), expected, `index on ${JSON.stringify(key)}`);
      assert.deepEqual(scan(matches, key), expected, `re2 on ${JSON.stringify(key)}`);
    };
    /** How re2 sees a lone surrogate differs between Node releases (20 and 24 disagree): the index must say what re2 says here. */
    const agreeWithRe2 = (matches: Array<string | undefined>, key: string) => assert.deepEqual(lookup(matches, key), scan(matches, key), `index on ${JSON.stringify(key)}`);

    it('empty identifier and API name: the key is "/"', () => {
      const matches = ['^/$', '^/', '^$', '^fs/$', '/$', undefined];
      agree(matches, '/', ['p0', 'p1', 'p4', 'p5']);
      agree(matches, 'fs/', ['p3', 'p4', 'p5']);
    });

    it('names that are prefixes of each other', () => {
      const matches = ['^fs/read$', '^fs/read', '^fs/readFile$', '^fs/', '^f', '^fs/readFile', '^fs/(read|readFile)$'];
      agree(matches, 'fs/read', ['p0', 'p1', 'p3', 'p4', 'p6']);
      agree(matches, 'fs/readFile', ['p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
      agree(matches, 'fs/readFil', ['p1', 'p3', 'p4']);
      agree(matches, 'fs', ['p4']);
    });

    it('regex metacharacters in names: escaped they are literal, unescaped they are not', () => {
      const matches = ['^a\\.b/c\\+d$', '^a.b/c', '^x\\(y\\)/\\*$', '^\\$/\\^', '^\\\\/\\|$', '^a\\.b/c\\+d\\$$'];
      agree(matches, 'a.b/c+d', ['p0', 'p1']);
      agree(matches, 'aXb/c+d', ['p1']);
      agree(matches, 'x(y)/*', ['p2']);
      agree(matches, '$/^', ['p3']);
      agree(matches, '\\/|', ['p4']);
      agree(matches, 'a.b/c+d$', ['p1', 'p5']);
    });

    it('unicode: accents, CJK, a surrogate pair, and lone surrogates (in a key or a pattern, decided as re2 on this Node decides)', () => {
      const matches = ['^é/中$', '^😀/', '^😀?x', '^\ud83d', '^\ufffd/$', '^é'];
      agree(matches, 'é/中', ['p0', 'p5']);
      agree(matches, '😀/run', ['p1']);
      agree(matches, 'x/run', ['p2']);
      agree(matches, '😀x', ['p2']);
      agreeWithRe2(matches, '\ud83d/');
      agree(matches, '\ufffd/', ['p4']);
      agreeWithRe2(matches, '\ud83d\ud83d/');
      agreeWithRe2(matches, '\ud83d');
      agreeWithRe2(['^\ud83d$', '^\ufffd', '\ud83d', undefined, '.*'], 'a\udc00b/\ud83d');
      agree(matches, 'e\u0301/中', []);
    });

    it('a newline: $ is the end of the key, . does not match it', () => {
      const matches = ['^fs/read$', '^fs/.*$', '^fs/.*', '^fs/'];
      agree(matches, 'fs/read\n', ['p2', 'p3']);
      agree(matches, 'fs/a\nb', ['p2', 'p3']);
      agree(matches, 'fs/read', ['p0', 'p1', 'p2', 'p3']);
    });

    it('a top-level | drops the anchor, so such a pattern is left to re2', () => {
      agree(['^fs/|http'], 'my-http/get', ['p0']);
      agree(['^(fs|http)/'], 'my-http/get', []);
    });
  });
});

describe('policy index: decisions through the engine (equivalence with a plain re2 scan)', () => {
  /** The combined decision the naive candidates give, as evaluate-decision builds it for policies without a worker. */
  function expected(naive: NaiveScan, set: PolicySet, type: 'beforeToolCall' | 'afterToolCall', key: string, args: Record<string, unknown>, failed: boolean, defaultDecision: 'allow' | 'deny') {
    let candidates: Array<[CompiledPolicy, PolicyEventName]> = naive.candidates(type, key, args).map((p) => [p, type]);
    if (failed) {
      const byPolicy = new Map(candidates);
      for (const p of naive.candidates('onToolCallError', key, args)) byPolicy.set(p, 'onToolCallError');
      candidates = [...byPolicy].sort((a, b) => set.order.get(a[0])! - set.order.get(b[0])!);
    }
    const verdicts: PolicyVerdict[] = candidates.map(([p]) => ({ policy: p, matched: true, effect: p.effect, reason: p.reason && 'text' in p.reason ? p.reason.text : undefined, redact: p.redact }));
    const c = combineVerdicts(verdicts, type === 'beforeToolCall' ? defaultDecision : 'allow');
    return { effect: c.effect, reason: c.reason, policyIds: c.policyIds, defaulted: c.defaulted, redactions: c.redactions.map((r) => r.replacement), verdicts: verdicts.map((v) => v.policy.id) };
  }
  const observed = (e: PolicyEvaluation) => ({
    effect: e.effect,
    reason: e.reason,
    policyIds: e.policyIds,
    defaulted: e.defaulted,
    redactions: e.redactions.map((r) => r.replacement),
    verdicts: e.verdicts.map((v) => v.policy.id),
  });

  for (const defaultDecision of ['allow', 'deny'] as const) {
    it(`decides 6,000 distinct tool names (calls, results, failed results) as the scan does, default ${defaultDecision}`, async () => {
      const rand = seededRandom(defaultDecision === 'allow' ? 21 : 22);
      const tools: Array<{ identifier: string; apiName: string }> = [];
      const seen = new Set<string>();
      for (let n = 0; tools.length < 6000; n++) {
        const t = toolName(rand, n);
        if (!seen.has(keyOf(t))) tools.push(t), seen.add(keyOf(t));
      }
      const rules = generateRules(rand, 200, [...seen]);
      const t = await engineWithPack(packText(rules), { defaultDecision, maxWorkers: 1 });
      try {
        const set = t.engine.policySet;
        assert.equal(set.policies.length, 200);
        const naive = new NaiveScan(set.policies);
        const effects = new Map<string, number>();
        for (const [i, tool] of tools.entries()) {
          const args = { path: i % 5 === 0 ? '/secret/a' : '/work/a', note: i % 7 === 0 ? 'a token' : 'text' };
          const key = keyOf(tool);
          const call = await t.engine.evaluate('beforeToolCall', toolCall(tool.identifier, tool.apiName, args));
          assert.deepEqual({ key, ...observed(call) }, { key, ...expected(naive, set, 'beforeToolCall', key, args, false, defaultDecision) });
          const failed = i % 3 === 0;
          const result = await t.engine.evaluate('afterToolCall', toolResult(toolCall(tool.identifier, tool.apiName, args), { content: 'a secret', success: !failed }));
          assert.deepEqual({ key, failed, ...observed(result) }, { key, failed, ...expected(naive, set, 'afterToolCall', key, args, failed, defaultDecision) });
          for (const e of [call, result]) effects.set(e.decision, (effects.get(e.decision) ?? 0) + 1);
        }
        for (const decision of ['allow', 'deny', 'ask', 'redact']) assert.ok((effects.get(decision) ?? 0) > 50, `too few ${decision} decisions to compare: ${JSON.stringify([...effects])}`);
      } finally {
        await t.close();
      }
    });
  }
});
