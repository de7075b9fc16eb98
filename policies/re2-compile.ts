import RE2 from 're2';

/**
 * Compiles a pattern with re2 (linear time, no backtracking). Throws an Error
 * whose message says plainly when the pattern needs a backtracking feature
 * re2 refuses (backreferences, lookaround), so `policy check` can report it.
 */
export function compileRe2(pattern: string, flags = ''): RE2 {
  try {
    return new RE2(pattern, flags);
  } catch (err) {
    throw new Error(describeRe2Error(pattern, err));
  }
}

export function describeRe2Error(pattern: string, err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  const unsupported = /invalid perl operator|invalid escape sequence: \\[1-9]|backreference|lookahead|lookbehind/i.test(raw);
  const hint = unsupported
    ? 're2 does not support backreferences or lookaround ((?=, (?!, (?<=, (?<!, \\1): they need backtracking, which is unsafe on untrusted input'
    : 'not a valid re2 pattern';
  return `regex /${pattern}/ rejected: ${hint} (${raw})`;
}
