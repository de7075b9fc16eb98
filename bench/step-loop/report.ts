import type { InstructionCount } from './callgrind-count.js';
import { modelAndToolSteps, modelSteps } from './contender.js';
import { median, stepsPerSecond, type ContenderResult, type MeasureOptions } from './measure.js';

/** The wall-clock measurement of one conversation length. */
export interface LengthResult {
  calls: number;
  options: MeasureOptions;
  /** 1-minute load average when the length's measurement started and when it ended. */
  load: [number, number];
  results: ContenderResult[];
}

export interface Report {
  node: string;
  cpus: number;
  cpuModel: string;
  platform: string;
  /** 1, 5 and 15 minute load averages when the run ended (other processes share the CPUs). */
  loadAverage: number[];
  lengths: LengthResult[];
  /** Instruction counts (with --callgrind), any length and contender. */
  instructions: InstructionCount[];
  /** 1-minute load average when the callgrind runs started and ended. */
  callgrindLoad?: [number, number];
}

/**
 * Targets, as ratios of conversations per second (or of instructions per
 * conversation) against an AI SDK contender: issue 3 against ai 5
 * (`ai-sdk`), issue 12 against ai 7 (`ai-sdk-7`).
 */
export const TARGETS: Record<string, Record<string, number>> = {
  'ai-sdk-7': { 'hookgate-memory': 2, 'hookgate-sqlite': 1.5 },
  'ai-sdk': { 'hookgate-memory': 2, 'hookgate-sqlite': 1 },
};

/** Per-step cost at the longest length may be this much above the shortest's and still count as flat (issue 12). */
export const FLATNESS_TARGET = 1.1;

const MB = 1024 * 1024;
const isPeer = (name: string) => name.startsWith('ai-sdk');

/** Prints, per length, the side-by-side table and ratios; then the sweep summary (per-step cost, ratios to ai 7, flatness) to stdout. */
export function printReport(report: Report): void {
  console.log(`node ${report.node}, ${report.cpus} x ${report.cpuModel}, ${report.platform}, load average ${report.loadAverage.join(' ')} at the end`);
  for (const length of report.lengths) printLength(length, report.instructions.filter((c) => c.calls === length.calls));
  if (report.lengths.length > 0) printSweep(report);
}

function printLength(length: LengthResult, counts: InstructionCount[]): void {
  const { calls, options } = length;
  const steps = modelAndToolSteps(calls);
  const rows = length.results.map((r) => {
    const full = r.rounds.map((round) => stepsPerSecond(round, steps));
    const count = counts.find((c) => c.name === r.name);
    return [
      r.name,
      fmt(median(r.rounds.map((round) => stepsPerSecond(round, modelSteps(calls))))),
      fmt(median(full)),
      `${fmt(Math.min(...full))}-${fmt(Math.max(...full))}`,
      fmt(median(r.rounds.map((round) => stepsPerSecond(round, steps, 'cpu')))),
      count ? (count.perConversation / 1e6).toFixed(2) : '',
      count ? fmt(count.perConversation / steps) : '',
      (r.peakRss / MB).toFixed(1),
      (r.peakHeapUsed / MB).toFixed(1),
      Object.entries(r.facts).map(([k, v]) => `${k}=${v}`).join(' '),
    ];
  });
  console.log(`\n## ${calls} tool calls per conversation (${modelSteps(calls)} model steps + ${calls} tool steps = ${steps})\n`);
  console.log(
    `${options.warmup} warm-up conversations, then ${options.rounds} rounds x (${options.rewarm} untimed + ${options.conversations} timed) conversations, rounds of the contenders alternating; medians over rounds; load average ${length.load[0]}-${length.load[1]}\n`,
  );
  table(['contender', 'model steps/s', 'model+tool steps/s', 'min-max (model+tool)', 'model+tool steps/CPU-s', 'M instr/conversation', 'instr/step', 'peak RSS MB', 'peak heap MB', 'notes'], rows);
  console.log('');
  for (const r of length.results) console.log(`  ${r.name}: ${r.description}`);
  console.log('');
  for (const base of length.results.filter((r) => isPeer(r.name))) {
    for (const r of length.results) {
      if (isPeer(r.name)) continue;
      const ratio = rate(r, 'wall') / rate(base, 'wall');
      const target = TARGETS[base.name]?.[r.name];
      const verdict = target === undefined ? '' : ` (target >= ${target}x: ${ratio >= target ? 'met' : 'MISSED'})`;
      const instr = instructionRatio(counts, base.name, r.name);
      console.log(
        `ratio ${r.name} / ${base.name} = ${ratio.toFixed(2)}x${verdict}; median of per-round ratios ${paired(r, base).toFixed(2)}x; per CPU-second ${(rate(r, 'cpu') / rate(base, 'cpu')).toFixed(2)}x` +
          (instr === undefined ? '' : `; by instructions ${instr.toFixed(2)}x`),
      );
    }
  }
}

function printSweep(report: Report): void {
  const lengths = report.lengths;
  const names = [...new Set(lengths.flatMap((l) => l.results.map((r) => r.name)))];
  const first = lengths[0]!;
  const last = lengths[lengths.length - 1]!;
  const perStepUs = (l: LengthResult, name: string) => {
    const r = l.results.find((x) => x.name === name);
    return r ? 1e6 / median(r.rounds.map((round) => stepsPerSecond(round, modelAndToolSteps(l.calls)))) : undefined;
  };
  const perStepInstr = (l: LengthResult, name: string) => {
    const c = report.instructions.find((x) => x.calls === l.calls && x.name === name);
    return c ? c.perConversation / modelAndToolSteps(l.calls) : undefined;
  };
  const growth = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined ? `${(b / a).toFixed(2)}x` : '');

  console.log(`\n## Sweep: per model+tool step (wall-clock µs from the median round; k instructions from callgrind)\n`);
  const header = ['contender', ...lengths.flatMap((l) => [`${l.calls}: µs`, `${l.calls}: k instr`]), `${first.calls}->${last.calls} µs`, `${first.calls}->${last.calls} instr`];
  table(
    header,
    names.map((n) => [
      n,
      ...lengths.flatMap((l) => [dec(perStepUs(l, n)), dec(kilo(perStepInstr(l, n)))]),
      growth(perStepUs(first, n), perStepUs(last, n)),
      growth(perStepInstr(first, n), perStepInstr(last, n)),
    ]),
  );
  console.log(`(flat: the ${first.calls}->${last.calls} growth at most ${FLATNESS_TARGET}x)`);

  for (const [base, targets] of Object.entries(TARGETS)) {
    if (!names.includes(base)) continue;
    const rows: string[][] = [];
    for (const name of names.filter((n) => !isPeer(n))) {
      for (const l of lengths) {
        const b = l.results.find((r) => r.name === base);
        const r = l.results.find((x) => x.name === name);
        if (!b || !r) continue;
        const wall = rate(r, 'wall') / rate(b, 'wall');
        const instr = instructionRatio(report.instructions.filter((c) => c.calls === l.calls), base, name);
        const target = targets[name];
        const met = target === undefined ? '' : [wall, paired(r, b), instr].every((x) => x === undefined || x >= target) ? 'met' : 'MISSED';
        rows.push([`${name} / ${base}`, String(l.calls), x(wall), x(paired(r, b)), x(rate(r, 'cpu') / rate(b, 'cpu')), instr === undefined ? '' : x(instr), target === undefined ? '' : `>= ${target}x: ${met}`]);
      }
    }
    console.log(`\n## Ratios to ${base}\n`);
    table(['ratio', 'calls', 'wall (medians)', 'wall (per-round)', 'CPU time', 'instructions', 'target'], rows);
  }
}

/** Median conversations per second of a contender's rounds. */
function rate(r: ContenderResult, clock: 'wall' | 'cpu'): number {
  return median(r.rounds.map((x) => stepsPerSecond(x, 1, clock)));
}

/** Median of per-round ratios: round i of both contenders ran one right after the other, under the same load. */
function paired(r: ContenderResult, base: ContenderResult): number {
  return median(r.rounds.flatMap((x, i) => (base.rounds[i] ? [stepsPerSecond(x, 1) / stepsPerSecond(base.rounds[i]!, 1)] : [])));
}

/** How many times fewer instructions per conversation `name` executes than `base`. */
function instructionRatio(counts: InstructionCount[], base: string, name: string): number | undefined {
  const b = counts.find((c) => c.name === base);
  const r = counts.find((c) => c.name === name);
  return b && r ? b.perConversation / r.perConversation : undefined;
}

function table(header: string[], rows: string[][]): void {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((c, i) => (c ?? '').padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
}

function dec(n: number | undefined): string {
  return n === undefined ? '' : n.toFixed(n < 100 ? 2 : 1);
}

function kilo(n: number | undefined): number | undefined {
  return n === undefined ? undefined : n / 1000;
}

function x(n: number): string {
  return `${n.toFixed(2)}x`;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
