import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SubmissionRecord } from '../../../kernel/submissions.js';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { SqliteStore } from '../../../plugins/store-sqlite/sqlite-store.js';
import { SPEC_AGENT_SOURCE, specAgentsPlugin } from '../../helpers/agent-api-fixtures.js';
import { cliEnv, killed } from '../../helpers/cli-process.js';
import { WORKER_SCRIPT } from './fixtures/worker-script.js';

function Worker(): void {}
function Quick(): void {}
function Careful(): void {}
Quick.durability = { maxAttempts: 3, timeoutMs: 60_000 };

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'submission-child.js');
const LEASE_MS = 1500;
const ENV = { HOOKGATE_RUNTIME__LEASE_MS: String(LEASE_MS) };

/** Document 001 "Durability": a process that dies mid-submission is recovered by the next start() on the same store. */
describe('agent-api: recovery at start()', function () {
  this.timeout(60_000);
  let dir: string;
  let db: string;
  let record: string;
  let runtime: AgentRuntimeHandle | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-recovery-')));
    db = path.join(dir, 'run.db');
    record = path.join(dir, 'record.txt');
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  function startHere(): Promise<AgentRuntimeHandle> {
    return start({
      agents: [Worker, Quick, Careful],
      db: { sqlite: db },
      env: ENV,
      plugins: [
        specAgentsPlugin(
          {
            Worker: WORKER_SCRIPT,
            Quick: { turns: [{ text: 'quick' }], onEnd: 'repeat-last' },
            Careful: { turns: [{ toolCalls: [{ identifier: 'side', apiName: 'record', args: { line: 'approved' } }] }, { text: 'carefully done' }], tools: ['side/record'], approval: ['side/record'] },
          },
          record,
        ),
      ],
      agentSource: SPEC_AGENT_SOURCE,
    });
  }

  /** Writes with a store of its own, as a process that stopped would have left it. */
  async function leftByAnotherProcess(write: (store: SqliteStore) => Promise<void>): Promise<void> {
    const store = new SqliteStore({ path: db, backgroundCheckpoints: false });
    await store.migrate();
    try {
      await write(store);
    } finally {
      await store.close();
    }
  }

  async function admitted(store: SqliteStore, n: number, agentId = 'Quick'): Promise<void> {
    const result = await store.admitSubmission({
      submission: { id: `sub_${n}`, dispatchId: `dsp_${n}`, agentId, message: { kind: 'user', body: `m${n}` }, acceptedAt: new Date().toISOString() },
      thread: { id: agentThreadId(agentId, 'left'), agentId, instanceId: 'left', uid: 'inst_left' },
    });
    assert.equal(result.outcome, 'admitted');
  }

  async function settled(id: string): Promise<SubmissionRecord> {
    for (;;) {
      const found = await runtime!.kernel.store.getSubmission(id);
      if (found && ['completed', 'failed', 'aborted'].includes(found.status)) return found;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('starts the queued submissions a stopped process left, in admission order', async () => {
    await leftByAnotherProcess(async (store) => {
      await admitted(store, 1);
      await admitted(store, 2);
    });
    runtime = await startHere();
    const [first, second] = [await settled('sub_1'), await settled('sub_2')];
    assert.deepEqual([first.status, first.result?.text, first.attempts], ['completed', 'quick', 1]);
    assert.equal(second.status, 'completed');
    assert.ok(Date.parse(second.firstStartedAt!) >= Date.parse(first.settledAt!), 'the second ran after the first settled');
  });

  it('a submission that used up durability.maxAttempts is settled failed with SubmissionRetryExhaustedError, not run again', async () => {
    await leftByAnotherProcess(async (store) => {
      await admitted(store, 1);
      for (let i = 0; i < 3; i++) await store.beginSubmissionAttempt('sub_1');
    });
    runtime = await startHere();
    const final = await settled('sub_1');
    assert.deepEqual([final.status, final.error?.code, final.attempts], ['failed', 'SUBMISSION_RETRY_EXHAUSTED', 3]);
    assert.deepEqual(await runtime.kernel.store.listThreadOperations(agentThreadId('Quick', 'left')), [], 'no operation was started');
  });

  it('the deadline is checked before recovery: a submission past durability.timeoutMs is settled failed with SubmissionTimeoutError', async () => {
    await leftByAnotherProcess(async (store) => {
      await admitted(store, 1);
      await store.beginSubmissionAttempt('sub_1', new Date(Date.now() - 120_000).toISOString());
    });
    runtime = await startHere();
    const final = await settled('sub_1');
    assert.deepEqual([final.status, final.error?.code, final.error?.type], ['failed', 'SUBMISSION_TIMEOUT', 'submission_timeout']);
  });

  it('an abort requested before the crash is honoured at recovery: the submission settles aborted', async () => {
    await leftByAnotherProcess(async (store) => {
      await admitted(store, 1);
      await store.requestSubmissionAbort('sub_1');
    });
    runtime = await startHere();
    assert.equal((await settled('sub_1')).status, 'aborted');
  });

  it('a joined submission whose host settled before the crash takes the host outcome at recovery', async () => {
    await leftByAnotherProcess(async (store) => {
      await admitted(store, 1);
      await admitted(store, 2);
      await store.beginSubmissionAttempt('sub_1');
      await store.joinSubmission('sub_2', 'sub_1');
      await store.settleSubmission('sub_1', { status: 'completed', result: { text: 'coalesced' } });
    });
    runtime = await startHere();
    const joined = await settled('sub_2');
    assert.deepEqual([joined.status, joined.result?.text, joined.joinedInto], ['completed', 'coalesced', 'sub_1']);
  });

  it('a crash between the join commit and the joined mark: recovery finds the stored message and does not run the delivery again', async () => {
    await leftByAnotherProcess(async (store) => {
      await admitted(store, 1);
      await admitted(store, 2);
      await store.beginSubmissionAttempt('sub_1');
      const state = { stepIndex: 1, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 1, compactions: 0, lastText: 'host answer' };
      await store.createOperation({ id: 'op_host', agentId: 'Quick', threadId: agentThreadId('Quick', 'left'), agent: {}, context: {}, state }, [{ role: 'user', content: 'm1' }, { id: 'join_sub_2', role: 'user', content: 'm2' }, { role: 'assistant', content: 'host answer' }], []);
      await store.commitStep('op_host', { status: 'done', reason: 'done', state });
      await store.linkSubmissionOperation('sub_1', 'op_host');
    });
    runtime = await startHere();
    const [host, joined] = [await settled('sub_1'), await settled('sub_2')];
    assert.deepEqual([host.status, host.result?.text], ['completed', 'host answer']);
    assert.deepEqual([joined.status, joined.result?.text, joined.joinedInto, joined.attempts], ['completed', 'host answer', 'sub_1', 0]);
    assert.equal((await runtime.kernel.store.listThreadOperations(agentThreadId('Quick', 'left'))).length, 1, 'the joined delivery did not run again');
  });

  it('stop() with a send parked for approval: the send rejects, the submission stays running and settles once approved after a restart', async () => {
    runtime = await startHere();
    const pending = init(Careful, { id: 'c-1' }).dispatch('go').then(() => 'resolved', (e: unknown) => (e as { code?: string }).code);
    let parked: SubmissionRecord | undefined;
    while (!parked?.operationId || (await runtime.kernel.getOperation(parked.operationId))?.status !== 'waiting_approval') {
      await new Promise((r) => setTimeout(r, 25));
      [parked] = await runtime.kernel.store.listSubmissions({ threadId: agentThreadId('Careful', 'c-1') });
    }
    await runtime.stop();
    assert.equal(await pending, 'KERNEL_STOPPED');
    runtime = await startHere();
    assert.equal((await runtime.kernel.store.getSubmission(parked.id))?.status, 'running');
    await runtime.kernel.approve(parked.operationId);
    const final = await settled(parked.id);
    assert.deepEqual([final.status, final.result?.text], ['completed', 'carefully done']);
    assert.equal(await readFile(record, 'utf8'), 'approved\n');
  });

  it('SIGKILL mid-submission: the next start resumes it from its last commit (the completed tool is not run again) and runs the queued one', async () => {
    const child = spawn(process.execPath, [CHILD, db, record], { env: cliEnv(ENV), stdio: ['ignore', 'pipe', 'pipe'] });
    const { queued } = await untilKillPoint(child);
    await killed(child);
    assert.equal(await readFile(record, 'utf8'), 'one\n', 'the first tool ran before the kill');

    runtime = await startHere();
    const thread = agentThreadId('Worker', 'job');
    const all = await runtime.kernel.store.listSubmissions({ threadId: thread });
    assert.equal(all.length, 2, 'both admitted sends survived');
    const [first, second] = [await settled(all[0]!.id), await settled(queued)];
    assert.deepEqual([first.status, first.result?.text, first.attempts], ['completed', 'done', 2]);
    assert.deepEqual([second.status, second.result?.text, second.attempts], ['completed', 'second done', 1]);
    assert.equal(await readFile(record, 'utf8'), 'one\ntwo\n', 'each tool ran exactly once across both processes');
    const ops = await runtime.kernel.store.listThreadOperations(thread);
    assert.equal(ops.length, 2, 'the killed operation was resumed, not started again');
    assert.equal(ops[0]!.id, first.operationId);
    const toolMessages = (await runtime.kernel.store.listThreadMessages(thread)).filter((m) => m.role === 'tool');
    assert.equal(toolMessages.length, 2);
  });
});

/** Reads the child's NDJSON until the first tool result is committed (tool_finished) and the second send is queued. */
function untilKillPoint(child: ChildProcess): Promise<{ queued: string }> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    let queued: string | undefined;
    let toolDone = false;
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      buffer += d;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let event: { type?: string; submissionId?: string };
        try {
          event = JSON.parse(line) as typeof event;
        } catch {
          continue; // a log line
        }
        if (event.type === 'queued') queued = event.submissionId;
        if (event.type === 'tool-output') toolDone = true;
        if (queued !== undefined && toolDone) resolve({ queued });
      }
    });
    child.on('close', (code) => reject(new Error(`the child exited (${code}) before the kill point: ${stderr}`)));
  });
}
