// Policy decisions of several built trees in one process, alternating (bench/README.md, "Issue 9: canonical
// arguments"): the rules and events of policy-bench.ts, decision log flushed inside every batch, 10 rounds.
//
//   node bench/policy-ab.mjs <base tree> <tree>...      e.g. node bench/policy-ab.mjs /tmp/base .
//
// Prints µs per decision (wall and CPU, median over rounds) with a candidate (re2 `match` + `args`) and without one,
// and each tree / the first as the median of per-round ratios.
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os'; import path from 'node:path';
const trees = process.argv.slice(2).map((t) => path.resolve(t));
const RULES = 100, EVENTS = 20000;
const yaml = ['policies:']; for (let i = 0; i < RULES; i++) yaml.push(`  - id: rule-${i}`, `    match: '^tool-${i}/run$'`, '    effect: deny', `    args: { path: '^/secret-${i}/' }`);
const list = []; for (let i = 0; i < EVENTS; i++) { const t = i % RULES; list.push({ identifier: `tool-${t}`, apiName: 'run', args: { path: i % 4 === 0 ? `/secret-${t}/key-${i}.txt` : `/work/file-${i}.txt` }, toolCallId: `call-${i}`, operationId: 'bench' }); }
const miss = list.map((e) => ({ ...e, identifier: 'unmatched-tool' }));
const engines = [];
for (const t of trees) {
  const { PolicyEngine } = await import(path.join(t, 'dist/policies/policy-engine.js'));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'polab-')); await writeFile(path.join(dir, 'b.yaml'), yaml.join('\n') + '\n');
  const e = new PolicyEngine({ paths: [dir], store: { recordDecision: async () => {}, listDecisions: async () => [] }, deadlineMs: 250, maxWorkers: 2 });
  await e.start(); engines.push(e);
}
const res = trees.map(() => ({ match: [], miss: [] }));
async function batch(e, l) { const c = process.cpuUsage(); const t = performance.now(); for (const ev of l) await e.evaluateToolCall(ev); await e.flush(); const u = process.cpuUsage(c); return { wall: (performance.now() - t) * 1000 / l.length, cpu: (u.user + u.system) / l.length }; }
for (const e of engines) { await batch(e, list); await batch(e, miss); }
for (let r = 0; r < 10; r++) for (let k = 0; k < engines.length; k++) { const i = (k + r) % engines.length; res[i].match.push(await batch(engines[i], list)); res[i].miss.push(await batch(engines[i], miss)); }
const med = (a) => { const s = [...a].sort((x, y) => x - y); return (s[4] + s[5]) / 2; };
for (let i = 0; i < trees.length; i++) console.log(trees[i].padEnd(16), 'match µs/decision wall', med(res[i].match.map((x) => x.wall)).toFixed(2), 'cpu', med(res[i].match.map((x) => x.cpu)).toFixed(2), '| no-candidate wall', med(res[i].miss.map((x) => x.wall)).toFixed(2), 'cpu', med(res[i].miss.map((x) => x.cpu)).toFixed(2));
for (let i = 1; i < trees.length; i++) for (const k of ['match', 'miss']) console.log(`${trees[i]}/${trees[0]} ${k}: per-round wall ratio median ${med(res[i][k].map((x, j) => x.wall / res[0][k][j].wall)).toFixed(3)}, cpu ${med(res[i][k].map((x, j) => x.cpu / res[0][k][j].cpu)).toFixed(3)}`);
for (const e of engines) await e.stop();
