import assert from 'node:assert/strict';
import { isHookgateError } from '../../kernel/errors.js';
import { loadPacks } from '../../policies/load-packs.js';
import { PolicyEngine } from '../../policies/policy-engine.js';
import { formatLoadError } from '../../policies/policy-types.js';
import { tempDir, writeFileIn } from './support/policy-fixtures.js';

describe('policy pack loading', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  const load = async (yaml: string) => {
    const file = await writeFileIn(dir, 'pack.yaml', yaml);
    return { file, ...(await loadPacks([dir])) };
  };

  it('loads a valid pack with its name, defaults and tests', async () => {
    const { packs, errors } = await load(`
name: demo
defaults: { mode: shadow }
policies:
  - id: p1
    match: '^fs/'
    effect: deny
    tests:
      - { name: t, event: { identifier: fs, apiName: read }, expect: { effect: deny } }
`);
    assert.deepEqual(errors, []);
    assert.equal(packs[0]!.name, 'demo');
    assert.equal(packs[0]!.policies[0]!.mode, 'shadow');
    assert.deepEqual([...packs[0]!.policies[0]!.events], ['beforeToolCall']);
    assert.equal(packs[0]!.tests.length, 1);
  });

  it('reports every error at once, each naming file, policy id and field', async () => {
    const { file, errors, packs } = await load(`
policies:
  - id: bad-effect
    effect: maybe
  - id: bad-regex
    match: '(a)\\1'
    effect: deny
  - id: bad-when
    when: 'args.path = '
    effect: deny
  - id: typo
    efect: deny
`);
    assert.equal(packs.length, 0);
    const byId = new Map(errors.map((e) => [e.policyId, e]));
    assert.equal(byId.get('bad-effect')?.field, 'effect');
    assert.equal(byId.get('bad-regex')?.field, 'match');
    assert.equal(byId.get('bad-when')?.field, 'when');
    assert.ok(errors.some((e) => e.policyId === 'typo' && e.field === 'efect'));
    assert.ok(errors.every((e) => e.file === file));
    assert.match(formatLoadError(byId.get('bad-regex')!), /pack\.yaml: policy "bad-regex": field "match": regex/);
  });

  it('rejects backreferences and lookaround, saying re2 cannot run them', async () => {
    const { errors } = await load(`
policies:
  - { id: backref, match: '(a)\\1', effect: deny }
  - { id: lookahead, match: 'foo(?=bar)', effect: deny }
  - { id: lookbehind, args: { path: '(?<!x)y' }, effect: deny }
`);
    assert.equal(errors.length, 3);
    for (const e of errors) assert.match(e.message, /re2 does not support backreferences or lookaround/);
    assert.equal(errors.find((e) => e.policyId === 'lookbehind')?.field, 'args.path');
  });

  it('rejects regex literals inside JSONata that re2 cannot run', async () => {
    const { errors } = await load(`
policies:
  - { id: p, when: '$contains(args.x, /(a)\\1/)', effect: deny }
`);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.field, 'when');
    assert.match(errors[0]!.message, /re2/);
  });

  it('rejects $eval in expressions', async () => {
    const { errors } = await load(`
policies:
  - { id: p, when: '$eval(args.code)', effect: deny }
`);
    assert.match(errors[0]!.message, /\$eval is not allowed/);
  });

  it('compiles reason expressions at load and names the reason.expr field', async () => {
    const { errors } = await load(`
policies:
  - { id: p, effect: deny, reason: { expr: '"x" & ' } }
`);
    assert.equal(errors[0]!.field, 'reason.expr');
  });

  it('requires redact settings exactly when the effect is redact', async () => {
    const { errors } = await load(`
policies:
  - { id: r1, effect: redact, events: [afterToolCall] }
  - { id: r2, effect: deny, redact: { pattern: x } }
  - { id: r3, effect: redact, events: [beforeToolCall], redact: { pattern: x } }
`);
    assert.deepEqual(
      errors.map((e) => [e.policyId, e.field]),
      [
        ['r1', 'redact'],
        ['r2', 'redact'],
        ['r3', 'events'],
      ],
    );
  });

  it('reports invalid YAML with the file name', async () => {
    const { errors, file } = await load('policies: [ {id: x');
    assert.equal(errors[0]!.file, file);
    assert.match(errors[0]!.message, /invalid YAML/);
  });

  it('reports a missing policies list and unknown pack fields', async () => {
    const { errors } = await load('name: x\nrules: []\n');
    assert.deepEqual(errors.map((e) => e.field).sort(), ['policies', 'rules']);
  });

  it('reports duplicate policy ids across packs', async () => {
    await writeFileIn(dir, 'a.yaml', 'policies: [ { id: same, effect: deny } ]');
    await writeFileIn(dir, 'b.yaml', 'policies: [ { id: same, effect: allow } ]');
    const { errors } = await loadPacks([dir]);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.message, /duplicate policy id/);
  });

  it('reports a code policy module that does not exist', async () => {
    const { errors } = await load('policies: [ { id: c, module: ./missing.js } ]');
    assert.equal(errors[0]!.field, 'module');
    assert.match(errors[0]!.message, /not found/);
  });

  it('refuses to start an engine on invalid packs, with POLICY_INVALID listing every error', async () => {
    await writeFileIn(dir, 'pack.yaml', 'policies: [ { id: a, effect: nope }, { id: b, match: "(?=x)", effect: deny } ]');
    const engine = new PolicyEngine({ paths: [dir] });
    await assert.rejects(engine.start(), (err: unknown) => {
      assert.ok(isHookgateError(err, 'POLICY_INVALID'));
      assert.equal((err.details.errors as unknown[]).length, 2);
      return true;
    });
    await engine.stop();
  });
});
