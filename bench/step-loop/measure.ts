import { getHeapStatistics } from 'node:v8';
import { modelSteps, type Contender } from './contender.js';

export interface MeasureOptions {
  /** Tool calls per conversation. */
  calls: number;
  /** Untimed conversations before the first round (JIT warm-up). */
  warmup: number;
  rounds: number;
  /** Conversations per timed round, run one after another. */
  conversations: number;
  /** Untimed conversations at the start of every round, right before its timed ones (see {@link ContenderSession.round}). */
  rewarm: number;
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
   * `--expose-gc`, then runs `rewarm` untimed conversations, then the timed
   * ones, all without returning to the parent in between: a child waits idle
   * while the other contenders run their rounds, and coming back from idle
   * (cold caches, a heap V8 shrank while idle, code the forced gc() dropped)
   * costs some contenders more than others. Resolves with the timed part.
   */
  async round(conversations: number, rewarm = 0): Promise<RoundResult> {
    (globalThis as { gc?: () => void }).gc?.();
    for (let i = 0; i < rewarm; i++) await this.one();
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
    const calls = this.contender.calls;
    if (count.modelSteps !== modelSteps(calls) || count.toolSteps !== calls) {
      throw new Error(`${this.contender.name}: a conversation made ${count.modelSteps} model calls and ${count.toolSteps} tool runs, expected ${modelSteps(calls)} and ${calls}`);
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
