import assert from 'node:assert/strict';
import { MAX_LITERAL_ALTERNATIVES, matchShape, type MatchShape } from '../../policies/match-shape.js';

const exact = (...names: string[]): MatchShape => ({ kind: 'exact', names });
const prefix = (verify: boolean, ...prefixes: string[]): MatchShape => ({ kind: 'prefix', prefixes, verify });
const everyTool: MatchShape = { kind: 'everyTool' };
const regex: MatchShape = { kind: 'regex' };

describe('match shapes (what a match pattern says without running it)', () => {
  const cases: Array<[string | undefined, MatchShape]> = [
    [undefined, everyTool],
    ['.*', everyTool],
    ['^', everyTool],
    ['^.*', everyTool],
    ['^(|fs)', everyTool],
    ['^fs/readFile$', exact('fs/readFile')],
    ['^$', exact('')],
    ['^fs/(readFile|writeFile)$', exact('fs/readFile', 'fs/writeFile')],
    ['^(?:a|b)/(x|y)$', exact('a/x', 'a/y', 'b/x', 'b/y')],
    ['^fs/(read|read)$', exact('fs/read')],
    ['^a\\.b/c\\+d\\$$', exact('a.b/c+d$')],
    ['^fs/', prefix(false, 'fs/')],
    ['^fs/.*', prefix(false, 'fs/')],
    ['^(?:fs|http)/', prefix(false, 'fs/', 'http/')],
    ['^fs/\\$', prefix(false, 'fs/$')],
    ['^fs/.*$', prefix(true, 'fs/')],
    ['^fs/read.+$', prefix(true, 'fs/read')],
    ['^fs/ab?c', prefix(true, 'fs/a')],
    ['^fs/a{2}', prefix(true, 'fs/')],
    ['^fs/(ab)+c', prefix(true, 'fs/')],
    ['^fs/a$b', prefix(true, 'fs/a')],
    ['^fs/\\d', prefix(true, 'fs/')],
    ['^fs/x\\|y+', prefix(true, 'fs/x|')],
    ['^é/中$', exact('é/中')],
    ['^a😀?', prefix(true, 'a')],
    // re2 gets a lone surrogate in a pattern as its own bytes, which no key has (a key's is U+FFFD): re2 decides.
    ['^\uD800$', regex],
    ['^a\uDC00', prefix(true, 'a')],
    // Unreadable: anything that is not anchored at the start by a plain ^.
    ['fs/', regex],
    ['(?i)^fs/', regex],
    ['(?i)(shell|bash|exec)', regex],
    ['^^fs/', regex],
    ['^.*$', regex],
    ['^?fs', regex],
    // A `|` outside a literal group may drop the anchor: `^a|b` matches "xb".
    ['^fs/|http/', regex],
    ['^fs/a(b|c)*d', regex],
    ['^(a|)b+', regex],
  ];
  for (const [source, shape] of cases) {
    it(`${source === undefined ? '(no match)' : `/${source}/`} is ${shape.kind}`, () => {
      assert.deepEqual(matchShape(source), shape);
    });
  }

  it(`leaves more than ${MAX_LITERAL_ALTERNATIVES} literal alternatives to re2`, () => {
    const group = '(a|b|c|d|e|f|g|h)';
    assert.deepEqual(matchShape(`^${group}${group}$`), { kind: 'exact', names: [...'abcdefgh'].flatMap((x) => [...'abcdefgh'].map((y) => x + y)) });
    assert.deepEqual(matchShape(`^x${group}${group}y+`), prefix(true, ...[...'abcdefgh'].flatMap((x) => [...'abcdefgh'].map((y) => `x${x}${y}`))));
    // A third group would make 512: it stays in the rest, whose `|` leaves the pattern to re2.
    assert.deepEqual(matchShape(`^x${group}${group}${group}y+`), regex);
  });
});
