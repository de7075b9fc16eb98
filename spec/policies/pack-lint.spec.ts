import assert from 'node:assert/strict';
import { lintPacks } from '../../policies/authoring/pack-lint.js';
import type { ToolCatalog } from '../../policies/authoring/tool-catalog.js';
import { loadPacks } from '../../policies/load-packs.js';
import { tempDir, writeFileIn } from './support/policy-fixtures.js';

/** A plugin tool with a number, a boolean and a nested object argument: what the builtin tools do not have. */
const CATALOG: ToolCatalog = {
  tools: [
    {
      key: 'calc/add',
      identifier: 'calc',
      apiName: 'add',
      toolSource: 'calc',
      parameters: { type: 'object', properties: { n: { type: 'integer' }, exact: { type: 'boolean' }, opts: { type: 'object', properties: { mode: { type: 'string' } } } }, required: ['n'] },
      describesCanonical: false,
    },
  ],
  subagents: { identifier: 'agents', parameters: { type: 'object' } },
  sources: ['calc'],
  problems: [],
};

async function warningsFor(policy: string): Promise<string[]> {
  const { dir, cleanup } = await tempDir();
  try {
    await writeFileIn(dir, 'p.yaml', `policies:\n  - ${policy}\n`);
    const { packs, errors } = await loadPacks([dir]);
    assert.deepEqual(errors, []);
    return lintPacks(packs, CATALOG).map((w) => `${w.field}: ${w.message}`);
  } finally {
    await cleanup();
  }
}

describe('policy check warnings against a plugin tool schema', () => {
  it('a string function on a number argument fails closed', async () => {
    const [w, ...rest] = await warningsFor(`{ id: p, match: '^calc/add$', when: '$contains(args.n, "x")', effect: deny }`);
    assert.deepEqual(rest, []);
    assert.equal(w, 'when: `$contains(args.n, "x")` gives $contains `args.n` is a number (in the input schema of calc/add), but $contains takes a string: JSONata raises a type error, so the policy fails closed (denies) whenever it is evaluated');
  });

  it('comparing a number argument to a string, or a boolean to a number, is never true; an order comparison across types fails closed', async () => {
    const ws = await warningsFor(`{ id: p, match: '^calc/', when: 'args.n = "5" or args.exact = 1 or args.n > "3"', effect: deny }`);
    assert.equal(ws.length, 3, ws.join('\n'));
    assert.match(ws[0]!, /`args.n = "5"` is never true: `args.n` is a number \(in the input schema of calc\/add\), `"5"` is a string/);
    assert.match(ws[1]!, /`args.exact = 1` is never true: `args.exact` is a boolean/);
    assert.match(ws[2]!, /`args.n > "3"` compares a number \(`args.n`\) with a string \(`"3"`\): JSONata raises a type error/);
  });

  it('nested paths and args keys are looked up in nested schemas; an object is never matched by a regex', async () => {
    const ws = await warningsFor(`{ id: p, match: '^calc/add$', args: { opts: 'x', 'opts.mod': 'y' }, when: 'args.opts.mode = "a" or args.opts.mdoe = "b"', effect: deny }`);
    assert.deepEqual(ws, [
      'args.opts: `opts` is an object in the input schema of calc/add: a regex matcher only tests strings, numbers and booleans (or lists of them), so it never matches',
      'args.opts.mod: `opts.mod` is not an argument of calc/add (arguments: mode); did you mean `mode`?: this matcher never matches, so the policy never applies',
      'when: `mdoe` (at 35) is not a property of `args.opts` of calc/add (properties: mode); did you mean `mode`?: `args.opts.mdoe` is always undefined',
    ]);
  });

  it('a policy without match is checked only for what every input has (its tools are not known)', async () => {
    assert.deepEqual(await warningsFor(`{ id: p, when: 'args.whatever = 1 and $contains(args.n, "x")', effect: deny }`), []);
    assert.deepEqual(await warningsFor(`{ id: p, when: 'tool = 5', effect: deny }`), ['when: `tool = 5` is never true: `tool` is a string, `5` is a number']);
  });

  it('an unknown function is named, with the closest JSONata function', async () => {
    assert.deepEqual(await warningsFor(`{ id: p, match: '^calc/add$', when: '$lenght(args.opts.mode) > 3', effect: deny }`), [
      'when: `$lenght` (at 1) is not a JSONata function (did you mean `$length`?): calling it is an error, so the policy fails closed (denies) whenever it is evaluated',
    ]);
  });

  it('a catalog that could not be read is itself a warning', async () => {
    const { packs } = await loadPacks([]);
    const ws = lintPacks(packs, { ...CATALOG, problems: ['plugin "x" did not register: boom'] });
    assert.deepEqual(ws.map((w) => w.message), ['plugin "x" did not register: boom; checks against tool schemas may miss tools']);
  });
});
