/**
 * Webhook benchmark (issue 4), two parts in one invocation:
 *
 *  (a) control-decision latency: `evaluateToolCall` through a started kernel
 *      with one control webhook vs a bare `fetch` POST of the same payload to
 *      the same loopback receiver, interleaved call by call (target: hookgate
 *      p50 and p99 under 1.2x the bare fetch);
 *  (b) 10,000 notifications to 500 distinct users through the dispatcher,
 *      payload builder and fetch transport with a counting user directory
 *      (target: exactly 500 email look-ups, heapUsed flat).
 *
 *   node --expose-gc dist/bench/webhook-bench.js [--calls 2000] [--warmup 300]
 *        [--notifications 10000] [--users 500] [--concurrency 250] [--json]
 *
 * Without --expose-gc the script re-runs itself with it (heap samples need a
 * forced GC). The exit code is 0 when the fan-out is correct (exactly one
 * look-up per user, every notification delivered with its email), whatever
 * the latency ratios. See bench/README.md, section "Webhooks".
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measureControlLatency, type ControlLatencyResult } from './webhook-bench/control-latency.js';
import { measureNotificationFanout, type FanoutResult } from './webhook-bench/notification-fanout.js';
import { mb } from './webhook-bench/stats.js';

if ((globalThis as { gc?: unknown }).gc === undefined && !process.execArgv.includes('--expose-gc')) {
  const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '300' },
    notifications: { type: 'string', default: '10000' },
    users: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '250' },
    json: { type: 'boolean', default: false },
  },
});

const int = (name: string, raw: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return n;
};

const latency = await measureControlLatency({ calls: int('calls', values.calls!), warmup: int('warmup', values.warmup!) });
const fanout = await measureNotificationFanout({
  notifications: int('notifications', values.notifications!),
  users: int('users', values.users!),
  concurrency: int('concurrency', values.concurrency!),
  sampleEvery: 1000,
});

if (values.json) {
  process.stdout.write(JSON.stringify({ node: process.version, latency, fanout }, null, 2) + '\n');
} else {
  printLatency(latency);
  printFanout(fanout);
}
// Like the step-loop bench, timings never decide the exit code (they depend on the machine); correctness does:
// every control answered allow (checked per call), exactly one look-up per user, every notification delivered with its email.
const fanoutOk = fanout.lookups === fanout.users && fanout.emailsOk && fanout.requestsSeen === fanout.notifications;
process.exitCode = fanoutOk ? 0 : 1;

function printLatency(r: ControlLatencyResult): void {
  const us = (n: number) => `${Math.round(n)} µs`.padStart(9);
  const row = (name: string, s: ControlLatencyResult['hookgate']) => `  ${name.padEnd(22)}${us(s.p50)}${us(s.p90)}${us(s.p99)}${us(s.mean)}`;
  process.stdout.write(
    [
      `(a) control-decision latency, ${r.calls} calls each, interleaved, ${r.warmup} warm-up (node ${process.version})`,
      `  ${''.padEnd(22)}${'p50'.padStart(9)}${'p90'.padStart(9)}${'p99'.padStart(9)}${'mean'.padStart(9)}`,
      row('hookgate control', r.hookgate),
      row('bare fetch', r.bareFetch),
      row('(fetch transport only)', r.transportOnly),
      `  ratio hookgate/fetch: p50 ${r.ratioP50.toFixed(2)}x, p99 ${r.ratioP99.toFixed(2)}x, mean ${r.ratioMean.toFixed(2)}x (target < 1.2x: ${r.ratioP50 < 1.2 && r.ratioP99 < 1.2 ? 'met' : 'NOT met'})`,
      `  receiver saw ${r.requestsSeen} requests`,
      '',
    ].join('\n'),
  );
}

function printFanout(r: FanoutResult): void {
  const first = r.samples[0]!.heapUsed;
  const afterFirst = r.samples[1]?.heapUsed ?? first;
  const last = r.samples[r.samples.length - 1]!.heapUsed;
  const steady = r.samples.slice(1).map((s) => s.heapUsed);
  process.stdout.write(
    [
      `(b) ${r.notifications} notifications to ${r.users} users, batches of ${r.concurrency} in flight, ${Math.round(r.ms)} ms (${Math.round((r.notifications / r.ms) * 1000)}/s)`,
      `  email look-ups: ${r.lookups} (target exactly ${r.users}: ${r.lookups === r.users ? 'met' : 'NOT met'}); every payload had its email: ${r.emailsOk}; receiver saw ${r.requestsSeen}`,
      `  heapUsed after GC${r.gcExposed ? '' : ' (GC not exposed: samples are noisy)'}: ${r.samples.map((s) => `${s.delivered / 1000}k ${mb(s.heapUsed)}`).join(', ')} MB`,
      `  before -> after: ${mb(first)} -> ${mb(last)} MB (${mb(last - first)} MB); from the first 1k on: ${mb(afterFirst)} -> ${mb(last)} MB, spread ${mb(Math.max(...steady) - Math.min(...steady))} MB`,
      '',
    ].join('\n'),
  );
}
