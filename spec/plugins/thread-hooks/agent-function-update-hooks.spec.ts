import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { defineHook } from '../../../threads.js';

const rejections: string[] = [];
const updated: string[] = [];

/** An agent function whose hooks mark every stored answer as reviewed through updateMessage. */
function Reviewer(): string {
  useModel({ provider: 'scripted', turns: [{ text: 'the answer' }] } as never);
  return 'You answer.';
}
(Reviewer as Agent).threadHooks = [
  defineHook({
    hook: 'after_create_message',
    id: 'mark_reviewed',
    execute: async (state, message) => {
      if (message.role !== 'assistant') return;
      await state.updateMessage(message.id, { content: `${String(message.content)} (reviewed)` });
      try {
        await state.updateMessage(message.id, { content: 'FORBIDDEN rewrite' });
      } catch (err) {
        rejections.push((err as Error).message);
      }
    },
  }),
  defineHook({
    hook: 'before_update_message',
    id: 'refuse_forbidden',
    execute: (_state, _id, updates) => {
      if (String(updates.content).startsWith('FORBIDDEN')) throw new Error('forbidden rewrite');
      return { ...updates, content: `${String(updates.content)} ✓` };
    },
  }),
  defineHook({ hook: 'after_update_message', id: 'collect', execute: (_state, message) => void updated.push(String(message.content)) }),
];

/** before/after_update_message for agent functions of document 001 (issue 15), checked against the store. */
describe('thread hooks: message updates of agent functions', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle;

  beforeEach(async () => {
    rejections.length = 0;
    updated.length = 0;
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-update-hooks-')));
    runtime = await start({ agents: [Reviewer as Agent], env: {}, db: { sqlite: path.join(dir, 'db.sqlite') } });
  });
  afterEach(async () => {
    await runtime.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("the agent's hooks update its stored message through before/after_update_message; a prevented update rejects and stores nothing", async () => {
    await init(Reviewer as Agent, { id: 'rv-1' }).dispatch('question');
    const stored = await runtime.kernel.store.listThreadMessages(agentThreadId('Reviewer', 'rv-1'));
    assert.deepEqual(stored.map((m) => [m.role, m.content]), [['user', 'question'], ['assistant', 'the answer (reviewed) ✓']]);
    assert.deepEqual(updated, ['the answer (reviewed) ✓']);
    assert.deepEqual(rejections, ['forbidden rewrite']);
  });
});
