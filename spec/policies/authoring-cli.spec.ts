import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT, runHookgate } from '../helpers/cli-process.js';
import { tempDir, writeFileIn } from './support/policy-fixtures.js';

/** The YAML block of the README's "Policy-as-code" section, as a user would copy it. */
async function readmePolicyExample(): Promise<string> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Policy-as-code'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'the Policy-as-code section has a yaml block');
  return block[1]!;
}

const TYPO = `
policies:
  - id: no-env
    match: '^fs/readfile$'
    when: '$contains(arg.path, ".env")'
    effect: deny
`;

/** One policy per warning class; each is valid YAML that loads. */
const WARNING_CLASSES: Array<{ name: string; field: string; yaml: string; message: RegExp }> = [
  {
    name: 'a match that matches no known tool',
    field: 'match',
    yaml: `{ id: p, match: '^shell/exec$', effect: deny }`,
    message: /\/\^shell\/exec\$\/ matches no tool in the catalog \(6 tools: fs\/readFile, .*time\/now; sub-agents agents\/<id>\).*the policy never applies/,
  },
  {
    name: 'an args key the schema does not have',
    field: 'args.pth',
    yaml: `{ id: p, match: '^fs/readFile$', args: { pth: '^/etc/' }, effect: deny }`,
    message: /`pth` is not an argument of fs\/readFile \(arguments: path, encoding\); did you mean `path`\?: this matcher never matches/,
  },
  {
    name: 'a when path the schema does not have',
    field: 'when',
    yaml: `{ id: p, match: '^fs/writeFile$', when: '$length(args.contnt) > 10', effect: deny }`,
    message: /`contnt` \(at \d+\) is not an argument of fs\/writeFile \(arguments: path, content, encoding\); did you mean `content`\?: `args.contnt` is always undefined/,
  },
  {
    name: 'a when comparing an enum to a value it never has',
    field: 'when',
    yaml: `{ id: p, match: '^fs/readFile$', when: 'args.encoding = "base65"', effect: deny }`,
    message: /`args.encoding = "base65"` is never true: `args.encoding` is one of "utf8", "base64", "hex", "latin1" \(in the input schema of fs\/readFile\)/,
  },
  {
    name: 'a when comparing a string field to a number',
    field: 'when',
    yaml: `{ id: p, match: '^fs/readFile$', when: 'args.path = 5', effect: deny }`,
    message: /`args.path = 5` is never true: `args.path` is a string \(in the input schema of fs\/readFile\), `5` is a number/,
  },
  {
    name: 'a string function given a number',
    field: 'when',
    yaml: `{ id: p, match: '^fs/', when: '$contains(stepIndex, "x")', effect: deny }`,
    message: /`\$contains\(stepIndex, "x"\)` gives \$contains `stepIndex` is a number, but \$contains takes a string: JSONata raises a type error, so the policy fails closed/,
  },
];

describe('policy authoring through the CLI (check against the tool catalog, test --coverage, eval --explain)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  it("the README's policy example passes `policy test` and `policy check` (no errors, no warnings)", async () => {
    await mkdir(path.join(dir, 'policies'));
    await writeFileIn(dir, 'policies/no-env.yaml', await readmePolicyExample());
    const test = await runHookgate(dir, ['policy', 'test']);
    assert.equal(test.code, 0, test.stdout + test.stderr);
    assert.match(test.stdout, /PASS: no-env\/no-env-files: denies a \.env file/);
    assert.match(test.stdout, /PASS: 2\/2/);
    const check = await runHookgate(dir, ['policy', 'check', '--strict']);
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /1 packs, 1 policies: no errors, no warnings/);
  });

  it('a test needs no name: it is named by its place', async () => {
    await writeFileIn(dir, 'p.yaml', `policies:\n  - { id: p, effect: deny, tests: [ { event: { identifier: fs, apiName: stat }, expect: { effect: deny } } ] }\n`);
    const r = await runHookgate(dir, ['policy', 'test', 'p.yaml']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /PASS: p\/p: p test 1/);
  });

  it("reports the issue's typo example (match case, arg for args); --strict makes both errors (exit 2)", async () => {
    await writeFileIn(dir, 'typo.yaml', TYPO);
    const r = await runHookgate(dir, ['policy', 'check', 'typo.yaml']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^warning: .*typo\.yaml: policy "no-env": field "match": \/\^fs\/readfile\$\/ matches no tool in the catalog .*it would match fs\/readFile ignoring case/m);
    assert.match(r.stdout, /^warning: .*typo\.yaml: policy "no-env": field "when": `arg` \(at 11\) is not a field of the policy input \(did you mean `args`\?\): `arg.path` is always undefined$/m);
    assert.match(r.stdout, /^tool catalog: 6 tools from builtin \(tools-builtin\), plus sub-agents/m);
    assert.match(r.stdout, /1 packs, 1 policies: no errors, 2 warnings$/m);

    const strict = await runHookgate(dir, ['policy', 'check', '--strict', 'typo.yaml']);
    assert.equal(strict.code, 2);
    assert.match(strict.stdout, /^error: .*field "match"/m);
    assert.match(strict.stdout, /^error: .*field "when"/m);
    assert.match(strict.stdout, /2 warnings \(errors with --strict\)$/m);
  });

  for (const c of WARNING_CLASSES) {
    it(`warns about ${c.name}, and --strict makes it an error`, async () => {
      await writeFileIn(dir, 'p.yaml', `policies:\n  - ${c.yaml}\n`);
      const r = await runHookgate(dir, ['policy', 'check', '--json', 'p.yaml']);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const out = JSON.parse(r.stdout) as { ok: boolean; errors: unknown[]; warnings: Array<{ policyId: string; field: string; message: string }> };
      assert.equal(out.ok, true);
      assert.deepEqual(out.errors, []);
      assert.equal(out.warnings.length, 1, JSON.stringify(out.warnings));
      assert.equal(out.warnings[0]!.policyId, 'p');
      assert.equal(out.warnings[0]!.field, c.field);
      assert.match(out.warnings[0]!.message, c.message);

      const strict = await runHookgate(dir, ['policy', 'check', '--strict', 'p.yaml']);
      assert.equal(strict.code, 2, strict.stdout);
      assert.match(strict.stdout, new RegExp(`^error: .*p\\.yaml: policy "p": field "${c.field.replace('.', '\\.')}": `, 'm'));
    });
  }

  it('accepts what the schemas have: canonical forms, result fields on result events, sub-agent calls, generic policies', async () => {
    await writeFileIn(
      dir,
      'ok.yaml',
      `policies:
  - { id: a, match: '^fs/(readFile|writeFile)$', when: '$contains(canonical.path.path, ".env") and args.encoding = "base64"', effect: deny }
  - { id: b, match: '^fs/readFile$', events: [afterToolCall], when: '$contains(resultText, "KEY") or result.success = false', effect: deny }
  - { id: c, match: '^agents/', when: '$length(args.instruction) > 1000', effect: ask }
  - { id: d, when: '$contains($string(args.anything), "x") and type = "beforeToolCall"', effect: deny }
  - { id: e, match: '^fs/', when: '($x := args.path; $map([canonical.*[kind = "path"]], function($c) { $c.path }) ~> $contains($x))', effect: deny }
`,
    );
    const r = await runHookgate(dir, ['policy', 'check', '--strict', 'ok.yaml']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /1 packs, 5 policies: no errors, no warnings/);
  });

  it('policy test --coverage reports each policy, matcher and branch the tests exercised, in text and JSON', async () => {
    await writeFileIn(
      dir,
      'cov.yaml',
      `policies:
  - id: secrets
    match: '^fs/'
    when: '($contains(args.path, ".env") or $contains(args.path, ".pem")) and (args.encoding = "hex" ? false : true)'
    effect: deny
    tests:
      - { name: env, event: { identifier: fs, apiName: readFile, args: { path: a/.env } }, expect: { effect: deny } }
      - { name: txt, event: { identifier: fs, apiName: readFile, args: { path: a.txt } }, expect: { effect: allow } }
  - id: never-tested
    match: '^time/'
    effect: deny
`,
    );
    const r = await runHookgate(dir, ['policy', 'test', '--coverage', 'cov.yaml']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^coverage: 14\/20 outcomes \(70%\) in 2 policies$/m);
    assert.match(r.stdout, /^ {2}cov\/secrets: 12\/16 \(75%\), 2 tests on its events$/m);
    assert.match(r.stdout, /^ {4}policy: applies 1, does not apply 1$/m);
    assert.match(r.stdout, /^ {4}match \/\^fs\/\/: hit 2, miss 0 {2}<- not exercised: miss$/m);
    assert.match(r.stdout, /^ {6}or \$contains\(args\.path, "\.env"\): true 1, false 1$/m);
    assert.match(r.stdout, /^ {6}or \$contains\(args\.path, "\.pem"\): true 0, false 1 {2}<- not exercised: true$/m);
    assert.match(r.stdout, /^ {6}\? args\.encoding = "hex": then 0, else 1 {2}<- not exercised: then$/m);
    assert.match(r.stdout, /^ {2}cov\/never-tested: 2\/4 \(50%\), 2 tests on its events$/m);
    assert.match(r.stdout, /^ {4}match \/\^time\/\/: hit 0, miss 2 {2}<- not exercised: hit$/m);

    const json = await runHookgate(dir, ['policy', 'test', '--coverage', '--json', 'cov.yaml']);
    assert.equal(json.code, 0);
    const out = JSON.parse(json.stdout) as { passed: number; coverage: { covered: number; total: number; policies: Array<{ id: string; items: Array<{ kind: string; label: string; counts: Record<string, number> }> }> } };
    assert.equal(out.passed, 2);
    assert.equal(out.coverage.covered, 14);
    assert.equal(out.coverage.total, 20);
    const secrets = out.coverage.policies.find((p) => p.id === 'secrets')!;
    assert.deepEqual(
      secrets.items.map((i) => [i.kind, i.counts]),
      [
        ['policy', { applies: 1, 'does not apply': 1 }],
        ['match', { hit: 2, miss: 0 }],
        ['when', { true: 1, false: 1 }],
        ['operand', { true: 1, false: 1 }],
        ['operand', { true: 1, false: 1 }],
        ['operand', { true: 0, false: 1 }],
        ['operand', { true: 1, false: 0 }],
        ['condition', { then: 0, else: 1 }],
      ],
    );
  });

  it('policy eval --explain says why each policy matched or not, in text and JSON', async () => {
    await writeFileIn(
      dir,
      'p.yaml',
      `policies:
  - { id: env, match: '^fs/', args: { path: '\\.env' }, when: '$contains(args.path, "app") or args.encoding = "hex"', effect: deny, reason: no env }
  - { id: watch, match: '^fs/', mode: shadow, effect: ask }
  - { id: web, match: '^http/', effect: deny }
  - { id: results, events: [afterToolCall], effect: deny }
`,
    );
    await writeFileIn(dir, 'call.json', JSON.stringify({ type: 'beforeToolCall', identifier: 'fs', apiName: 'readFile', args: { path: 'app/.env' } }));
    const r = await runHookgate(dir, ['policy', 'eval', '--explain', '--event', 'call.json', 'p.yaml']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const expected = [
      'explain: fs/readFile on beforeToolCall, 3 policies listening',
      '  env [enforce] (pack p)',
      '    match /^fs//: hit',
      '    args.path /\\.env/: hit',
      '    when $contains(args.path, "app") or args.encoding = "hex" → true',
      '      or operand $contains(args.path, "app"): true',
      '      or operand args.encoding = "hex": not evaluated',
      '    → applies: deny (decides)',
      '  watch [shadow] (pack p)',
      '    match /^fs//: hit',
      '    → applies: ask (shadow: logged, not enforced)',
      '  web [enforce] (pack p)',
      '    match /^http//: miss',
      '    → not a candidate: match /^http// does not accept "fs/readFile"',
      '  not on beforeToolCall: results',
      'combination:',
      '  shadow, not counted: watch=ask',
      '  enforced: env=deny',
      '  deny beats ask beats allow: deny from env',
      '  decision: deny',
    ].join('\n');
    assert.ok(r.stdout.includes(expected), r.stdout);

    const json = await runHookgate(dir, ['policy', 'eval', '--explain', '--json', '--event', 'call.json', 'p.yaml']);
    const out = JSON.parse(json.stdout) as { decision: string; explain: { policies: Array<{ id: string; candidate: boolean; match?: { hit: boolean }; when?: { value: unknown; branches: Array<{ outcomes: boolean[] }> } }>; otherEvents: string[] } };
    assert.equal(out.decision, 'deny');
    assert.deepEqual(
      out.explain.policies.map((p) => [p.id, p.candidate, p.match?.hit]),
      [
        ['env', true, true],
        ['watch', true, true],
        ['web', false, false],
      ],
    );
    assert.equal(out.explain.policies[0]!.when!.value, true);
    assert.deepEqual(out.explain.policies[0]!.when!.branches.map((b) => b.outcomes), [[true], []]);
    assert.deepEqual(out.explain.otherEvents, ['results']);
  });

  it('policy eval takes the documented input (the hook event as `event` or `type`) and refuses one with neither, naming the field', async () => {
    await writeFileIn(dir, 'p.yaml', `policies:\n  - { id: leak, events: [afterToolCall], when: '$contains(result.content, "KEY")', effect: deny, reason: leak }\n`);
    await writeFileIn(dir, 'documented.json', JSON.stringify({ event: 'afterToolCall', identifier: 'fs', apiName: 'readFile', args: { path: 'a' }, result: { content: 'a KEY', success: true } }));
    const r = await runHookgate(dir, ['policy', 'eval', '--event', 'documented.json', 'p.yaml']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^decision: deny\nreason: leak\n {2}leak \[enforce\]: deny \(leak\)/);

    await writeFileIn(dir, 'neither.json', JSON.stringify({ identifier: 'fs', apiName: 'readFile', result: { content: 'a KEY' } }));
    const neither = await runHookgate(dir, ['policy', 'eval', '--event', 'neither.json', 'p.yaml']);
    assert.equal(neither.code, 2);
    assert.match(neither.stdout + neither.stderr, /neither\.json: field "type" is missing: the hook event to decide \(beforeToolCall, afterToolCall, onToolCallError; "event" is accepted as the same field\)/);

    await writeFileIn(dir, 'typo.json', JSON.stringify({ type: 'afterToolCall', identifier: 'fs', apiName: 'readFile', reslt: { content: 'x' } }));
    const typo = await runHookgate(dir, ['policy', 'eval', '--event', 'typo.json', 'p.yaml']);
    assert.equal(typo.code, 2);
    assert.match(typo.stdout + typo.stderr, /typo\.json: field "reslt" is not part of a tool call event/);

    await writeFileIn(dir, 'clash.json', JSON.stringify({ type: 'afterToolCall', event: 'beforeToolCall', identifier: 'fs', apiName: 'readFile' }));
    const clash = await runHookgate(dir, ['policy', 'eval', '--event', 'clash.json', 'p.yaml']);
    assert.equal(clash.code, 2);
    assert.match(clash.stdout + clash.stderr, /field "event" \("beforeToolCall"\) and field "type" \("afterToolCall"\) disagree/);
  });

  it('`policy eval --help` documents the input the code reads', async () => {
    const r = await runHookgate(dir, ['policy', 'eval', '--help']);
    assert.match(r.stdout.replace(/\s+/g, ' '), /\{ type, identifier, apiName, args\?, result\?, userId\?, agentId\?, canonical\? \}; type \(or its other name event\) is beforeToolCall, afterToolCall or onToolCallError/);
    assert.match(r.stdout, /--explain/);
  });
});
