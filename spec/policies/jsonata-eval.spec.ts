import assert from 'node:assert/strict';
import { loadPacks } from '../../policies/load-packs.js';
import { formatLoadError } from '../../policies/policy-types.js';
import { engineWithPack, tempDir, toolCall, writeFileIn } from './support/policy-fixtures.js';

const REFUSED = 'JSONata function $eval is not allowed in policies (in any form: a call, a reference, an alias or a binding)';

/** Every way to write a reference to $eval: JSONata resolves functions by variable name only. */
const SPELLINGS = [
  '$eval(args.code)',
  '($e := $eval; $e(args.code))',
  'args.code ~> $eval',
  '$map([args.code], $eval)[0]',
  '$eval(?)(args.code)',
  '[$eval][0](args.code)',
  '$sift({"f": $eval}, function($v) { true }).f(args.code)',
  '$spread({"f": $eval})',
  'function($eval) { $eval(args.code) }($string)',
  'args@$eval.path',
  'args#$eval.path',
  '$eval /* comment */ (args.code)',
  'args.$eval(code)',
];

describe('policies: $eval is refused at load in every spelling', function () {
  this.timeout(30_000);
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  for (const expr of SPELLINGS) {
    it(`when: ${expr}`, async () => {
      const file = await writeFileIn(dir, 'p.yaml', `policies:\n  - id: p\n    when: ${JSON.stringify(expr)}\n    effect: deny\n`);
      const { packs, errors } = await loadPacks([dir]);
      assert.deepEqual(errors.map(formatLoadError), [`${file}: policy "p": field "when": ${REFUSED}`]);
      assert.deepEqual(packs, []);
    });
  }

  it('reason.expr is checked the same way', async () => {
    const file = await writeFileIn(dir, 'p.yaml', `policies:\n  - id: p\n    effect: deny\n    reason: { expr: '($f := $eval; $f("\\"x\\""))' }\n`);
    const { errors } = await loadPacks([dir]);
    assert.deepEqual(errors.map(formatLoadError), [`${file}: policy "p": field "reason.expr": ${REFUSED}`]);
  });

  it('leaves names that only look alike: a field called eval, $evaluate, the string "$eval"', async () => {
    await writeFileIn(dir, 'p.yaml', `policies:\n  - { id: p, when: 'args.eval = "$eval" or $exists($lookup(args, "eval"))', effect: deny }\n`);
    const { errors } = await loadPacks([dir]);
    assert.deepEqual(errors, []);
  });

  it('$lookup($, "eval") reads the event data, never the function: calling it fails closed instead of evaluating text', async () => {
    // An allow that would only apply if the looked-up value evaluated "true".
    const t = await engineWithPack(`policies:\n  - { id: sneaky, when: '$lookup($, "eval")("true")', effect: allow }\n`, { defaultDecision: 'allow' });
    try {
      const d = await t.engine.evaluate('beforeToolCall', { ...toolCall('fs', 'readFile', { path: 'a' }), eval: 'true' } as ReturnType<typeof toolCall>);
      assert.equal(d.decision, 'deny');
      assert.match(d.verdicts[0]!.error ?? '', /^evaluation error: .*(function|invoke)/i);
    } finally {
      await t.close();
    }
  });
});
