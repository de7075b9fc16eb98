import assert from 'node:assert/strict';
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import { recordHooks, scripted, startKernel, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** kernel.execAgent: starting an operation and awaiting it (issue 3 item 1). */
describe('runtime: execAgent', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  it('resolves once the operation is persisted, before it runs: status running, the prompt stored', async () => {
    fx.kernel.agents.define({ id: 'slow', model: scripted([{ text: 'done', delayMs: 50 }]) });
    const handle = await fx.kernel.execAgent({ agentId: 'slow', prompt: 'the prompt', userId: 'u-7', context: { topicId: 't-1' } });
    const stored = await fx.kernel.getOperation(handle.operationId);
    assert.equal(stored?.status, 'running');
    assert.equal(stored?.agentId, 'slow');
    assert.equal(stored?.userId, 'u-7');
    assert.deepEqual(stored?.context, { topicId: 't-1' });
    const messages = await fx.kernel.listMessages(handle.operationId);
    assert.deepEqual(messages.map((m) => [m.role, m.content]), [['user', 'the prompt']]);
    assert.equal((await handle.completed()).status, 'done');
  });

  it('an unknown agent id is rejected with AGENT_NOT_FOUND and nothing is stored or dispatched', async () => {
    const rec = recordHooks();
    await assert.rejects(fx.kernel.execAgent({ agentId: 'ghost', prompt: 'hi', hooks: rec.hooks }), { code: 'AGENT_NOT_FOUND' });
    assert.deepEqual(await fx.kernel.listOperations(), []);
    assert.deepEqual(rec.events, []);
  });

  it('runs an inline agent definition without defining it', async () => {
    const handle = await fx.kernel.execAgent({ agent: { id: 'inline', model: { provider: 'scripted', turns: [{ text: 'inline answer' }] } } as AgentDefinition, prompt: 'hi' });
    const final = await handle.completed();
    assert.equal(final.agentId, 'inline');
    assert.equal(final.state.lastText, 'inline answer');
    assert.equal(fx.kernel.agents.has('inline'), false);
  });

  it('an invalid inline agent definition is rejected with AGENT_INVALID and nothing is stored', async () => {
    const bad = { id: 'inline', model: { provider: 'scripted' }, limits: { maxSteps: 0 } } as unknown as AgentDefinition;
    await assert.rejects(fx.kernel.execAgent({ agent: bad, prompt: 'hi' }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'AGENT_INVALID');
      assert.match(err.message, /limits\.maxSteps/);
      return true;
    });
    assert.deepEqual(await fx.kernel.listOperations(), []);
  });

  it('the operation runs with the agent definition as it was at start, even if the agent is redefined', async () => {
    fx.kernel.agents.define({ id: 'a', model: scripted([{ text: 'first version', delayMs: 30 }]) });
    const handle = await fx.kernel.execAgent({ agentId: 'a', prompt: 'hi' });
    fx.kernel.agents.define({ id: 'a', model: scripted([{ text: 'second version' }]) });
    assert.equal((await handle.completed()).state.lastText, 'first version');
  });
});
