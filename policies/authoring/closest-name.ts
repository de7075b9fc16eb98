/** The candidate closest to `name` (case-insensitive, at most 2 edits, or a case-insensitive prefix), for "did you mean" hints. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === name) continue;
    const cl = c.toLowerCase();
    const d = cl === lower ? 0 : editDistance(lower, cl);
    const limit = Math.min(2, Math.floor(Math.max(name.length, c.length) / 3));
    if (d <= limit && d < bestDistance) {
      best = c;
      bestDistance = d;
    } else if (best === undefined && lower.length >= 3 && (cl.startsWith(lower) || lower.startsWith(cl))) best = c;
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Infinity;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}
