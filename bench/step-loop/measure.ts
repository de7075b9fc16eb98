import { getHeapStatistics } from 'node:v8';
import { MODEL_STEPS, TOOL_CALLS, type Contender } from './contender.js';

export interface MeasureOptions {
  /** Untimed conversations before the first round (JIT warm-up). */
  warmup: number;
  rounds: number;
  /** Conversations per timed round, run one after another. */
  conversations: number;
}

export interface RoundResult {
  conversations: number;
  /** Wall-clock time of the round. */
  ms: number;
  /** CPU time (user + system, all threads of the process) of the round. */
  cpuMs: number;
}

/** What a contender's child process reports at the end. */
export interface ContenderResult {
  name: string;
  description: string;
  rounds: RoundResult[];
  /** Peak resident set size of the child process (bytes, from `process.resourceUsage().maxRSS`). */
  peakRss: number;
  /** Highest V8 used heap size seen, sampled after every conversation (bytes). */
  peakHeapUsed: number;
  facts: Record<string, number | string>;
}

/**
 * One contender inside its child process: set up once, then untimed warm-up
 * and timed rounds on request, one conversation at a time. Every
 * conversation's step counts are checked; a mismatch rejects.
 */
export class ContenderSession {
  private index = 0;
  private peakHeapUsed = 0;
  private readonly rounds: RoundResult[] = [];

  constructor(private readonly contender: Contender) {}

  async setup(): Promise<void> {
    await this.contender.setup();
    this.sample();
  }

  /** Untimed conversations. */
  async warmup(conversations: number): Promise<void> {
    for (let i = 0; i < conversations; i++) await this.one();
  }

  /**
   * One timed round. Calls `gc()` first when the process runs with
   * `--expose-gc` (outside the timed section). Resolves with the round's time.
   */
  async round(conversations: number): Promise<RoundResult> {
    (globalThis as { gc?: () => void }).gc?.();
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 0; i < conversations; i++) await this.one();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const used = process.cpuUsage(cpu);
    const result = { conversations, ms, cpuMs: (used.user + used.system) / 1000 };
    this.rounds.push(result);
    return result;
  }

  /** The result so far; then releases the contender. */
  async finish(): Promise<ContenderResult> {
    const facts = this.contender.facts();
    await this.contender.teardown();
    return {
      name: this.contender.name,
      description: this.contender.description,
      rounds: this.rounds,
      peakRss: process.resourceUsage().maxRSS * 1024,
      peakHeapUsed: this.peakHeapUsed,
      facts,
    };
  }

  private async one(): Promise<void> {
    const count = await this.contender.runConversation(this.index++);
    if (count.modelSteps !== MODEL_STEPS || count.toolSteps !== TOOL_CALLS) {
      throw new Error(`${this.contender.name}: a conversation made ${count.modelSteps} model calls and ${count.toolSteps} tool runs, expected ${MODEL_STEPS} and ${TOOL_CALLS}`);
    }
    this.sample();
  }

  private sample(): void {
    const used = getHeapStatistics().used_heap_size;
    if (used > this.peakHeapUsed) this.peakHeapUsed = used;
  }
}

/** Steps per second of a round (wall clock, or CPU time with `clock: 'cpu'`), counting `stepsPerConversation` steps per conversation. */
export function stepsPerSecond(round: RoundResult, stepsPerConversation: number, clock: 'wall' | 'cpu' = 'wall'): number {
  return (round.conversations * stepsPerConversation * 1000) / (clock === 'cpu' ? round.cpuMs : round.ms);
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
