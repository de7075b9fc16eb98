import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { killed, readStore, runUntil, slowWriterAgent, usePostgresConfig } from '../../helpers/cli-process.js';
import { dropSchema, requirePostgres, uniqueSchema } from '../../helpers/postgres-fixtures.js';

const LEASE_MS = 3000;
const ENV = { HOOKGATE_RUNTIME__LEASE_MS: String(LEASE_MS) };

const SLOW_AGENT = slowWriterAgent(2000);

/** Issue 11, item 2: "when a process dies its lease expires and another process, or the next start, takes the operation over". */
// Once per store several processes share: one SQLite file, one PostgreSQL schema.
for (const store of ['sqlite', 'postgres'] as const) describe(`integration: runtime.takeOver continues operations a dead process left running (${store})`, function () {
  if (store === 'postgres') before(requirePostgres);
  let schema: string | undefined;
  this.timeout(90_000);
  let dir: string;
  let kernel: Kernel | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-takeover-')));
    await writeFile(path.join(dir, 'slow.yaml'), SLOW_AGENT);
    if (store === 'postgres') await usePostgresConfig(dir, (schema = uniqueSchema('takeover')));
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    await rm(dir, { recursive: true, force: true });
    if (schema) await dropSchema(schema);
    schema = undefined;
  });

  async function startKernel(takeOver: string): Promise<Kernel> {
    const k = createKernel({ config: loadConfig({ cwd: dir, env: { ...ENV, HOOKGATE_RUNTIME__TAKE_OVER: takeOver } }), env: {} });
    await k.start();
    return k;
  }

  it('watch: a kernel started while the dead lease still holds takes the operation over once it expires and finishes it, each tool result stored once', async () => {
    const { child, operationId } = await runUntil(dir, ['slow.yaml'], (e) => e.type === 'step_started' && e.stepIndex === 2, ENV);
    await killed(child);
    const lease = await readStore(dir, (s) => s.getLease(operationId));
    assert.ok(lease && lease.expiresAt > Date.now(), 'the dead process still holds its lease');

    kernel = await startKernel('watch');
    // Nobody resumes it: the watch claims it after the lease expired (not before: a live holder would be renewing).
    const final = await kernel.waitForOperation(operationId, 'terminal');
    assert.ok(Date.now() > lease.expiresAt, 'taken over only after the dead lease expired');
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'all done');
    const messages = await kernel.listMessages(operationId);
    const toolMessages = messages.filter((m) => m.role === 'tool');
    assert.equal(toolMessages.length, 2);
    assert.equal(new Set(toolMessages.map((m) => m.toolCallId)).size, 2, 'no tool result twice');
    const steps = (await kernel.listSteps(operationId)).map((s) => s.stepIndex);
    assert.equal(new Set(steps).size, steps.length, `no step twice: ${steps.join(',')}`);
    assert.equal(await readFile(path.join(dir, '.hookgate', 'sandbox', 'second.txt'), 'utf8'), 'two');
  });

  it('start: the next start takes over an operation whose lease already expired; off (the default) leaves it as stored', async () => {
    const { child, operationId } = await runUntil(dir, ['slow.yaml'], (e) => e.type === 'step_started' && e.stepIndex === 2, ENV);
    await killed(child);
    const lease = await readStore(dir, (s) => s.getLease(operationId));
    assert.ok(lease);
    while (Date.now() <= lease.expiresAt) await new Promise((r) => setTimeout(r, 100));

    // The default: a kernel that does not take over leaves it running and unclaimed.
    kernel = await startKernel('off');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await kernel.getOperation(operationId))?.status, 'running');
    assert.equal(await readStore(dir, (s) => s.getLease(operationId)).then((l) => l?.owner), lease.owner, 'nobody claimed it');
    await kernel.stop();

    kernel = await startKernel('start');
    const final = await kernel.waitForOperation(operationId, 'terminal');
    assert.equal(final.status, 'done');
    assert.equal((await kernel.listMessages(operationId)).filter((m) => m.role === 'tool').length, 2);
  });

  it('a bad runtime.takeOver is refused with the key and the allowed values', () => {
    assert.throws(
      () => loadConfig({ cwd: dir, env: { HOOKGATE_RUNTIME__TAKE_OVER: 'always' } }),
      (err: Error) => /runtime\.takeOver/.test(err.message) && /off, start, watch/.test(err.message),
    );
  });
});
