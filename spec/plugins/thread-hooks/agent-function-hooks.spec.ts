import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { defineHook, type HookExecutionContext } from '../../../threads.js';

const seen: Array<[string, HookExecutionContext['source']]> = [];

/** An agent function with thread hooks as a static: they run on every thread of the agent. */
function Redactor(): string {
  useModel({ provider: 'scripted', turns: [{ text: 'your number is 123-45-6789' }] } as never);
  return 'You repeat numbers.';
}
(Redactor as Agent).threadHooks = [
  defineHook({
    hook: 'before_create_message',
    id: 'sanitize_pii',
    execute: (_state, message, context) => {
      seen.push(['sanitize_pii', context.source]);
      return { ...message, content: String(message.content).replace(/\b\d{3}-\d{2}-\d{4}\b/g, '***-**-****') };
    },
  }),
];

/** One whose hooks prevent every user message. */
function Closed(): string {
  useModel({ provider: 'scripted', turns: [{ text: 'never' }] } as never);
  return 'closed';
}
(Closed as Agent).threadHooks = [defineHook({ hook: 'before_create_message', id: 'refuse_users', execute: (_s, m) => { if (m.role === 'user') throw new Error('closed for users'); } })];

/** Thread hooks for agent functions of document 001 (issue 15 item 4), checked against the store. */
describe('thread hooks: agent functions', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle;

  beforeEach(async () => {
    seen.length = 0;
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-thread-hooks-')));
    runtime = await start({ agents: [Redactor as Agent, Closed as Agent], env: {}, db: { sqlite: path.join(dir, 'db.sqlite') } });
  });
  afterEach(async () => {
    await runtime.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('the static threadHooks run for every message the instance stores (source agent, named by the identity); the reply is the stored message', async () => {
    const reply = await init(Redactor as Agent, { id: 'r-1' }).dispatch('my number is 987-65-4321');
    assert.equal(reply.text, 'your number is ***-**-****');
    const stored = await runtime.kernel.store.listThreadMessages(agentThreadId('Redactor', 'r-1'));
    assert.deepEqual(stored.map((m) => [m.role, m.content]), [['user', 'my number is ***-**-****'], ['assistant', 'your number is ***-**-****']]);
    assert.ok(seen.length >= 2);
    assert.ok(seen.every(([, source]) => source.kind === 'agent' && source.name === 'Redactor'));
  });

  it('a prevented sent message stores nothing and the submission fails (message_hook_error)', async () => {
    await assert.rejects(init(Closed as Agent, { id: 'c-1' }).dispatch('hello'));
    const stored = await runtime.kernel.store.listThreadMessages(agentThreadId('Closed', 'c-1'));
    assert.deepEqual(stored.filter((m) => m.role === 'user'), []);
    const [operation] = await runtime.kernel.store.listThreadOperations(agentThreadId('Closed', 'c-1'));
    assert.equal(operation?.reason, 'message_hook_error');
    assert.equal(operation?.status, 'error');
  });
});
