// Function-level instruction counts of callgrind dumps, with JIT-compiled JS functions named (bench/README.md,
// "Issue 9: the cost of the gate"). The dumps come from bench/callgrind-rounds.mjs run with
// NODE_FLAGS="--single-threaded --perf-basic-prof": node then writes /tmp/perf-<pid>.map (start, size, name of every
// piece of generated code), and callgrind names code without symbols by its address, which this script looks up.
//
//   node bench/callgrind-js.mjs <conversations per dump> <a dumps...> [-- <b dumps...>] [--top N] [--inclusive]
//
// Prints self (or, with --inclusive, inclusive) instructions per conversation for each function, summed over the
// dumps of each side (mean per dump), JIT tiers folded together (`LazyCompile:*f` and `LazyCompile:~f` are `f`),
// sorted by |b - a|. Needs callgrind_annotate. A dump's map is /tmp/perf-<pid>.map, the pid taken from its name
// (`<prefix>.<pid>.<n>`).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const perConversation = Number(args.shift());
let top = 60;
let inclusive = false;
const sides = [[]];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--') sides.push([]);
  else if (args[i] === '--top') top = Number(args[++i]);
  else if (args[i] === '--inclusive') inclusive = true;
  else sides[sides.length - 1].push(args[i]);
}
if (!perConversation || sides[0].length === 0) throw new Error('usage: callgrind-js.mjs <conversations per dump> <dumps...> [-- <dumps...>] [--top N] [--inclusive]');

const maps = new Map();
function mapOf(pid) {
  let m = maps.get(pid);
  if (m) return m;
  m = [];
  const file = `/tmp/perf-${pid}.map`;
  if (!existsSync(file)) return m;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (match) m.push([parseInt(match[1], 16), parseInt(match[2], 16), match[3]]);
  }
  m.sort((a, b) => a[0] - b[0]);
  maps.set(pid, m);
  return m;
}

function jsName(map, addr) {
  let lo = 0;
  let hi = map.length - 1;
  let found;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (map[mid][0] <= addr) {
      found = map[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (!found || addr >= found[0] + found[1]) return undefined;
  // Fold tiers and the code address: `LazyCompile:*runStep file:///.../agent-runtime.js:123` -> `runStep kernel/runtime/agent-runtime.js` (line and column dropped, so two trees compare).
  return found[2].replace(/^(LazyCompile|Function|JS|Script):[*~^+]?/, '').replace(/file:\/\/\S*\/dist\//, '').replace(/:\d+:\d+\s*$/, '').replace(/\s+$/, '');
}

function costs(dump) {
  const pid = /\.(\d+)\.\d+$/.exec(dump)?.[1];
  const map = pid ? mapOf(pid) : [];
  const out = execFileSync('callgrind_annotate', ['--threshold=100', ...(inclusive ? ['--inclusive=yes'] : []), dump], { maxBuffer: 1 << 28, encoding: 'utf8' });
  const byName = new Map();
  const total = Number(/^\s*([\d,]+)\s+\(100\.0%\)\s+PROGRAM TOTALS/m.exec(out)?.[1].replaceAll(',', ''));
  for (const line of out.split('\n')) {
    const m = /^\s*([\d,]+) \([^)]*\)\s+(\S+?):(.*?)(?: \[(.*)\])?$/.exec(line);
    if (!m) continue;
    const ir = Number(m[1].replaceAll(',', ''));
    // callgrind shows the frames below the event loop (main, the libc start) with the whole count: not a cost.
    if (!inclusive && ir > 0.99 * total) continue;
    let fn = m[3];
    const addr = /^0x([0-9a-f]+)/.exec(fn);
    if (addr && m[4] === '???') fn = jsName(map, parseInt(addr[1], 16)) ?? '[JIT code not in the perf map]';
    else fn = fn.replace(/'\d+$/, '');
    byName.set(fn, (byName.get(fn) ?? 0) + ir);
  }
  return byName;
}

const totals = sides.map((dumps) => {
  const sum = new Map();
  for (const d of dumps) for (const [k, v] of costs(d)) sum.set(k, (sum.get(k) ?? 0) + v);
  for (const [k, v] of sum) sum.set(k, v / dumps.length / perConversation);
  return sum;
});
const names = new Set(totals.flatMap((t) => [...t.keys()]));
const rows = [...names].map((n) => [n, ...totals.map((t) => t.get(n) ?? 0)]);
const delta = (r) => (r.length > 2 ? r[2] - r[1] : r[1]);
rows.sort((x, y) => Math.abs(delta(y)) - Math.abs(delta(x)));
const k = (v) => (v / 1000).toFixed(1).padStart(9);
console.log(`${inclusive ? 'inclusive' : 'self'} k instructions per conversation${sides.length > 1 ? ' (a, b, b - a)' : ''}`);
for (const r of rows.slice(0, top)) console.log(`${k(r[1])}${r.length > 2 ? `${k(r[2])}${k(r[2] - r[1])}` : ''}  ${r[0].slice(0, 150)}`);
