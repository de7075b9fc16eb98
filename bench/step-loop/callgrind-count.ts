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
  /** `k`: the first counted window is k conversations, the second 2k more (so 3k after warm-up in all). */
  conversations: number;
  /** Instructions of conversations 1..k after warm-up. */
  first: number;
  /** Instructions of conversations k+1..3k: the count after 3k minus the count after k (for k = 50, "150 minus 50"). */
  second: number;
  /** `second / 2k`. */
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
  /** Dump files go to `<outPrefix>.<pid>.<n>`. */
  outPrefix: string;
}

/**
 * Instruction counts of one contender child under `valgrind --tool=callgrind`
 * (bench/README.md, "Instruction counts"), node run with `--single-threaded`
 * (Turbofan and the GC on the main thread, so no count depends on thread
 * timing) and without `--expose-gc` (no forced gc() dropping optimized
 * code): set up, warm up, zero the counters, k conversations, dump, 2k more,
 * dump. The second dump is the 3k-conversation count minus the k one of the
 * same process, which leaves start-up, warm-up and the JIT's first tiers out.
 */
export async function countInstructions(request: CountRequest): Promise<InstructionCount> {
  const { name, script, calls, warmup, conversations: k, outPrefix } = request;
  const callsArgs = calls === 20 ? [] : ['--calls', String(calls)];
  const child = new ContenderProcess(
    `${name} (callgrind)`,
    ['--tool=callgrind', `--callgrind-out-file=${outPrefix}.%p`, process.execPath, '--single-threaded', script, '--contender', name, ...callsArgs],
    'valgrind',
  );
  const control = (...args: string[]) => run('callgrind_control', [...args, String(child.pid)]);
  try {
    await child.send({ cmd: 'setup' });
    await child.send({ cmd: 'warmup', n: warmup });
    await control('-z');
    await child.send({ cmd: 'round', n: k });
    await control('-d', 'first');
    await child.send({ cmd: 'round', n: 2 * k });
    await control('-d', 'second');
    await child.send({ cmd: 'finish' });
    await child.end();
  } finally {
    child.kill();
  }
  const dumps = await callgrindDumps(outPrefix, child.pid);
  const count = (trigger: string) => {
    const dump = dumps.find((d) => d.trigger.includes(trigger));
    if (!dump) throw new Error(`${name}: no callgrind dump "${trigger}" for ${outPrefix}.${child.pid}.*`);
    return dump.instructions;
  };
  const first = count('first');
  const second = count('second');
  return { name, calls, warmup, conversations: k, first, second, perConversation: second / (2 * k) };
}

type Dump = { file: string; trigger: string; instructions: number };

/** bench/callgrind-dumps.mjs of this tree (plain JS, shared with bench/callgrind-rounds.mjs). */
async function callgrindDumps(out: string, pid: number): Promise<Dump[]> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const module = (await import(pathToFileURL(path.join(root, 'bench', 'callgrind-dumps.mjs')).href)) as { callgrindDumps(out: string, pid: number): Dump[] };
  return module.callgrindDumps(out, pid);
}
