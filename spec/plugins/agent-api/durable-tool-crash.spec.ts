import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { settledSubmission as settled, untilHanging } from './agent-api-fixtures.js';
import { cliEnv, killed } from '../../helpers/cli-process.js';
import { DurableShop } from './fixtures/durable-tool-agent.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'durable-tool-child.js');
const LEASE = { HOOKGATE_RUNTIME__LEASE_MS: '1500' };

/** A durable tool survives a SIGKILL between two steps: the recorded step replays, the other runs, each fn ran once. */
describe('agent-api: a durable tool across a SIGKILL', function () {
  this.timeout(60_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  const saved = process.env.SPEC_DURABLE_COUNT;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-durable-crash-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    if (saved === undefined) delete process.env.SPEC_DURABLE_COUNT;
    else process.env.SPEC_DURABLE_COUNT = saved;
    await rm(dir, { recursive: true, force: true });
  });

  it('a restarted runtime resumes the submission: step A returns its recorded value without running again, step B runs, the tool returns both', async () => {
    const db = path.join(dir, 'shop.db');
    const count = path.join(dir, 'count.txt');
    const child = spawn(process.execPath, [CHILD, db], { env: cliEnv({ ...LEASE, SPEC_DURABLE_HANG: '1', SPEC_DURABLE_COUNT: count }), stdio: ['ignore', 'pipe', 'pipe'] });
    await untilHanging(child);
    const childPid = child.pid;
    await killed(child);
    assert.equal(await readFile(count, 'utf8'), 'A\n', 'the child ran step A and was killed before step B');

    process.env.SPEC_DURABLE_COUNT = count;
    runtime = await start({ agents: [DurableShop], db: { sqlite: db }, env: LEASE });
    const [submission] = await runtime.kernel.store.listSubmissions({ threadId: 'agent:DurableShop:order-7' });
    assert.ok(submission !== undefined, 'the send was not admitted before the kill');
    const final = await settled(runtime, submission.id);
    assert.deepEqual([final.status, final.result?.text, final.attempts], ['completed', 'shipped', 2]);
    assert.equal(await readFile(count, 'utf8'), 'A\nB\n', "A's fn ran once (in the killed child), B's once (after the restart)");

    const messages = await runtime.kernel.listMessages(final.operationId!);
    const tools = messages.filter((m) => m.role === 'tool');
    assert.equal(tools.length, 1, 'one result for the one call');
    const result = JSON.parse(tools[0]!.content) as { a: { pid: number }; b: { pid: number } };
    assert.deepEqual(result, { a: { charge: 'ch_1', pid: childPid }, b: { shipment: 'sh_1', pid: process.pid } }, "A's value is the one the killed child recorded");
    const steps = await runtime.kernel.store.listToolSteps(final.operationId!, tools[0]!.toolCallId!);
    assert.deepEqual(steps.map((s) => s.name), ['A:charge', 'B:ship']);
  });

  it('a tool that is not durable is not run again: the resumed call is a tool error saying its outcome is unknown, and the response goes on', async () => {
    const db = path.join(dir, 'plain.db');
    const count = path.join(dir, 'count.txt');
    const child = spawn(process.execPath, [CHILD, db], { env: cliEnv({ ...LEASE, SPEC_DURABLE_HANG: '1', SPEC_DURABLE_COUNT: count, SPEC_DURABLE_TOOL: 'ship_plain' }), stdio: ['ignore', 'pipe', 'pipe'] });
    await untilHanging(child);
    await killed(child);

    process.env.SPEC_DURABLE_COUNT = count;
    runtime = await start({ agents: [DurableShop], db: { sqlite: db }, env: LEASE });
    const [submission] = await runtime.kernel.store.listSubmissions({ threadId: 'agent:DurableShop:order-7' });
    const final = await settled(runtime, submission!.id);
    assert.deepEqual([final.status, final.result?.text, final.attempts], ['completed', 'shipped', 2]);
    assert.equal(await readFile(count, 'utf8'), 'P\n', 'run once, in the killed child');
    const [tool] = (await runtime.kernel.listMessages(final.operationId!)).filter((m) => m.role === 'tool');
    assert.equal(tool!.toolResult?.success, false);
    assert.match(tool!.content, /The call of tool "ship_plain" was interrupted before its result was recorded, so its outcome is unknown; it was not run again/);
  });
});

