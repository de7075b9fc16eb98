import { MODEL_AND_TOOL_STEPS, MODEL_STEPS } from './contender.js';
import { median, stepsPerSecond, type ContenderResult, type MeasureOptions } from './measure.js';

export interface Report {
  node: string;
  cpus: number;
  cpuModel: string;
  platform: string;
  /** 1, 5 and 15 minute load averages when the run ended (other processes share the CPUs). */
  loadAverage: number[];
  options: MeasureOptions;
  results: ContenderResult[];
}

/** The targets of issue 3, as ratios of median steps/s against the AI SDK. */
export const TARGETS: Record<string, number> = { 'hookgate-memory': 2, 'hookgate-sqlite': 1 };

const MB = 1024 * 1024;

/** Prints the side-by-side table and the ratios against `ai-sdk` to stdout. */
export function printReport(report: Report): void {
  const rows = report.results.map((r) => {
    const full = r.rounds.map((round) => stepsPerSecond(round, MODEL_AND_TOOL_STEPS));
    return {
      name: r.name,
      modelSps: median(r.rounds.map((round) => stepsPerSecond(round, MODEL_STEPS))),
      fullSps: median(full),
      range: `${fmt(Math.min(...full))}-${fmt(Math.max(...full))}`,
      cpuSps: median(r.rounds.map((round) => stepsPerSecond(round, MODEL_AND_TOOL_STEPS, 'cpu'))),
      rss: r.peakRss / MB,
      heap: r.peakHeapUsed / MB,
      facts: Object.entries(r.facts).map(([k, v]) => `${k}=${v}`).join(' '),
    };
  });
  const header = ['contender', 'model steps/s', 'model+tool steps/s', 'min-max (model+tool)', 'model+tool steps/CPU-s', 'peak RSS MB', 'peak heap MB', 'notes'];
  const table = [header, ...rows.map((r) => [r.name, fmt(r.modelSps), fmt(r.fullSps), r.range, fmt(r.cpuSps), r.rss.toFixed(1), r.heap.toFixed(1), r.facts])];
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;

  const { options } = report;
  console.log(`step loop: ${MODEL_STEPS - 1} tool calls per conversation (${MODEL_STEPS} model steps + ${MODEL_STEPS - 1} tool steps = ${MODEL_AND_TOOL_STEPS})`);
  console.log(`node ${report.node}, ${report.cpus} x ${report.cpuModel}, ${report.platform}, load average ${report.loadAverage.join(' ')}`);
  console.log(`${options.warmup} warm-up conversations, then ${options.rounds} rounds x ${options.conversations} conversations (sequential), rounds of the contenders alternating; medians over rounds\n`);
  console.log(line(table[0]!));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of table.slice(1)) console.log(line(row));
  console.log('');
  for (const r of report.results) console.log(`  ${r.name}: ${r.description}`);

  const base = report.results.find((r) => r.name === 'ai-sdk');
  if (!base) return;
  console.log('');
  const rate = (r: ContenderResult, clock: 'wall' | 'cpu') => median(r.rounds.map((x) => stepsPerSecond(x, 1, clock)));
  for (const r of report.results) {
    if (r === base) continue;
    const ratio = rate(r, 'wall') / rate(base, 'wall');
    // Round i of both contenders ran back to back, under the same load.
    const paired = median(r.rounds.flatMap((x, i) => (base.rounds[i] ? [stepsPerSecond(x, 1) / stepsPerSecond(base.rounds[i]!, 1)] : [])));
    const cpu = rate(r, 'cpu') / rate(base, 'cpu');
    const target = TARGETS[r.name];
    const verdict = target === undefined ? '' : ` (target >= ${target}x: ${ratio >= target ? 'met' : 'MISSED'})`;
    console.log(`ratio ${r.name} / ai-sdk = ${ratio.toFixed(2)}x${verdict}; median of per-round ratios ${paired.toFixed(2)}x; per CPU-second ${cpu.toFixed(2)}x`);
  }
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
