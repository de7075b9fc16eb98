// Instruction counts per round of one step-loop contender, under valgrind callgrind (bench/README.md,
// "Issue 9: the cost of the gate"). Plain JS (not compiled), run from a built tree:
//
//   node bench/callgrind-rounds.mjs <tree> <contender> <warmup> <conversations per round> <rounds> <out prefix>
//   node bench/callgrind-rounds.mjs . hookgate-memory 100 100 4 /tmp/cg/head-memory
//
// The child (`node --expose-gc dist/bench/step-loop.js --contender <name>`) is set up and warmed up, then for every
// round: an empty round (a full gc() with --expose-gc), `callgrind_control -z` (zero the counters), the round, `callgrind_control -d`
// (dump). One dump file per round (`<out prefix>.<pid>.<n>`), so start-up, warm-up and the other rounds are not in it.
// Split a dump into main thread / its GC / background threads with
//   callgrind_annotate --inclusive=yes <dump> | grep -E 'PROGRAM TOTALS|\?\?\?:main |Heap::CollectGarbage\(|CompileNext\('
//
// NODE_FLAGS (space-separated) replaces the child's node flags (default `--expose-gc`). Recommended:
//   NODE_FLAGS="--single-threaded --perf-basic-prof"
// --single-threaded: V8 runs Turbofan and the GC on the main thread, so no work depends on thread timing; without
// --expose-gc the rounds force no gc(), whose full collection throws away optimized code (the next round then
// recompiles the whole step loop: 20-40 Turbofan jobs per round instead of 3-6); --perf-basic-prof writes
// /tmp/perf-<pid>.map, which bench/callgrind-js.mjs uses to name the JIT-compiled JS functions of a dump.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { callgrindDumps } from './callgrind-dumps.mjs';

const [tree, contender, warmup, size, rounds, out] = process.argv.slice(2);
if (!out) throw new Error('usage: callgrind-rounds.mjs <tree> <contender> <warmup> <conversations per round> <rounds> <out prefix>');
const nodeFlags = (process.env.NODE_FLAGS ?? '--expose-gc').split(' ').filter(Boolean);
// CG_LATE=1: valgrind runs start-up and warm-up uninstrumented (--instr-atstart=no, several times faster), and
// instrumentation is switched on after the warm-up, so a long warm-up (late Turbofan compiles) costs little.
const late = process.env.CG_LATE === '1';
const proc = spawn('valgrind', ['--tool=callgrind', ...(late ? ['--instr-atstart=no'] : []), `--callgrind-out-file=${path.resolve(out)}.%p`, 'node', ...nodeFlags, 'dist/bench/step-loop.js', '--contender', contender], {
  cwd: tree,
  stdio: ['pipe', 'pipe', 'inherit'],
});
const waiters = [];
createInterface({ input: proc.stdout }).on('line', (l) => {
  if (l.startsWith('STEP_LOOP_REPLY ')) waiters.shift()(JSON.parse(l.slice('STEP_LOOP_REPLY '.length)));
});
const send = async (command) => {
  const reply = await new Promise((resolve) => {
    waiters.push(resolve);
    proc.stdin.write(`${JSON.stringify(command)}\n`);
  });
  if (!reply.ok) throw new Error(reply.error);
  return reply;
};
const control = (flag, ...rest) => execFileSync('callgrind_control', [flag, ...rest, String(proc.pid)], { stdio: 'ignore' });

await send({ cmd: 'setup' });
await send({ cmd: 'warmup', n: Number(warmup) });
if (late) control('-i', 'on');
for (let i = 0; i < Number(rounds); i++) {
  await send({ cmd: 'round', n: 0 });
  control('-z');
  const { round } = await send({ cmd: 'round', n: Number(size) });
  control('-d', `round${i}`);
  process.stderr.write(`round ${i}: ${JSON.stringify(round)}\n`);
}
await send({ cmd: 'finish' });
proc.stdin.end();
await new Promise((resolve) => proc.on('exit', resolve));
for (const { file: f, trigger, instructions: ir } of callgrindDumps(out, proc.pid)) {
  if (trigger.includes('round')) console.log(`${f}\t${trigger}\t${ir}\t${(ir / Number(size) / 1e6).toFixed(2)} M instructions per conversation`);
}
