import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { killed, readStore, runHookgate, runUntil } from '../helpers/cli-process.js';

const hookgate = runHookgate;


const SLOW_AGENT = `id: slow
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: first.txt, content: one } } ]
    - text: all done after a pause
      delayMs: 1500
tools: [fs/*]
`;

const CAREFUL_AGENT = `id: careful
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: note.txt, content: approved } } ]
    - text: written
tools: [fs/*]
approval: { tools: [fs/writeFile] }
`;

/** Issue 9, items 11 and 12: work is never lost or duplicated when processes die or race. */
describe('hookgate resume / abort / concurrent approve', function () {
  this.timeout(90_000);
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-recovery-')));
    await writeFile(path.join(dir, 'slow.yaml'), SLOW_AGENT);
    await writeFile(path.join(dir, 'careful.yaml'), CAREFUL_AGENT);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** A run SIGKILLed during its second model turn, after the write was committed. */
  async function crashedRun(): Promise<string> {
    const { child, operationId } = await runUntil(dir, ['slow.yaml'], (e) => e.type === 'step_started' && e.stepIndex === 2);
    await killed(child);
    const op = await readStore(dir, (s) => s.getOperation(operationId));
    assert.equal(op?.status, 'running', 'a killed process leaves its operation running');
    return operationId;
  }

  it('after a SIGKILL mid-run, approve points at resume/abort, resume (with --force while the dead process\'s lease is unexpired) finishes the run from its last step', async () => {
    const operationId = await crashedRun();
    const approve = await hookgate(dir, ['approve', operationId]);
    assert.equal(approve.code, 2);
    assert.match(approve.stderr, /hookgate resume/);

    const fresh = await hookgate(dir, ['resume', operationId]);
    assert.equal(fresh.code, 2, 'an operation whose lease is unexpired may still be running elsewhere');
    assert.match(fresh.stderr, /being run by another process \(.+, lease until .+\).*--force/);

    const resumed = await hookgate(dir, ['resume', operationId, '--force']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /done/);
    const { op, messages } = await readStore(dir, async (s) => ({ op: await s.getOperation(operationId), messages: await s.listMessages(operationId) }));
    assert.equal(op?.status, 'done');
    assert.equal(op?.state.lastText, 'all done after a pause');
    assert.equal(messages.filter((m) => m.role === 'tool').length, 1, 'the committed write is not run again');
    assert.equal(await readFile(path.join(dir, '.hookgate', 'sandbox', 'first.txt'), 'utf8'), 'one');

    const again = await hookgate(dir, ['resume', operationId, '--force']);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /is done; only a running operation/);
  });

  it('after a SIGKILL mid-run, abort ends it as interrupted; a second abort says it already finished', async () => {
    const operationId = await crashedRun();
    const aborted = await hookgate(dir, ['abort', operationId]);
    assert.equal(aborted.code, 0, aborted.stderr);
    const op = await readStore(dir, (s) => s.getOperation(operationId));
    assert.equal(op?.status, 'interrupted');
    const twice = await hookgate(dir, ['abort', operationId]);
    assert.equal(twice.code, 0);
    assert.match(twice.stdout, /already finished \(interrupted\)/);
    assert.equal((await hookgate(dir, ['abort', 'op_nope'])).code, 2);
  });

  for (const attempt of [1, 2, 3]) {
    it(`two approve processes on one parked operation: exactly one decision wins, the tool runs once (try ${attempt})`, async () => {
      const parked = await hookgate(dir, ['run', 'careful.yaml', '--json']);
      assert.equal(parked.code, 3, `a parked run exits 3: ${parked.stderr}`);
      const operationId = String(parked.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; operationId?: string }).find((e) => e.type === 'operation_started')!.operationId);
      const [a, b] = await Promise.all([hookgate(dir, ['approve', operationId, '--json']), hookgate(dir, ['approve', operationId, '--json'])]);
      assert.deepEqual([a.code, b.code].sort(), [0, 2], `exit codes ${a.code}/${b.code}: ${a.stderr}${b.stderr}`);
      const loser = a.code === 2 ? a : b;
      assert.match(loser.stderr, /another process|not waiting for approval/);
      const { op, messages, steps } = await readStore(dir, async (s) => ({
        op: await s.getOperation(operationId),
        messages: await s.listMessages(operationId),
        steps: await s.listSteps(operationId),
      }));
      assert.equal(op?.status, 'done');
      assert.equal(messages.filter((m) => m.role === 'tool').length, 1, 'one tool message for one call');
      const indexes = steps.map((s) => s.stepIndex);
      assert.equal(new Set(indexes).size, indexes.length, `no step index twice: ${indexes.join(',')}`);
    });
  }
});
