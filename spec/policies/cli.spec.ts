import assert from 'node:assert/strict';
import { decisionsQuery } from '../../policies/cli/decisions-query.js';
import { policyCheck } from '../../policies/cli/policy-check.js';
import { policyEval } from '../../policies/cli/policy-eval.js';
import { policyTest } from '../../policies/cli/policy-test.js';
import { engineWithPack, MemoryDecisionLog, tempDir, toolCall, writeFileIn } from './support/policy-fixtures.js';

const GOOD = `
name: good
policies:
  - id: no-rm
    match: '^shell/exec$'
    when: '$contains(args.command, "rm ")'
    effect: deny
    reason: no rm
    tests:
      - { name: denies rm, event: { identifier: shell, apiName: exec, args: { command: 'rm -r x' } }, expect: { effect: deny, reason: no rm } }
      - { name: allows ls, event: { identifier: shell, apiName: exec, args: { command: 'ls' } }, expect: { effect: allow } }
`;

const FAILING_TEST = `
policies:
  - id: no-rm
    match: '^shell/exec$'
    effect: deny
    reason: no rm
    tests:
      - { name: wrongly expects allow, event: { identifier: shell, apiName: exec }, expect: { effect: allow } }
      - { name: wrong reason, event: { identifier: shell, apiName: exec }, expect: { effect: deny, reason: something else } }
`;

describe('policy CLI functions', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  it('policy check exits 0 with a summary for valid packs', async () => {
    await writeFileIn(dir, 'good.yaml', GOOD);
    const r = await policyCheck([dir]);
    assert.equal(r.exitCode, 0);
    assert.match(r.output, /1 packs, 1 policies: no errors/);
  });

  it('policy check exits 2 and lists every error across files at once', async () => {
    await writeFileIn(dir, 'a.yaml', 'policies: [ { id: a, match: "(x)\\\\1", effect: deny } ]');
    await writeFileIn(dir, 'b.yaml', 'policies: [ { id: b, when: "((", effect: deny }, { id: c, effect: perhaps } ]');
    const r = await policyCheck([dir]);
    assert.equal(r.exitCode, 2);
    assert.match(r.output, /a\.yaml: policy "a": field "match": regex .* re2 does not support backreferences/);
    assert.match(r.output, /b\.yaml: policy "b": field "when": JSONata does not compile/);
    assert.match(r.output, /b\.yaml: policy "c": field "effect"/);
    assert.match(r.output, /3 errors$/);
  });

  it('policy check exits 2 for a path that does not exist', async () => {
    const r = await policyCheck([dir + '/nope']);
    assert.equal(r.exitCode, 2);
    assert.match(r.output, /cannot read/);
  });

  it('policy check imports code policies in a worker and reports a bad module', async () => {
    await writeFileIn(dir, 'p.yaml', 'policies: [ { module: ./bad.mjs } ]');
    await writeFileIn(dir, 'bad.mjs', 'export default { nope: true };');
    const r = await policyCheck([dir]);
    assert.equal(r.exitCode, 2);
    assert.match(r.output, /field "module": cannot load code policy: the module must default-export definePolicy/);
  });

  it('policy test exits 0 and prints PASS per test', async () => {
    await writeFileIn(dir, 'good.yaml', GOOD);
    const r = await policyTest([dir]);
    assert.equal(r.exitCode, 0, r.output);
    assert.match(r.output, /PASS: good\/no-rm: denies rm/);
    assert.match(r.output, /PASS: good\/no-rm: allows ls/);
    assert.match(r.output, /PASS: 2\/2/);
  });

  it('policy test exits 1 on a failing test and shows expected vs actual', async () => {
    await writeFileIn(dir, 'bad.yaml', FAILING_TEST);
    const r = await policyTest([dir]);
    assert.equal(r.exitCode, 1);
    assert.match(r.output, /FAIL: bad\/no-rm: wrongly expects allow/);
    assert.match(r.output, /- expected: "allow"\n\s+\+ actual: {3}"deny"/);
    assert.match(r.output, /- expected: "something else"\n\s+\+ actual: {3}"no rm"/);
    assert.match(r.output, /FAIL: 2\/2/);
  });

  it('policy test --json gives machine-readable results', async () => {
    await writeFileIn(dir, 'bad.yaml', FAILING_TEST);
    const r = await policyTest([dir], { json: true });
    const parsed = JSON.parse(r.output) as { passed: number; failed: number; results: Array<{ name: string; pass: boolean; expected: unknown; actual: unknown }> };
    assert.equal(r.exitCode, 1);
    assert.deepEqual([parsed.passed, parsed.failed], [0, 2]);
    assert.deepEqual(parsed.results[0]!.actual, { effect: 'deny' });
  });

  it('policy test exits 2 when packs do not load', async () => {
    await writeFileIn(dir, 'bad.yaml', 'policies: [ { id: x } ]');
    assert.equal((await policyTest([dir])).exitCode, 2);
  });

  it('policy eval shows the decision and each candidate verdict', async () => {
    await writeFileIn(dir, 'good.yaml', GOOD);
    const event = await writeFileIn(dir, 'event.json', JSON.stringify({ type: 'beforeToolCall', identifier: 'shell', apiName: 'exec', args: { command: 'rm -rf x' } }));
    const r = await policyEval([dir + '/good.yaml'], event);
    assert.equal(r.exitCode, 0);
    assert.match(r.output, /^decision: deny\nreason: no rm\n {2}no-rm \[enforce\]: deny \(no rm\)/);
    const json = JSON.parse((await policyEval([dir + '/good.yaml'], event, { json: true })).output) as { decision: string; verdicts: unknown[] };
    assert.equal(json.decision, 'deny');
    assert.equal(json.verdicts.length, 1);
  });

  it('policy eval exits 2 for an unreadable event file', async () => {
    await writeFileIn(dir, 'good.yaml', GOOD);
    const event = await writeFileIn(dir, 'event.json', '{ not json');
    assert.equal((await policyEval([dir + '/good.yaml'], event)).exitCode, 2);
  });

  it('decisions query filters the log and formats one line per decision', async () => {
    const t = await engineWithPack(GOOD);
    try {
      await t.engine.evaluateToolCall(toolCall('shell', 'exec', { command: 'rm x' }, { operationId: 'op-a' }));
      await t.engine.evaluateToolCall(toolCall('shell', 'exec', { command: 'ls' }, { operationId: 'op-b' }));
      await t.engine.flush();
      const denies = await decisionsQuery(t.log, { decision: 'deny' });
      assert.equal(denies.exitCode, 0);
      assert.match(denies.output, /op-a {2}beforeToolCall {2}shell\/exec {2}deny {2}no-rm=deny {2}[\d.]+µs {2}no rm\n1 decision$/);
      const byOp = await decisionsQuery(t.log, { operationId: 'op-b' }, { json: true });
      assert.equal((JSON.parse(byOp.output) as unknown[]).length, 1);
      assert.equal((await decisionsQuery(new MemoryDecisionLog(), {})).output, 'no decisions');
      assert.equal((await decisionsQuery(t.log, { since: 'yesterday-ish' })).exitCode, 2);
    } finally {
      await t.close();
    }
  });
});
