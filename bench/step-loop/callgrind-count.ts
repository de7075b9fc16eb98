import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ContenderProcess } from './child-protocol.js';

const run = promisify(execFile);

/** What {@link countInstructions} measures for one contender at one conversation length. */
export interface InstructionCount {
  name: string;
  calls: number;
  warmup: number;
  /** Conversations per counted window. */
  conversations: number;
  /** Instructions of each counted window, in order (each window zeroed before and dumped after). */
  windows?: number[];
  /** Before the median of windows (results saved until 2026-12-01): the first window of k conversations... */
  first?: number;
  /** ...and the count of the next 2k ("150 minus 50"); perConversation was second / 2k. */
  second?: number;
  /** The median window / conversations (older results: second / 2k). */
  perConversation: number;
}

export interface CountRequest {
  /** The contender's name (as in --only). */
  name: string;
  /** The step-loop.js whose child runs it. */
  script: string;
  /** Tool calls per conversation; passed to the child as --calls unless it is issue 3's 20 (older trees know no --calls). */
  calls: number;
  warmup: number;
  conversations: number;
  /** Counted windows (the median is the count; at least 1). */
  windows: number;
  /** node's flags under valgrind (`--single-threaded` at least; bench/README.md says which were used). */
  nodeFlags: string[];
  /** Dump files go to `<outPrefix>.<pid>.<n>`. */
  outPrefix: string;
}

/**
 * Instruction counts of one contender child under `valgrind --tool=callgrind`
 * (bench/README.md, "Instruction counts"), node run with `--single-threaded`
 * (Turbofan and the GC on the main thread, so no count depends on thread
 * timing) and without `--expose-gc` (no forced gc() dropping optimized
 * code). Start-up and the warm-up run uninstrumented (`--instr-atstart=no`,
 * several times faster than counting), so the warm-up can be long enough for
 * the late Turbofan compiles of functions that run once per conversation
 * (they came after 100-300 conversations and moved short windows by a third);
 * then instrumentation is switched on and `windows` windows of
 * `conversations` conversations are counted, each zeroed before and dumped
 * after. The count is the median window: a window that happens to hold a
 * major GC or a re-optimization weighs less than in a single window.
 */
export async function countInstructions(request: CountRequest): Promise<InstructionCount> {
  const { name, script, calls, warmup, conversations: k, windows: n, nodeFlags, outPrefix } = request;
  const callsArgs = calls === 20 ? [] : ['--calls', String(calls)];
  const child = new ContenderProcess(
    `${name} (callgrind)`,
    ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${outPrefix}.%p`, process.execPath, ...nodeFlags, script, '--contender', name, ...callsArgs],
    'valgrind',
  );
  const control = (...args: string[]) => run('callgrind_control', [...args, String(child.pid)]);
  try {
    await child.send({ cmd: 'setup' });
    await child.send({ cmd: 'warmup', n: warmup });
    await control('-i', 'on');
    for (let w = 0; w < n; w++) {
      await control('-z');
      await child.send({ cmd: 'round', n: k });
      await control('-d', `window${w}`);
    }
    await child.send({ cmd: 'finish' });
    await child.end();
  } finally {
    child.kill();
  }
  const dumps = await callgrindDumps(outPrefix, child.pid);
  const windows = Array.from({ length: n }, (_, w) => {
    const dump = dumps.find((d) => d.trigger.endsWith(`window${w}`));
    if (!dump) throw new Error(`${name}: no callgrind dump "window${w}" for ${outPrefix}.${child.pid}.*`);
    return dump.instructions;
  });
  return { name, calls, warmup, conversations: k, windows, perConversation: median(windows) / k };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

type Dump = { file: string; trigger: string; instructions: number };

/** bench/callgrind-dumps.mjs of this tree (plain JS, shared with bench/callgrind-rounds.mjs). */
async function callgrindDumps(out: string, pid: number): Promise<Dump[]> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const module = (await import(pathToFileURL(path.join(root, 'bench', 'callgrind-dumps.mjs')).href)) as { callgrindDumps(out: string, pid: number): Dump[] };
  return module.callgrindDumps(out, pid);
}
