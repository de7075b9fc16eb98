import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { SPEC_AGENT_SOURCE, specAgentsPlugin, type SpecAgentScript } from '../../helpers/agent-api-fixtures.js';

function Busy(): void {}
function Brief(): void {}

const SCRIPTS: Record<string, SpecAgentScript> = {
  // A response of two model turns: the first calls a tool (slowly), the second answers.
  Busy: { turns: [{ toolCalls: [{ identifier: 'side', apiName: 'record', args: { line: 'work' } }], delayMs: 300 }, { text: 'answered both' }], tools: ['side/record'] },
  // A response of one model turn: nothing comes after it to join.
  Brief: { turns: [{ text: 'first reply', delayMs: 300 }, { text: 'second reply' }] },
};

/** Document 001: "a dispatch to a busy instance joins the live response at the next turn boundary". */
describe('agent-api: joining the live response', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-join-')));
    runtime = await start({ agents: [Busy, Brief], env: {}, plugins: [specAgentsPlugin(SCRIPTS, path.join(dir, 'record.txt'))], agentSource: SPEC_AGENT_SOURCE });
  });
  afterEach(async () => {
    await runtime.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Resolves once the instance's first submission runs an operation. */
  async function running(identity: string, id: string): Promise<void> {
    for (;;) {
      const [first] = await runtime.kernel.store.listSubmissions({ threadId: agentThreadId(identity, id) });
      if (first?.operationId) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('a send while a response runs joins it at the next model turn and resolves with the coalesced reply', async () => {
    const first = init(Busy, { id: 'b-1' }).dispatch('first');
    await running('Busy', 'b-1');
    const second = await init(Busy, { id: 'b-1' }).dispatch('second');
    assert.equal(second.text, 'answered both');
    assert.equal((await first).text, 'answered both');
    const record = await runtime.kernel.store.getSubmission(second.submissionId);
    assert.deepEqual([record?.status, record?.joinedInto, record?.attempts], ['completed', (await first).submissionId, 0]);
    const thread = agentThreadId('Busy', 'b-1');
    assert.equal((await runtime.kernel.store.listThreadOperations(thread)).length, 1, 'one response answered both');
    const messages = await runtime.kernel.store.listThreadMessages(thread);
    assert.deepEqual(messages.map((m) => `${m.role}:${m.content}`), ['user:first', 'assistant:', 'tool:recorded work', 'user:second', 'assistant:answered both']);
  });

  it('a send that misses the live response (no model turn left) runs as its own submission after it', async () => {
    const first = init(Brief, { id: 'r-1' }).dispatch('first');
    await running('Brief', 'r-1');
    const second = await init(Brief, { id: 'r-1' }).dispatch('second');
    assert.equal((await first).text, 'first reply');
    assert.equal(second.text, 'second reply');
    const record = await runtime.kernel.store.getSubmission(second.submissionId);
    assert.deepEqual([record?.status, record?.joinedInto, record?.attempts], ['completed', undefined, 1]);
    assert.equal((await runtime.kernel.store.listThreadOperations(agentThreadId('Brief', 'r-1'))).length, 2);
  });
});
