/**
 * Hand-written code next to the library that could replace it (issue 10,
 * "libraries where one exists"): `node dist/bench/library-bench.js [--rounds 5] [--json]`
 * after `npm run build`.
 *
 *  - time-ordered ids: `timeOrderedId()` vs `uuid`'s `v7()` (and `randomUUID()` for scale);
 *  - Standard Webhooks: `signWebhook` / `verifyWebhookSignature` vs `standardwebhooks`'
 *    `Webhook#sign` / `Webhook#verify`, on a 1 KB and a 1 MiB body;
 *  - canonical JSON: `canonicalJson` / `canonicalDigest` vs `canonicalize` (RFC 8785)
 *    (+ one sha256 of its string) on a decision-log input, a 1 MiB tool result, a
 *    wide object and 10,000 levels of nesting; then which inputs each one refuses
 *    (cycles, NaN, lone surrogates, BigInt: the decision log digests whatever a
 *    policy input holds).
 *
 * Each case runs for about 200 ms per round; the table shows the median
 * operations per second over the rounds. Results go to stdout; the exit code
 * is 0 unless the two sides of a case disagree on the output for the same input.
 */
import { createHash, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import canonicalize from 'canonicalize';
import { Webhook } from 'standardwebhooks';
import { v7 } from 'uuid';
import { generateSigningSecret, signWebhook, verifyWebhookSignature } from '../kernel/hooks/webhook/signing.js';
import { timeOrderedId } from '../kernel/time-ordered-id.js';
import { canonicalDigest, canonicalJson } from '../policies/canonical-json.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, json: { type: 'boolean', default: false } } });
const ROUNDS = Number(values.rounds);
const ROUND_MS = 200;

interface Row {
  group: string;
  contender: string;
  opsPerSecond: number;
}
const rows: Row[] = [];
let disagreements = 0;

/** Median ops/s of `fn` over ROUNDS rounds of about ROUND_MS each (after one warm-up round). */
function measure(group: string, contender: string, fn: () => unknown): void {
  const rates: number[] = [];
  for (let r = 0; r <= ROUNDS; r++) {
    let n = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < ROUND_MS) {
      for (let i = 0; i < 16; i++) fn();
      n += 16;
      elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    }
    if (r > 0) rates.push((n / elapsed) * 1000);
  }
  rates.sort((a, b) => a - b);
  rows.push({ group, contender, opsPerSecond: rates[Math.floor(rates.length / 2)]! });
}

function agree(group: string, a: unknown, b: unknown): void {
  if (a !== b) {
    disagreements++;
    process.stderr.write(`disagreement in ${group}: ${String(a).slice(0, 80)} vs ${String(b).slice(0, 80)}\n`);
  }
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

// --- time-ordered ids
measure('id', 'timeOrderedId()', () => timeOrderedId());
measure('id', 'uuid v7()', () => v7());
measure('id', 'crypto.randomUUID() (v4, for scale)', () => randomUUID());

// --- Standard Webhooks signing
const secret = generateSigningSecret();
const webhook = new Webhook(secret);
const timestamp = Math.floor(Date.now() / 1000);
for (const [label, body] of [
  ['1 KB', JSON.stringify({ type: 'beforeToolCall', args: { path: 'notes/a.txt', content: 'x'.repeat(900) } })],
  ['1 MiB', JSON.stringify({ type: 'afterToolCall', result: { content: 'y'.repeat(1 << 20) } })],
] as const) {
  const ours = signWebhook(secret, body, { id: 'msg_bench', timestampSeconds: timestamp });
  agree(`sign ${label}`, ours['webhook-signature'], webhook.sign('msg_bench', new Date(timestamp * 1000), body));
  measure(`sign ${label}`, 'signWebhook', () => signWebhook(secret, body, { id: 'msg_bench', timestampSeconds: timestamp }));
  measure(`sign ${label}`, 'standardwebhooks sign', () => webhook.sign('msg_bench', new Date(timestamp * 1000), body));
  measure(`verify ${label}`, 'verifyWebhookSignature', () => verifyWebhookSignature(secret, ours, body));
  measure(`verify ${label}`, 'standardwebhooks verify', () => webhook.verify(body, ours, { jsonParse: false }));
}

// --- canonical JSON
const decisionInput = {
  type: 'beforeToolCall',
  operationId: `op_${timeOrderedId()}`,
  toolCallId: 'call_1',
  agentId: 'researcher',
  identifier: 'fs',
  apiName: 'readFile',
  args: { path: 'notes/hello.txt', encoding: 'utf8', options: { follow: false, limit: 4096 } },
  user: { id: 'u1', email: 'a@example.com' },
  step: { index: 3, tokens: 1234 },
};
const bigResult = { type: 'afterToolCall', result: { content: 'z'.repeat(1 << 20), success: true } };
const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${(i * 7919) % 5000}`, { n: i, s: `v${i}`, b: i % 2 === 0 }]));
let deep: unknown = 'leaf';
for (let i = 0; i < 10_000; i++) deep = i % 2 === 0 ? { d: deep } : [deep];

for (const [label, input] of [
  ['decision input', decisionInput],
  ['1 MiB result', bigResult],
  ['5,000 keys', wide],
  ['10,000 levels', deep],
] as const) {
  measure(`canonical ${label}`, 'canonicalJson', () => canonicalJson(input));
  measure(`digest ${label}`, 'canonicalDigest (streamed)', () => canonicalDigest(input));
  let theirs: string | undefined;
  try {
    theirs = canonicalize(input);
  } catch (err) {
    // canonicalize 4 recurses, so deep input overflows its stack: one more input only the hand-written one takes.
    process.stdout.write(`canonical ${label}: canonicalize throws ${(err as Error).name} (${(err as Error).message}); not measured\n`);
    continue;
  }
  agree(`canonical ${label}`, canonicalJson(input), theirs);
  measure(`canonical ${label}`, 'canonicalize', () => canonicalize(input));
  measure(`digest ${label}`, 'sha256(canonicalize())', () => sha256(canonicalize(input)!));
}

const cyclic: Record<string, unknown> = { a: 1 };
cyclic.self = cyclic;
const refusals = Object.entries({
  cycle: cyclic,
  NaN: { n: Number.NaN },
  'lone surrogate': { s: '\ud800' },
  BigInt: { b: 10n },
}).map(([what, input]) => ({ input: what, canonicalJson: outcome(() => canonicalJson(input)), canonicalize: outcome(() => canonicalize(input)) }));

function outcome(fn: () => unknown): string {
  try {
    return `ok ${String(fn()).slice(0, 40)}`;
  } catch (err) {
    return `throws: ${(err as Error).message}`;
  }
}

if (values.json) {
  process.stdout.write(JSON.stringify({ node: process.version, rounds: ROUNDS, rows, refusals, disagreements }, null, 2) + '\n');
} else {
  process.stdout.write(`node ${process.version}, median of ${ROUNDS} rounds of ${ROUND_MS} ms\n\n| case | contender | ops/s | vs first |\n|---|---|---:|---:|\n`);
  const first = new Map<string, number>();
  for (const r of rows) {
    if (!first.has(r.group)) first.set(r.group, r.opsPerSecond);
    process.stdout.write(`| ${r.group} | ${r.contender} | ${Math.round(r.opsPerSecond).toLocaleString('en')} | ${(r.opsPerSecond / first.get(r.group)!).toFixed(2)} |\n`);
  }
  process.stdout.write('\n| input | canonicalJson | canonicalize |\n|---|---|---|\n');
  for (const r of refusals) process.stdout.write(`| ${r.input} | ${r.canonicalJson} | ${r.canonicalize} |\n`);
}
process.exitCode = disagreements === 0 ? 0 : 1;
