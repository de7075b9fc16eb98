import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CLI, cliEnv, killed, readStore, runHookgate, runUntil, slowWriterAgent, usePostgresConfig } from '../../helpers/cli-process.js';
import { dropSchema, requirePostgres, uniqueSchema } from '../../helpers/postgres-fixtures.js';

/** Short enough to wait out in a spec, long enough that a process starting right after a kill still sees it held (6 s was not, on a loaded machine). */
const LEASE_MS = 12_000;
const ENV = { HOOKGATE_RUNTIME__LEASE_MS: String(LEASE_MS) };

const SLOW_AGENT = slowWriterAgent(3000);

/** One write, then the end: the write's result waits for an afterToolCall webhook control before it is committed. */
const REVIEWED_AGENT = `id: reviewed
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: reviewed.txt, content: kept } } ]
    - text: reviewed and done
tools: [fs/*]
`;

/**
 * A result-control receiver: the first review never gets an answer (the process asking is killed while it waits,
 * after the tool ran and before its result was committed); later ones allow. `firstReview` resolves when it arrives.
 */
async function reviewServer(): Promise<{ server: Server; url: string; reviews: () => number; firstReview: Promise<void> }> {
  let reviews = 0;
  let arrived!: () => void;
  const firstReview = new Promise<void>((resolve) => (arrived = resolve));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      reviews += 1;
      if (reviews === 1) return arrived();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ decision: 'allow' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/review`, reviews: () => reviews, firstReview };
}


/** Issue 11, item 2: a driver owns running through a lease in the store; a dead process's lease expires and another takes over. */
// Once per store several processes share: one SQLite file, one PostgreSQL schema.
for (const store of ['sqlite', 'postgres'] as const) describe(`integration: operation leases across processes (${store})`, function () {
  if (store === 'postgres') before(requirePostgres);
  let schema: string | undefined;
  this.timeout(90_000);
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-leases-')));
    await writeFile(path.join(dir, 'slow.yaml'), SLOW_AGENT);
    if (store === 'postgres') await usePostgresConfig(dir, (schema = uniqueSchema('leases')));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
    if (schema) await dropSchema(schema);
    schema = undefined;
  });

  it('a process SIGKILLed in a model turn keeps its lease until it expires; then two resumes race, one takes the operation over and finishes it, every tool result stored once', async () => {
    const { child, operationId } = await runUntil(dir, ['slow.yaml'], (e) => e.type === 'step_started' && e.stepIndex === 2, ENV);
    await killed(child);
    const lease = await readStore(dir, (s) => s.getLease(operationId));
    assert.ok(lease, 'the killed process left its lease behind');
    assert.equal((await readStore(dir, (s) => s.getOperation(operationId)))?.status, 'running');

    // While the dead process's lease lasts, resume is refused with who holds it and until when.
    const early = await runHookgate(dir, ['resume', operationId], ENV);
    assert.equal(early.code, 2, early.stderr);
    assert.match(early.stderr, /being run by another process \(.+, lease until .+\).*--force/);

    // Once it has expired (read from the store, not guessed), two processes try to take it over at once.
    while (Date.now() <= lease.expiresAt) await new Promise((r) => setTimeout(r, 100));
    const [a, b] = await Promise.all([runHookgate(dir, ['resume', operationId], ENV), runHookgate(dir, ['resume', operationId], ENV)]);
    assert.deepEqual([a.code, b.code].sort(), [0, 2], `exit codes ${a.code}/${b.code}: ${a.stderr}${b.stderr}`);
    const loser = a.code === 2 ? a : b;
    assert.match(loser.stderr, /being run by another process/);

    const { op, messages, steps, after } = await readStore(dir, async (s) => ({
      op: await s.getOperation(operationId),
      messages: await s.listMessages(operationId),
      steps: await s.listSteps(operationId),
      after: await s.getLease(operationId),
    }));
    assert.equal(op?.status, 'done');
    assert.equal(op?.state.lastText, 'all done');
    const toolMessages = messages.filter((m) => m.role === 'tool');
    assert.equal(toolMessages.length, 2, 'each of the two writes has one result');
    assert.equal(new Set(toolMessages.map((m) => m.toolCallId)).size, 2, 'no tool result twice');
    assert.deepEqual(messages.map((m) => m.seq), messages.map((_, i) => i + 1));
    const indexes = steps.map((s) => s.stepIndex);
    assert.equal(new Set(indexes).size, indexes.length, `no step index twice: ${indexes.join(',')}`);
    assert.equal(after, undefined, 'the winner released the lease when the operation finished');
    assert.equal(await readFile(path.join(dir, '.hookgate', 'sandbox', 'first.txt'), 'utf8'), 'one');
    assert.equal(await readFile(path.join(dir, '.hookgate', 'sandbox', 'second.txt'), 'utf8'), 'two');
  });

  it('a resume while the operation runs in a live process is refused; the running process finishes it alone', async () => {
    // A turn long enough for a second CLI process to start, connect and try under load (its start is the race).
    await writeFile(path.join(dir, 'slower.yaml'), slowWriterAgent(10_000));
    const { child, operationId } = await runUntil(dir, ['slower.yaml'], (e) => e.type === 'step_started' && e.stepIndex === 2, ENV);
    const finished = new Promise<number | null>((resolve) => {
      child.removeAllListeners('close');
      child.on('close', (code) => resolve(code));
    });
    const refused = await runHookgate(dir, ['resume', operationId], ENV);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /OPERATION_LEASED|being run by another process/);
    assert.equal(await finished, 0);
    const messages = await readStore(dir, (s) => s.listMessages(operationId));
    assert.equal(messages.filter((m) => m.role === 'tool').length, 2);
  });

  it('a process SIGKILLed between a tool execution and its commit: after the lease expires another process runs the step again and stores its result once', async () => {
    const review = await reviewServer();
    try {
      await writeFile(path.join(dir, 'reviewed.yaml'), REVIEWED_AGENT);
      await writeFile(path.join(dir, 'hooks.mjs'), `export default [{ id: 'review', type: 'afterToolCall', webhook: { url: ${JSON.stringify(review.url)}, responseHandling: 'toolCall' } }];\n`);
      let operationId = '';
      const child = spawn(process.execPath, [CLI, 'run', 'reviewed.yaml', '--hooks', 'hooks.mjs', '--json'], { cwd: dir, env: cliEnv(ENV), stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        const started = /"operationId":"(op_[^"]+)"/.exec(d);
        if (!operationId && started) operationId = started[1]!;
      });
      await review.firstReview;
      await killed(child);
      assert.ok(operationId, 'the run printed its operation id');
      assert.equal(await readFile(path.join(dir, '.hookgate', 'sandbox', 'reviewed.txt'), 'utf8'), 'kept', 'the tool ran before the kill');
      const before = await readStore(dir, async (s) => ({ lease: await s.getLease(operationId), tools: (await s.listMessages(operationId)).filter((m) => m.role === 'tool').length }));
      assert.ok(before.lease, 'the killed process left its lease behind');
      assert.equal(before.tools, 0, 'the result was not committed');

      while (Date.now() <= before.lease.expiresAt) await new Promise((r) => setTimeout(r, 100));
      const resumed = await runHookgate(dir, ['resume', operationId], ENV);
      assert.equal(resumed.code, 0, resumed.stderr);
      const { op, messages } = await readStore(dir, async (s) => ({ op: await s.getOperation(operationId), messages: await s.listMessages(operationId) }));
      assert.equal(op?.status, 'done');
      assert.equal(op?.state.lastText, 'reviewed and done');
      assert.equal(messages.filter((m) => m.role === 'tool').length, 1, 'the re-run step stored its result once');
      assert.equal(review.reviews(), 2, 'the restored webhook control reviewed the re-run result');
    } finally {
      review.server.closeAllConnections();
      await new Promise((r) => review.server.close(r));
    }
  });
});
