import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { settledSubmission as settled, untilHanging } from './agent-api-fixtures.js';
import { cliEnv, killed } from '../../helpers/cli-process.js';
import { HarnessShop } from './fixtures/harness-crash-agent.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'harness-crash-child.js');
const LEASE = { HOOKGATE_RUNTIME__LEASE_MS: '1500' };

/** Document 001's durability for harness prompts: a durable harness tool run again after a SIGKILL continues its prompt's conversation. */
describe('agent-api: a harness prompt across a SIGKILL', function () {
  this.timeout(60_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  const saved = process.env.SPEC_HARNESS_COUNT;
  const extras = ['SPEC_HARNESS_RESULT', 'SPEC_HARNESS_TEXT'];
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-harness-crash-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    if (saved === undefined) delete process.env.SPEC_HARNESS_COUNT;
    else process.env.SPEC_HARNESS_COUNT = saved;
    for (const name of extras) delete process.env[name];
    await rm(dir, { recursive: true, force: true });
  });

  async function crashThenRestart(hang: 'tool' | 'after', env: Record<string, string> = {}, parentEnv: Record<string, string> = env) {
    const db = path.join(dir, 'shop.db');
    const count = path.join(dir, 'count.txt');
    const child = spawn(process.execPath, [CHILD, db], { env: cliEnv({ ...LEASE, SPEC_HARNESS_HANG: hang, SPEC_HARNESS_COUNT: count, ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
    await untilHanging(child);
    const childPid = child.pid!;
    await killed(child);
    process.env.SPEC_HARNESS_COUNT = count;
    Object.assign(process.env, parentEnv);
    runtime = await start({ agents: [HarnessShop], db: { sqlite: db }, env: LEASE });
    const [submission] = await runtime.kernel.store.listSubmissions({ threadId: 'agent:HarnessShop:order-7' });
    assert.ok(submission !== undefined, 'the send was not admitted before the kill');
    const final = await settled(runtime, submission.id);
    const agentOp = (await runtime.kernel.store.getOperation(final.operationId!))!;
    const prompts = (await runtime.kernel.store.listOperations({ parentOperationId: agentOp.id })).filter((o) => o.agentId.startsWith('HarnessShop.harness.'));
    const toolMessage = (await runtime.kernel.listMessages(agentOp.id)).filter((m) => m.role === 'tool');
    return { final, prompts, toolMessage, childPid, count: await readFile(count, 'utf8') };
  }

  it('killed inside a prompt tool: the restarted runtime re-runs the durable tool, whose prompt resumes the same operation (not a new prompt) and finishes it', async () => {
    const { final, prompts, toolMessage, count } = await crashThenRestart('tool');
    assert.deepEqual([final.status, final.result?.text, final.attempts], ['completed', 'triaged', 2]);
    assert.equal(prompts.length, 1, 'one prompt operation: the orphan was continued, not replaced');
    const [prompt] = prompts;
    assert.deepEqual([prompt!.status, prompt!.reason], ['done', 'done']);
    const convo = (await runtime!.kernel.listMessages(prompt!.id)).map((m) => `${m.role}: ${m.role === 'assistant' && m.toolCalls?.length ? `calls ${m.toolCalls[0]!.apiName}` : m.content}`);
    assert.deepEqual(convo, ['user: Check order 7', 'assistant: calls lookup', 'tool: "order 7: paid"', `assistant: order 7 is paid (${process.pid})`]);
    assert.equal(count, 'L\nL\n', 'the interrupted lookup ran again (at least once), in the killed child and after the restart');
    assert.equal(toolMessage.length, 1);
    assert.equal(toolMessage[0]!.content, JSON.stringify(`order 7 is paid (${process.pid})`), 'the tool returned the resumed prompt\'s answer, given in this process');
  });

  it('killed after the prompt ended: the re-run tool gets the ended prompt\'s answer without asking the model again', async () => {
    const { final, prompts, toolMessage, childPid, count } = await crashThenRestart('after');
    assert.deepEqual([final.status, final.result?.text], ['completed', 'triaged']);
    assert.equal(prompts.length, 1);
    assert.equal(count, 'L\n', 'the prompt tool ran once, in the child');
    const users = (await runtime!.kernel.listMessages(prompts[0]!.id)).filter((m) => m.role === 'user');
    assert.equal(users.length, 1);
    assert.equal(toolMessage[0]!.content, JSON.stringify(`order 7 is paid (${childPid})`), "the answer the killed child's model gave");
  });

  it("with a result schema: killed after the prompt ended, the re-run tool gets the data of the finish call the killed child's operation accepted", async () => {
    const { final, prompts, toolMessage, childPid } = await crashThenRestart('after', { SPEC_HARNESS_RESULT: '1' });
    assert.deepEqual([final.status, final.result?.text], ['completed', 'triaged']);
    assert.equal(prompts.length, 1);
    assert.deepEqual(JSON.parse(toolMessage[0]!.content), { paid: true, pid: childPid });
  });

  it('a re-run tool that prompts differently than before the kill is told so (HarnessPromptError as its tool error); no second prompt operation', async () => {
    const { final, prompts, toolMessage } = await crashThenRestart('tool', {}, { SPEC_HARNESS_TEXT: 'Check order 8' });
    assert.equal(final.status, 'completed');
    assert.equal(prompts.length, 1);
    assert.equal(toolMessage[0]!.toolResult?.success, false);
    assert.match(toolMessage[0]!.content, /harness call 1 of this tool call was "Check order 7" before the restart and is "Check order 8" now/);
  });
});
