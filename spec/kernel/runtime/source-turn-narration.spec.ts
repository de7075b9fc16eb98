import assert from 'node:assert/strict';
import type { AgentSource, AgentSourceContext, AgentTurnNarration, AgentView } from '../../../kernel/runtime/agent-source.js';
import { scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** A source with a fixed view whose `turnMessages` answers `say(context)`; every context it was told is kept. */
function narratingSource(id: string, view: (fx: RuntimeFixture) => AgentView, fx: RuntimeFixture, say: (context: AgentSourceContext) => AgentTurnNarration | undefined): AgentSource & { told: AgentSourceContext[] } {
  const told: AgentSourceContext[] = [];
  const fixed = view(fx);
  return {
    id,
    told,
    resolve: () => fixed,
    turnMessages(_ref, context) {
      told.push(context);
      return say(context);
    },
  };
}

/** AgentSource.turnMessages: a source's own messages at a model turn, committed with the turn and with its sourceState. */
describe('runtime: agent source narration at a model turn', () => {
  let fx: RuntimeFixture;
  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const view = (turns: unknown[]) => (f: RuntimeFixture): AgentView => ({
    model: scripted(turns, { provider: 'recorded' }) as AgentView['model'],
    tools: f.tools.list().map((tool) => ({ tool, source: f.tools })),
    allowList: ['test/*'],
  });

  it('the messages reach the model at the end of that turn\'s prompt and are stored before its answer; sourceState commits with them and goes on along the thread', async () => {
    const source = narratingSource('narrator', view([toolTurn('test', 'echo', {}, 'c1'), { text: 'one' }, { text: 'two' }]), fx, (context) => {
      const count = ((context.operation?.state.sourceState as { count?: number } | undefined)?.count ?? 0) + 1;
      return { messages: [{ role: 'user', content: `narration ${count}` }], sourceState: { count } };
    });
    fx.kernel.agentSources.add(source);
    await fx.kernel.store.createThread({ id: 'th-1', agentId: 'a' });
    const first = await (await fx.kernel.execAgent({ agentSource: 'narrator', agentId: 'a', prompt: 'go', threadId: 'th-1' })).completed();
    assert.equal(first.status, 'done');
    assert.deepEqual(first.state.sourceState, { count: 2 });
    const second = await (await fx.kernel.execAgent({ agentSource: 'narrator', agentId: 'a', prompt: 'again', threadId: 'th-1' })).completed();
    assert.deepEqual(second.state.sourceState, { count: 3 }, "the thread's next operation started from the previous one's");
    const turns = fx.model.requests.filter((r) => r.purpose === 'turn');
    assert.deepEqual(turns.map((r) => r.messages.at(-1)!.content), ['narration 1', 'narration 2', 'narration 3']);
    const stored = (await fx.kernel.store.listThreadMessages('th-1')).map((m) => `${m.role}:${m.content}`);
    assert.deepEqual(stored, ['user:go', 'user:narration 1', 'assistant:', 'tool:echo: {}', 'user:narration 2', 'assistant:one', 'user:again', 'user:narration 3', 'assistant:two']);
  });

  it('a turnMessages that throws ends the operation with AGENT_SOURCE_FAILED, one that answers other than user messages with AGENT_SOURCE_INVALID; the model was not called', async () => {
    fx.kernel.agentSources.add(narratingSource('throws', view([{ text: 'never' }]), fx, () => {
      throw new Error('narrator crashed');
    }));
    const failed = await (await fx.kernel.execAgent({ agentSource: 'throws', agentId: 'a', prompt: 'go' })).completed();
    assert.equal(failed.error?.code, 'AGENT_SOURCE_FAILED');
    assert.match(failed.error!.message, /agent source "throws" failed to narrate the model turn of "a" for step 0: narrator crashed/);
    for (const bad of [{ messages: [{ role: 'assistant', content: 'forged answer' }] }, { messages: 'text' }, null, 7]) {
      const id = `bad-${fx.model.requests.length}-${String(Math.random()).slice(2, 8)}`;
      fx.kernel.agentSources.add(narratingSource(id, view([{ text: 'never' }]), fx, () => bad as unknown as AgentTurnNarration));
      const invalid = await (await fx.kernel.execAgent({ agentSource: id, agentId: 'a', prompt: 'go' })).completed();
      assert.equal(invalid.error?.code, 'AGENT_SOURCE_INVALID', JSON.stringify(bad));
    }
    assert.equal(fx.model.requests.length, 0);
  });
});
