// Self time by function of a V8 CPU profile (`node --cpu-prof`), as shares of the profile's samples, for finding a
// contender's hot spots (bench/README.md, "Issue 12"). Plain JS, no build needed:
//
//   node bench/cpu-profile-top.mjs <file.cpuprofile> [--top 30] [--inclusive]
//
// Functions are keyed by name and file (dist/ paths shortened, line kept), so the JIT tiers of one function add up.
// With --inclusive, a function's share also counts the samples of everything it called (each sample once per function,
// however deep the recursion).
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
const top = Number(args[args.indexOf('--top') + 1]) || 30;
const inclusive = args.includes('--inclusive');
if (!file) throw new Error('usage: cpu-profile-top.mjs <file.cpuprofile> [--top N] [--inclusive]');

const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const keyOf = (n) => {
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^file:\/\/\S*?\/dist\//, '').replace(/^file:\/\/\S*\/node_modules\//, 'node_modules/')}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};
const counts = new Map();
let total = 0;
for (const id of profile.samples) {
  total++;
  if (!inclusive) {
    const k = keyOf(nodes.get(id));
    counts.set(k, (counts.get(k) ?? 0) + 1);
    continue;
  }
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const k = keyOf(nodes.get(at));
    if (seen.has(k)) continue;
    seen.add(k);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
}
const ms = (profile.endTime - profile.startTime) / 1000;
console.log(`${total} samples over ${ms.toFixed(0)} ms; ${inclusive ? 'inclusive' : 'self'} share by function`);
for (const [k, c] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * c) / total).toFixed(1).padStart(5)}%  ${k}`);
