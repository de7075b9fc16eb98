import assert from 'node:assert/strict';
import path from 'node:path';
import { isHookgateError } from '../../kernel/errors.js';
import { loadPacks } from '../../policies/load-packs.js';
import { formatLoadError } from '../../policies/policy-types.js';
import { engineWithPack, tempDir, toolCall, toolResult, writeFileIn } from './support/policy-fixtures.js';
import { runHookgate } from '../helpers/cli-process.js';

const WHY = 'effect "ask" applies only to beforeToolCall; a tool result cannot wait for a human (use deny or redact)';

const hookgate = runHookgate;

/** A result cannot be parked for a human: `ask` on afterToolCall / onToolCallError is refused at load, not logged and ignored. */
describe('policy effect ask on result events', function () {
  this.timeout(60_000);
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  const loadOne = async (yaml: string) => {
    const file = await writeFileIn(dir, 'x.yaml', yaml);
    const { packs, errors } = await loadPacks([dir]);
    return { file, packs, lines: errors.map(formatLoadError) };
  };

  it('refuses events: [afterToolCall] with effect ask, naming the file, the policy and the field', async () => {
    const { file, packs, lines } = await loadOne(`policies: [ { id: p, events: [afterToolCall], effect: ask } ]`);
    assert.deepEqual(lines, [`${file}: policy "p": field "effect": ${WHY} (events: afterToolCall)`]);
    assert.deepEqual(packs, []);
  });

  it('refuses onToolCallError, a mixed list, shadow mode, and result events that come from pack defaults', async () => {
    for (const [yaml, events] of [
      [`policies: [ { id: p, events: [onToolCallError], effect: ask } ]`, 'onToolCallError'],
      [`policies: [ { id: p, events: [beforeToolCall, afterToolCall], effect: ask } ]`, 'afterToolCall'],
      [`policies: [ { id: p, events: [afterToolCall], effect: ask, mode: shadow } ]`, 'afterToolCall'],
      [`defaults: { events: [afterToolCall, onToolCallError] }\npolicies: [ { id: p, effect: ask } ]`, 'afterToolCall, onToolCallError'],
    ] as const) {
      const { file, lines } = await loadOne(yaml);
      assert.deepEqual(lines, [`${file}: policy "p": field "effect": ${WHY} (events: ${events})`], yaml);
    }
  });

  it('still loads ask on beforeToolCall (the default event for ask)', async () => {
    const { packs, lines } = await loadOne(`policies: [ { id: p, match: '^fs/', effect: ask }, { id: q, events: [beforeToolCall], effect: ask } ]`);
    assert.deepEqual(lines, []);
    assert.deepEqual(packs[0]!.policies.map((p) => [...p.events]), [['beforeToolCall'], ['beforeToolCall']]);
  });

  it('refuses an inline test that expects ask for a result event', async () => {
    const { file, lines } = await loadOne(`
policies:
  - id: p
    effect: deny
    events: [beforeToolCall, afterToolCall]
    tests:
      - { name: t, event: { type: afterToolCall, identifier: fs, apiName: read }, expect: { effect: ask } }
tests:
  - { name: u, event: { type: onToolCallError, identifier: fs, apiName: read }, expect: { effect: ask } }
`);
    assert.deepEqual(lines, [
      `${file}: policy "p": field "tests[0].expect.effect": ${WHY} (this test's event is afterToolCall)`,
      `${file}: field "tests[0].expect.effect": ${WHY} (this test's event is onToolCallError)`,
    ]);
  });

  it('a code policy declaring effects [ask] on afterToolCall is refused at load (engine start fails with POLICY_INVALID)', async () => {
    await writeFileIn(dir, 'asker.mjs', `export default { id: 'code.asker', events: ['afterToolCall'], effects: ['ask', 'allow'], evaluate: () => ({ effect: 'ask' }) };`);
    await assert.rejects(
      engineWithPack(`policies: [ { module: ${JSON.stringify(path.join(dir, 'asker.mjs'))} } ]`),
      (err: unknown) => {
        assert.ok(isHookgateError(err, 'POLICY_INVALID'), String(err));
        assert.match(err.message, new RegExp(`policy "code\\.asker": field "effects": ${WHY.replace(/[()]/g, '\\$&')} \\(events: afterToolCall\\)`));
        return true;
      },
    );
  });

  for (const effects of ['', `effects: ['ask', 'deny'], `]) {
  it(`a code policy on both events that returns ask for a result fails closed: the result is denied, naming the policy (${effects ? 'effects declared' : 'no effects declared'})`, async () => {
    const t = await engineWithPack(`policies: [ { module: ./asker.mjs } ]`, {}, {
      'asker.mjs': `export default { id: 'code.asker', events: ['beforeToolCall', 'afterToolCall'], ${effects}evaluate: () => ({ effect: 'ask', reason: 'check it' }) };`,
    });
    try {
      const call = toolCall('fs', 'readFile', { path: 'a.txt' });
      assert.equal((await t.engine.evaluateToolCall(call)).effect, 'ask', 'before the call, ask still parks');
      const d = await t.engine.evaluate('afterToolCall', toolResult(call, { content: 'secret' }));
      assert.equal(d.decision, 'deny');
      assert.deepEqual(d.policyIds, ['code.asker']);
      assert.equal(d.verdicts[0]!.error, `evaluation error: ${WHY}`);
    } finally {
      await t.close();
    }
  });
  }

  it('a code policy returning an effect its declared effects do not list fails closed', async () => {
    const t = await engineWithPack(`policies: [ { module: ./liar.mjs } ]`, {}, {
      'liar.mjs': `export default { id: 'code.liar', events: ['beforeToolCall'], effects: ['deny'], evaluate: () => ({ effect: 'allow' }) };`,
    });
    try {
      const d = await t.engine.evaluate('beforeToolCall', toolCall('fs', 'readFile', {}));
      assert.equal(d.decision, 'deny');
      assert.equal(d.verdicts[0]!.error, 'evaluation error: evaluate returned effect "allow", which its definePolicy effects (deny) do not list');
    } finally {
      await t.close();
    }
  });

  it('CLI: `policy check` and `policy test` exit 2 with the file, policy and reason (YAML and code policies)', async () => {
    await writeFileIn(dir, 'x.yaml', `policies:\n  - id: p\n    events: [afterToolCall]\n    effect: ask\n  - module: ./asker.mjs\n`);
    await writeFileIn(dir, 'asker.mjs', `export default { id: 'code.asker', events: ['onToolCallError'], effects: ['ask'], evaluate: () => ({ effect: 'ask' }) };`);
    for (const command of ['check', 'test']) {
      const r = await hookgate(dir, ['policy', command, 'x.yaml']);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      const file = path.join(await import('node:fs').then((fs) => fs.realpathSync(dir)), 'x.yaml');
      const lines = r.stdout.trim().split('\n');
      assert.deepEqual(lines, [
        `error: ${file}: policy "p": field "effect": ${WHY} (events: afterToolCall)`,
        `error: ${file}: policy "code.asker": field "effects": ${WHY} (events: onToolCallError)`,
        '2 errors',
      ]);
    }
  });
});
