import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runHookgate } from '../helpers/cli-process.js';


/** Runs `node dist/cli.js ...args` in `cwd`, without HOOKGATE_* variables from the developer's shell. */
const hookgate = runHookgate;

const GUARD = `
name: guard
policies:
  - id: no-secret-writes
    match: '^fs/writeFile$'
    args: { path: '^secret' }
    effect: deny
    reason: secrets are read-only
    tests:
      - name: denies a secret write
        event: { identifier: fs, apiName: writeFile, args: { path: secret.txt } }
        expect: { effect: deny, reason: secrets are read-only }
      - name: allows a plain write
        event: { identifier: fs, apiName: writeFile, args: { path: notes.txt } }
        expect: { effect: allow }
`;

const FAILING = `
name: wrong
policies:
  - id: no-rm
    match: '^shell/exec$'
    effect: deny
    reason: no rm
    tests:
      - name: wrongly expects allow
        event: { identifier: shell, apiName: exec, args: { command: 'rm -rf /' } }
        expect: { effect: allow }
`;

/** Two broken policies in one file, a third in another: all must be reported in one run. */
const BROKEN_A = `
policies:
  - id: backref
    match: '(x)\\1'
    effect: deny
  - id: bad-effect
    effect: perhaps
`;
const BROKEN_B = `
policies:
  - id: bad-when
    when: '(('
    effect: deny
`;

const AGENT = `
id: writer
model:
  provider: scripted
  turns:
    - toolCalls:
        - { identifier: fs, apiName: writeFile, args: { path: secret.txt, content: x } }
        - { identifier: fs, apiName: writeFile, args: { path: notes.txt, content: y } }
    - text: done
tools: [fs/*]
`;

describe('hookgate policy and decisions commands', function () {
  this.timeout(60_000);
  let dir: string;
  const write = async (name: string, text: string) => {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  };

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-policy-cli-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  describe('policy check', () => {
    it('exits 2 and lists every error at once (both broken policies of a file, and the other file)', async () => {
      await write('packs/a.yaml', BROKEN_A);
      await write('packs/b.yaml', BROKEN_B);
      const r = await hookgate(dir, ['policy', 'check', 'packs']);

      assert.equal(r.code, 2, r.stdout + r.stderr);
      const out = r.stdout + r.stderr;
      assert.match(out, /a\.yaml: policy "backref": field "match": .*re2/);
      assert.match(out, /a\.yaml: policy "bad-effect": field "effect"/);
      assert.match(out, /b\.yaml: policy "bad-when": field "when"/);
      assert.match(out, /3 errors/);
    });

    it('exits 0 for valid packs', async () => {
      await write('packs/guard.yaml', GUARD);
      const r = await hookgate(dir, ['policy', 'check', 'packs']);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /1 packs, 1 policies: no errors/);
    });

    it('without paths, checks policies.paths from the config file', async () => {
      await write('packs/a.yaml', BROKEN_A);
      await write('hookgate.config.yaml', 'policies:\n  paths: [packs]\n');
      const r = await hookgate(dir, ['policy', 'check']);
      assert.equal(r.code, 2);
      assert.match(r.stdout + r.stderr, /policy "bad-effect"/);
    });
  });

  describe('policy test', () => {
    it('exits 1 on a failing inline test and shows expected vs actual', async () => {
      await write('packs/wrong.yaml', FAILING);
      const r = await hookgate(dir, ['policy', 'test', 'packs']);

      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /FAIL: wrong\/no-rm: wrongly expects allow/);
      assert.match(r.stdout, /- expected: "allow"/);
      assert.match(r.stdout, /\+ actual: +"deny"/);
    });

    it('exits 0 when every test of the packs passes, one PASS line per test', async () => {
      await write('packs/guard.yaml', GUARD);
      const r = await hookgate(dir, ['policy', 'test', 'packs']);

      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /PASS: guard\/no-secret-writes: denies a secret write/);
      assert.match(r.stdout, /PASS: guard\/no-secret-writes: allows a plain write/);
      assert.doesNotMatch(r.stdout, /FAIL/);
    });

    it('--json prints parseable results with expected and actual; the exit code still reflects failures', async () => {
      await write('packs/guard.yaml', GUARD);
      await write('packs/wrong.yaml', FAILING);
      const r = await hookgate(dir, ['policy', 'test', '--json', 'packs']);

      assert.equal(r.code, 1);
      const out = JSON.parse(r.stdout) as { passed: number; failed: number; results: Array<{ name: string; pass: boolean; expected: { effect: string }; actual: { effect: string } }> };
      assert.equal(out.passed, 2);
      assert.equal(out.failed, 1);
      const failed = out.results.find((t) => !t.pass)!;
      assert.equal(failed.name, 'wrongly expects allow');
      assert.equal(failed.expected.effect, 'allow');
      assert.equal(failed.actual.effect, 'deny');
    });

    it('exits 2 when a pack does not load', async () => {
      await write('packs/a.yaml', BROKEN_A);
      const r = await hookgate(dir, ['policy', 'test', 'packs']);
      assert.equal(r.code, 2);
    });
  });

  describe('policy eval', () => {
    beforeEach(() => write('packs/guard.yaml', GUARD));

    it('prints the decision, the reason and the deciding policy', async () => {
      await write('event.json', JSON.stringify({ type: 'beforeToolCall', identifier: 'fs', apiName: 'writeFile', args: { path: 'secret.txt', content: 'x' } }));
      const r = await hookgate(dir, ['policy', 'eval', '--event', 'event.json', 'packs']);

      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^decision: deny$/m);
      assert.match(r.stdout, /^reason: secrets are read-only$/m);
      assert.match(r.stdout, /no-secret-writes \[enforce\]: deny/);
    });

    it('--json parses and says an unmatched call is allowed by default', async () => {
      await write('event.json', JSON.stringify({ type: 'beforeToolCall', identifier: 'fs', apiName: 'writeFile', args: { path: 'notes.txt' } }));
      const r = await hookgate(dir, ['policy', 'eval', '--json', '--event', 'event.json', 'packs']);

      assert.equal(r.code, 0, r.stdout + r.stderr);
      const out = JSON.parse(r.stdout) as { decision: string; defaulted: boolean; policyIds: string[] };
      assert.equal(out.decision, 'allow');
      assert.equal(out.defaulted, true);
      assert.deepEqual(out.policyIds, []);
    });

    it('exits 2 on an event file that is not JSON', async () => {
      await write('event.json', '{ not json');
      const r = await hookgate(dir, ['policy', 'eval', '--event', 'event.json', 'packs']);
      assert.equal(r.code, 2);
      assert.match(r.stdout + r.stderr, /event\.json/);
    });
  });

  describe('decisions after a run', () => {
    let operationId: string;
    beforeEach(async () => {
      await write('packs/guard.yaml', GUARD);
      await write('hookgate.config.yaml', 'policies:\n  paths: [packs]\n');
      await write('agent.yaml', AGENT);
      const run = await hookgate(dir, ['run', '--json', 'agent.yaml']);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      const finished = run.stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { type: string; operationId?: string })
        .find((e) => e.type === 'operation_finished');
      operationId = finished!.operationId!;
    });

    it('decisions --json lists the run’s decisions, the policy deny included', async () => {
      const r = await hookgate(dir, ['decisions', '--json']);

      assert.equal(r.code, 0, r.stdout + r.stderr);
      const records = JSON.parse(r.stdout) as Array<{ operationId: string; event: string; decision: string; policies: Array<{ id: string }>; reason?: string; inputDigest: string }>;
      assert.ok(records.length >= 3, `${records.length} decisions`);
      assert.ok(records.every((d) => d.operationId === operationId));
      const denies = records.filter((d) => d.decision === 'deny');
      assert.equal(denies.length, 1);
      assert.equal(denies[0]!.reason, 'secrets are read-only');
      assert.deepEqual(
        denies[0]!.policies.map((p) => p.id),
        ['no-secret-writes'],
      );
      assert.match(denies[0]!.inputDigest, /^[0-9a-f]{64}$/);
    });

    it('decisions --effect deny --policy filters, in the text form', async () => {
      const r = await hookgate(dir, ['decisions', '--effect', 'deny', '--policy', 'no-secret-writes']);

      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, new RegExp(`${operationId}\\s+beforeToolCall\\s+fs/writeFile\\s+deny\\s+no-secret-writes=deny`));
      assert.match(r.stdout, /^1 decision$/m);
    });
  });
});
