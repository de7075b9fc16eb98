import { MODEL_AND_TOOL_STEPS, MODEL_STEPS, TOOL_CALLS, type Contender } from './contender.js';

export interface MeasureOptions {
  /** Untimed conversations before the first round (JIT warm-up). */
  warmup: number;
  rounds: number;
  /** Conversations per timed round, run one after another. */
  conversations: number;
}

export interface RoundResult {
  conversations: number;
  ms: number;
}

/** What a contender's child process reports to the parent (one JSON line). */
export interface ContenderResult {
  name: string;
  description: string;
  rounds: RoundResult[];
  /** Peak resident set size of the child process (bytes, from `process.resourceUsage().maxRSS`). */
  peakRss: number;
  /** Highest `heapUsed` seen, sampled after every conversation (bytes). */
  peakHeapUsed: number;
  facts: Record<string, number | string>;
}

/**
 * Runs the warm-up, then the timed rounds, one conversation at a time.
 * Checks every conversation's step counts; rejects on the first mismatch.
 * Calls `gc()` between rounds when the process runs with `--expose-gc`
 * (outside the timed section).
 */
export async function measure(contender: Contender, options: MeasureOptions): Promise<ContenderResult> {
  let peakHeapUsed = 0;
  const sample = () => {
    const used = process.memoryUsage().heapUsed;
    if (used > peakHeapUsed) peakHeapUsed = used;
  };
  const gc = (globalThis as { gc?: () => void }).gc;
  let index = 0;
  const one = async () => {
    const count = await contender.runConversation(index++);
    if (count.modelSteps !== MODEL_STEPS || count.toolSteps !== TOOL_CALLS) {
      throw new Error(`${contender.name}: a conversation made ${count.modelSteps} model calls and ${count.toolSteps} tool runs, expected ${MODEL_STEPS} and ${TOOL_CALLS}`);
    }
    sample();
  };

  await contender.setup();
  try {
    sample();
    for (let i = 0; i < options.warmup; i++) await one();
    const rounds: RoundResult[] = [];
    for (let r = 0; r < options.rounds; r++) {
      gc?.();
      const start = process.hrtime.bigint();
      for (let i = 0; i < options.conversations; i++) await one();
      rounds.push({ conversations: options.conversations, ms: Number(process.hrtime.bigint() - start) / 1e6 });
    }
    return {
      name: contender.name,
      description: contender.description,
      rounds,
      peakRss: process.resourceUsage().maxRSS * 1024,
      peakHeapUsed,
      facts: contender.facts(),
    };
  } finally {
    await contender.teardown();
  }
}

/** Steps per second of a round, counting `stepsPerConversation` steps per conversation. */
export function stepsPerSecond(round: RoundResult, stepsPerConversation: number): number {
  return (round.conversations * stepsPerConversation * 1000) / round.ms;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export { MODEL_AND_TOOL_STEPS, MODEL_STEPS };
