// Instruction counts per decision under load (bench/README.md, "Issue 12: policies under load"): one level of
// bench/policy-load-bench.ts (built: dist/bench/policy-load-bench.js) under valgrind callgrind, counters zeroed after
// the warm-up and dumped after the measured waves; every thread (main and workers) counts, so the figure is the whole
// cost of a decision: main thread, structured clone both ways, the workers' JSONata. Plain JS, run from any tree:
//
//   node bench/policy-load-callgrind.mjs <tree> <workers> <maxBatch> <in flight> <out prefix>
//   node bench/policy-load-callgrind.mjs . 2 32 256 /tmp/cg/load-b32
//
// Valgrind runs one thread at a time, so this measures work, not parallelism: wall clock stays with the bench itself.
// The deadline is lifted to 60 s (a condition's wall clock under valgrind includes the other threads' turns) and a
// level is 2,048 decisions; BENCH_DEADLINE_MS / BENCH_DECISIONS override.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { callgrindDumps } from './callgrind-dumps.mjs';

const [tree, workers, batch, inFlight, out] = process.argv.slice(2);
if (!out) throw new Error('usage: policy-load-callgrind.mjs <tree> <workers> <maxBatch> <in flight> <out prefix>');
const script = path.resolve(tree, 'dist', 'bench', 'policy-load-bench.js');
const proc = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${path.resolve(out)}.%p`, 'node', script, workers, batch, '-', inFlight], {
  stdio: ['pipe', 'pipe', 'inherit'],
  env: { BENCH_DEADLINE_MS: '60000', BENCH_DECISIONS: '2048', ...process.env, BENCH_CALLGRIND: '1' },
});
const control = (...args) => execFileSync('callgrind_control', [...args, String(proc.pid)], { stdio: 'ignore' });
let result;
for await (const line of createInterface({ input: proc.stdout })) {
  if (line === 'CALLGRIND_READY') {
    control('-z');
    proc.stdin.write('go\n');
  } else if (line.startsWith('CALLGRIND_DONE ')) {
    control('-d', `level${inFlight}`);
    result = JSON.parse(line.slice('CALLGRIND_DONE '.length));
    proc.stdin.end('done\n');
  }
}
await new Promise((resolve) => (proc.exitCode === null ? proc.on('exit', resolve) : resolve()));
for (const { file, trigger, instructions } of callgrindDumps(out, proc.pid)) {
  if (trigger.includes(`level${inFlight}`)) {
    console.log(`${file}\tworkers ${workers}\tmaxBatch ${batch}\tin flight ${inFlight}\tdecided ${result.decided}\twrong ${result.wrong}\t${(instructions / result.decided / 1000).toFixed(1)} k instructions per decision`);
  }
}
