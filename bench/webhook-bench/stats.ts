/** Latency summary of one contender, in microseconds. */
export interface LatencySummary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Summarizes samples given in milliseconds as microseconds. */
export function summarize(samplesMs: readonly number[]): LatencySummary {
  const us = samplesMs.map((ms) => ms * 1000).sort((a, b) => a - b);
  const mean = us.reduce((a, b) => a + b, 0) / us.length;
  return { n: us.length, p50: percentile(us, 50), p90: percentile(us, 90), p99: percentile(us, 99), mean, min: us[0]!, max: us[us.length - 1]! };
}

export function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(2);
}
