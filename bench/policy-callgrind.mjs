// Instruction counts per policy decision of one built tree, under valgrind callgrind (bench/README.md, "Issue 9:
// canonical arguments"): the rules and events of policy-bench.ts / policy-ab.mjs, decision log flushed inside every
// batch. Plain JS, run from any tree:
//
//   node bench/policy-callgrind.mjs <tree> <events per batch> <rounds> <out prefix>
//   node bench/policy-callgrind.mjs /tmp/base 5000 4 /tmp/cg/base-policy
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

if (process.argv[2] === '--child') await child(process.argv[3], Number(process.argv[4]));
else await parent();

async function parent() {
  const [tree, size, rounds, out] = process.argv.slice(2);
  if (!out) throw new Error('usage: policy-callgrind.mjs <tree> <events per batch> <rounds> <out prefix>');
  const flags = ['--single-threaded', ...(process.env.NODE_FLAGS ?? '').split(' ').filter(Boolean)];
  const proc = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${path.resolve(out)}.%p`, 'node', ...flags, fileURLToPath(import.meta.url), '--child', path.resolve(tree), size], {
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

async function child(tree, size) {
  const yaml = ['policies:'];
  for (let i = 0; i < RULES; i++) yaml.push(`  - id: rule-${i}`, `    match: '^tool-${i}/run$'`, '    effect: deny', `    args: { path: '^/secret-${i}/' }`);
  const list = [];
  for (let i = 0; i < size; i++) {
    const t = i % RULES;
    list.push({ identifier: `tool-${t}`, apiName: 'run', args: { path: i % 4 === 0 ? `/secret-${t}/key-${i}.txt` : `/work/file-${i}.txt` }, toolCallId: `call-${i}`, operationId: 'bench' });
  }
  const miss = list.map((e) => ({ ...e, identifier: 'unmatched-tool' }));
  const { PolicyEngine } = await import(path.join(tree, 'dist/policies/policy-engine.js'));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'polcg-'));
  await writeFile(path.join(dir, 'b.yaml'), yaml.join('\n') + '\n');
  const engine = new PolicyEngine({ paths: [dir], store: { recordDecision: async () => {}, listDecisions: async () => [] }, deadlineMs: 250, maxWorkers: 1 });
  await engine.start();
  const reply = (o) => process.stdout.write(`POLICY_REPLY ${JSON.stringify(o)}\n`);
  for await (const cmd of createInterface({ input: process.stdin })) {
    if (cmd === 'ready') reply({ ok: true });
    else if (cmd === 'match' || cmd === 'miss') {
      let denied = 0;
      for (const ev of cmd === 'match' ? list : miss) if ((await engine.evaluateToolCall(ev)).effect === 'deny') denied++;
      await engine.flush();
      reply({ ok: true, denied });
    } else if (cmd === 'stop') {
      await engine.stop();
      reply({ ok: true });
      break;
    }
  }
}
