// Instruction counts per policy decision of one built tree, under valgrind callgrind (bench/README.md, "Issue 9:
// canonical arguments"): the rules and events of policy-bench.ts / policy-ab.mjs, decision log flushed inside every
// batch. Plain JS, run from any tree:
//
//   node bench/policy-callgrind.mjs <tree> <events per batch> <rounds> <out prefix> [case]
//   node bench/policy-callgrind.mjs /tmp/base 5000 4 /tmp/cg/base-policy
//
// case (bench/README.md, "Issue 12: policies with no cliff"; rules and events from bench/policy-cases.ts, built in
// this checkout's dist/, the engine from <tree>): base (default, the 100 rules above), names (100 rules, every batch
// a new stretch of the 111,111 events over 100,081 distinct tool names), rules (10,000 exact rules, events over
// 1,000 of their tools), sweep (10,000 rules, 9,000 exact and 1,000 prefixes, batches over 100,000 distinct names).
// Every batch's decisions are checked against the rules (a mismatch stops the child).
//
// The child (node --single-threaded, so nothing depends on thread timing; the engine decides these rules on the main
// thread, no worker) warms up, then every round runs one batch with a candidate (`match` + `args` re2) and one without
// (an unmatched tool), each between `callgrind_control -z` and `-d`. Prints instructions per decision for each dump;
// NODE_FLAGS adds node flags (e.g. --perf-basic-prof for bench/callgrind-js.mjs).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { callgrindDumps } from './callgrind-dumps.mjs';
import { fileURLToPath } from 'node:url';

const RULES = 100;

if (process.argv[2] === '--child') await child(process.argv[3], Number(process.argv[4]), process.argv[5]);
else await parent();

async function parent() {
  const [tree, size, rounds, out, benchCase = 'base'] = process.argv.slice(2);
  if (!out) throw new Error('usage: policy-callgrind.mjs <tree> <events per batch> <rounds> <out prefix> [base|names|rules|sweep]');
  const flags = ['--single-threaded', ...(process.env.NODE_FLAGS ?? '').split(' ').filter(Boolean)];
  const proc = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${path.resolve(out)}.%p`, 'node', ...flags, fileURLToPath(import.meta.url), '--child', path.resolve(tree), size, benchCase], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiters = [];
  createInterface({ input: proc.stdout }).on('line', (l) => {
    if (l.startsWith('POLICY_REPLY ')) waiters.shift()(JSON.parse(l.slice('POLICY_REPLY '.length)));
  });
  const send = (cmd) =>
    new Promise((resolve) => {
      waiters.push(resolve);
      proc.stdin.write(`${cmd}\n`);
    });
  const control = (flag, ...rest) => execFileSync('callgrind_control', [flag, ...rest, String(proc.pid)], { stdio: 'ignore' });
  await send('ready');
  for (let i = 0; i < 2; i++) {
    await send('match');
    await send('miss');
  }
  for (let i = 0; i < Number(rounds); i++) {
    for (const kind of ['match', 'miss']) {
      control('-z');
      await send(kind);
      control('-d', `${kind}${i}`);
    }
  }
  await send('stop');
  proc.stdin.end();
  await new Promise((resolve) => proc.on('exit', resolve));
  for (const { file: f, trigger, instructions: ir } of callgrindDumps(out, proc.pid)) {
    if (/match|miss/.test(trigger)) console.log(`${f}\t${trigger}\t${ir}\t${(ir / Number(size) / 1000).toFixed(2)} k instructions per decision`);
  }
}

/** The rules (as pack lines) and a function giving batch k's events and their expected decisions. */
async function scaleCase(name, size) {
  const cases = await import(path.join(path.dirname(fileURLToPath(import.meta.url)), '../dist/bench/policy-cases.js'));
  const c =
    name === 'names' ? cases.mixedCase('names', 90, 10, 111_111, 111_111)
    : name === 'rules' ? cases.mixedCase('rules', 10_000, 0, 1000, 1000, [75, 0, 25])
    : name === 'sweep' ? cases.mixedCase('sweep', 9000, 1000, 111_111, 111_111)
    : undefined;
  if (c === undefined) throw new Error(`unknown case ${name} (base, names, rules or sweep)`);
  const expected = cases.expectedDecisions(c.rules, c.events);
  const batch = (k) => {
    const events = [];
    const decisions = [];
    for (let i = 0; i < size; i++) {
      const at = (k * size + i) % c.events.length;
      events.push(c.events[at]);
      decisions.push(expected[at]);
    }
    return { events, decisions };
  };
  return { yaml: cases.hookgatePack(c.rules).trimEnd().split('\n'), batch };
}

async function child(tree, size, benchCase = 'base') {
  let yaml = ['policies:'];
  for (let i = 0; i < RULES; i++) yaml.push(`  - id: rule-${i}`, `    match: '^tool-${i}/run$'`, '    effect: deny', `    args: { path: '^/secret-${i}/' }`);
  const list = [];
  for (let i = 0; i < size; i++) {
    const t = i % RULES;
    list.push({ identifier: `tool-${t}`, apiName: 'run', args: { path: i % 4 === 0 ? `/secret-${t}/key-${i}.txt` : `/work/file-${i}.txt` }, toolCallId: `call-${i}`, operationId: 'bench' });
  }
  let miss = list.map((e) => ({ ...e, identifier: 'unmatched-tool' }));
  // A scale case: each 'match' command decides the next batch of its events (so batches of new names stay new).
  let next;
  if (benchCase !== 'base') {
    const scale = await scaleCase(benchCase, size);
    yaml = scale.yaml;
    let k = 0;
    next = () => {
      const b = scale.batch(k++);
      miss = b.events.map((e) => ({ ...e, identifier: 'unmatched-tool' }));
      return b;
    };
  }
  const { PolicyEngine } = await import(path.join(tree, 'dist/policies/policy-engine.js'));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'polcg-'));
  await writeFile(path.join(dir, 'b.yaml'), yaml.join('\n') + '\n');
  const engine = new PolicyEngine({ paths: [dir], store: { recordDecision: async () => {}, listDecisions: async () => [] }, deadlineMs: 250, maxWorkers: 1 });
  await engine.start();
  const reply = (o) => process.stdout.write(`POLICY_REPLY ${JSON.stringify(o)}\n`);
  for await (const cmd of createInterface({ input: process.stdin })) {
    if (cmd === 'ready') reply({ ok: true });
    else if (cmd === 'match' || cmd === 'miss') {
      const b = cmd === 'match' && next ? next() : undefined;
      const events = b ? b.events : cmd === 'match' ? list : miss;
      let denied = 0;
      for (let i = 0; i < events.length; i++) {
        const effect = (await engine.evaluateToolCall(events[i])).effect;
        if (effect === 'deny') denied++;
        if (b && effect !== b.decisions[i]) throw new Error(`decided ${effect} but the rules say ${b.decisions[i]}: ${JSON.stringify(events[i])}`);
      }
      await engine.flush();
      reply({ ok: true, denied });
    } else if (cmd === 'stop') {
      await engine.stop();
      reply({ ok: true });
      break;
    }
  }
}
