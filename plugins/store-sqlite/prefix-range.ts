/**
 * The smallest string greater than every string that starts with `prefix`, in
 * code point order (SQLite compares TEXT as UTF-8 bytes, which is the same
 * order): the last code point that can grow grows by one, everything after it
 * is dropped. So `id >= prefix AND id < upper` is exactly "id starts with
 * prefix", and SQLite answers it from the index on `id`.
 *
 * Surrogate code points (never stored: they have no UTF-8 form) are skipped.
 * Undefined when there is no such bound (an empty prefix, or one made only of
 * U+10FFFF); the caller then scans from `prefix` on and checks the prefix itself.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const points = [...prefix].map((c) => c.codePointAt(0)!);
  while (points.length > 0 && points[points.length - 1] === 0x10ffff) points.pop();
  if (points.length === 0) return undefined;
  const next = points[points.length - 1]! + 1;
  points[points.length - 1] = next === 0xd800 ? 0xe000 : next;
  return String.fromCodePoint(...points);
}
