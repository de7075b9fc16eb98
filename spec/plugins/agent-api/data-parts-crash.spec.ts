import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SubmissionRecord } from '../../../kernel/submissions.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { cliEnv, killed } from '../../helpers/cli-process.js';
import { DataCrash } from './fixtures/data-parts-agent.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'data-parts-child.js');
const ENV = { HOOKGATE_RUNTIME__LEASE_MS: '1500' };

/** useDataWriter's parts are committed with their step: a process killed mid-response loses none and duplicates none. */
describe('agent-api: data parts across a SIGKILL', function () {
  this.timeout(60_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-data-crash-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a part written by a committed step before the kill is in the reply of the resumed response, once', async () => {
    const db = path.join(dir, 'crash.db');
    const child = spawn(process.execPath, [CHILD, db], { env: cliEnv({ ...ENV, SPEC_DATA_PARTS_HANG: '1' }), stdio: ['ignore', 'pipe', 'pipe'] });
    await untilHanging(child);
    await killed(child);

    runtime = await start({ agents: [DataCrash], db: { sqlite: db }, env: ENV });
    const [submission] = await runtime.kernel.store.listSubmissions({ threadId: 'agent:DataCrash:crash' });
    assert.ok(submission !== undefined, 'the send was not admitted before the kill');
    const final = await settled(runtime, submission.id);
    assert.deepEqual([final.status, final.result?.text, final.attempts], ['completed', 'done', 2]);
    assert.deepEqual(final.result?.data, { card: [{ n: 1 }], after: ['resumed'] });
  });
});

async function settled(runtime: AgentRuntimeHandle, id: string): Promise<SubmissionRecord> {
  for (;;) {
    const found = await runtime.kernel.store.getSubmission(id);
    if (found && ['completed', 'failed', 'aborted'].includes(found.status)) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves when the child prints `hanging` (the card's step is committed: the hang tool runs in the next turn). */
function untilHanging(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('"type":"hanging"')) resolve();
    });
    child.on('close', (code) => reject(new Error(`the child exited (${code}) before hanging: ${stderr}`)));
  });
}
