import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readStore } from '../../helpers/cli-process.js';
import { dropPrefix, killWorker, startServe, startWorker, TRIAGE, uniquePrefix, until, QUEUE_STORES, useQueueStore, writeQueueConfig, type WorkerProcess } from './queue-fixtures.js';

/** Issue 16 items 2 and 6: the API process (`hookgate serve`) only admits; the agent function runs in a worker that loaded the same module. */
for (const kind of QUEUE_STORES) describe(`execution-queue: hookgate serve admits, hookgate worker runs the agent function (${kind})`, function () {
  const store = useQueueStore(kind);
  this.timeout(90_000);
  let dir: string;
  let prefix: string;
  let worker: WorkerProcess | undefined;
  let serve: ChildProcess | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-serve-')));
    prefix = uniquePrefix();
    await writeQueueConfig(dir, prefix, store.configLines());
  });
  afterEach(async () => {
    if (worker) await killWorker(worker);
    worker = undefined;
    if (serve && serve.exitCode === null) {
      serve.removeAllListeners('close');
      const gone = new Promise((r) => serve!.once('close', r));
      serve.kill('SIGKILL');
      await gone;
    }
    await dropPrefix(prefix);
    await store.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a message sent over HTTP waits at step 0 until a worker starts, then is answered: the submission settles and the operation ends done', async () => {
    const started = await startServe(dir);
    serve = started.child;
    const sent = await fetch(`${started.url}/agents/Triage/issue-42`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'user', body: 'Login fails.', initialData: { title: 'Login broken' } }),
    });
    assert.equal(sent.status, 202);
    // No worker yet: the server only admitted the message; nothing of the operation ran there.
    await new Promise((r) => setTimeout(r, 1500));
    const admitted = await readStore(dir, (s) => s.listOperations({}));
    assert.equal(admitted.length, 1);
    assert.deepEqual([admitted[0]!.status, admitted[0]!.state.stepIndex], ['running', 0]);
    worker = await startWorker(dir, {}, [TRIAGE]);
    let chunks: Array<{ type: string; delta?: string }> = [];
    await until(async () => {
      chunks = (await (await fetch(`${started.url}/agents/Triage/issue-42`)).json()) as typeof chunks;
      return chunks.some((c) => c.type === 'submission-settled');
    }, 60_000, 'the submission to settle');
    assert.ok(chunks.some((c) => c.type === 'tool-output'), `the agent's tool ran: ${JSON.stringify(chunks.filter((c) => c.type.startsWith('tool')))}`);
    assert.match(chunks.filter((c) => c.type === 'message-delta').map((c) => c.delta).join(''), /Labelled it a bug/);
    const ops = await readStore(dir, (s) => s.listOperations({}));
    assert.equal(ops.length, 1);
    assert.equal(ops[0]!.status, 'done');
  });
});
