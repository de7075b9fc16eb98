import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// re2 is a CommonJS native addon; loaded once per process.
const RE2 = require('re2') as new (pattern: string, flags?: string) => { test(s: string): boolean };

/** A compiled tool matcher: tests `${identifier}/${apiName}`. */
export interface ToolMatcher {
  readonly source: string | undefined;
  readonly matchesAll: boolean;
  test(identifier: string | undefined, apiName: string | undefined): boolean;
  /** Tests one subject string (a vocabulary's `matchOn`); `undefined` matches only a match-all matcher. */
  testSubject(subject: string | undefined): boolean;
}

const MATCH_ALL: ToolMatcher = Object.freeze({ source: undefined, matchesAll: true, test: () => true, testSubject: () => true });

/**
 * Compiles a matcher once with re2 (linear time, no catastrophic backtracking).
 * Omitted, empty or `*` matches every tool. Throws a plain Error with a message
 * that says what is wrong; callers wrap it with where the matcher came from.
 */
export function compileToolMatcher(pattern: string | undefined): ToolMatcher {
  if (pattern === undefined || pattern === '' || pattern === '*') return MATCH_ALL;
  let re: { test(s: string): boolean };
  try {
    re = new RE2(pattern, 'u');
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    if (/invalid perl operator: \(\?<?[=!]|invalid escape sequence: \\(?:[1-9]|k)|backreference|lookahead|lookbehind/i.test(detail)) {
      throw new Error(`matcher ${JSON.stringify(pattern)} uses lookaround or a backreference, which re2 cannot run (re2 guarantees linear-time matching)`);
    }
    throw new Error(`matcher ${JSON.stringify(pattern)} is not a valid regular expression: ${detail}`);
  }
  return Object.freeze({
    source: pattern,
    matchesAll: false,
    test: (identifier: string | undefined, apiName: string | undefined) =>
      identifier === undefined || apiName === undefined ? false : re.test(`${identifier}/${apiName}`),
    testSubject: (subject: string | undefined) => (subject === undefined ? false : re.test(subject)),
  });
}
