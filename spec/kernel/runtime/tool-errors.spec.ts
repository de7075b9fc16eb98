import assert from 'node:assert/strict';
import { nativeIdOf, recordHooks, scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** A tool that throws gives onToolCallError and a result the model sees; the run goes on (issue 3 item 9). */
describe('runtime: tool errors', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  async function run(turns: unknown[], tools = ['test/*']) {
    fx.kernel.agents.define({ id: 'a', tools, model: scripted(turns, { provider: 'recorded' }) });
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'a', prompt: 'go', hooks: rec.hooks });
    const final = await handle.completed();
    const turnRequests = fx.model.requests.filter((r) => r.operationId === handle.operationId && r.purpose === 'turn');
    return { rec, final, handle, turnRequests };
  }

  it('a throwing tool fires onToolCallError, then afterToolCall with the error result', async () => {
    const { rec } = await run([toolTurn('test', 'boom', { message: 'disk on fire' }, 'c1'), { text: 'recovered' }]);
    const seq = rec.sequence().filter((t) => t.endsWith('ToolCall') || t === 'onToolCallError');
    assert.deepEqual(seq, ['beforeToolCall', 'onToolCallError', 'afterToolCall']);
    assert.equal(rec.of('onToolCallError')[0]!.error, 'disk on fire');
    const after = rec.of('afterToolCall')[0]!;
    assert.equal(after.result.success, false);
    assert.equal(after.result.error, 'tool_error');
    assert.match(after.result.content, /disk on fire/);
    assert.equal(after.mocked, false);
  });

  it('the model sees the error as the tool result in its next turn, and the run completes', async () => {
    const { final, turnRequests } = await run([toolTurn('test', 'boom', { message: 'disk on fire' }, 'c1'), { text: 'recovered' }]);
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'recovered');
    assert.equal(turnRequests.length, 2);
    const toolMessage = turnRequests[1]!.messages.find((m) => m.role === 'tool');
    assert.equal(nativeIdOf(turnRequests[1]!.messages, toolMessage?.toolCallId), 'c1');
    assert.match(toolMessage!.content, /disk on fire/);
  });

  it('the error result is stored with the conversation', async () => {
    const { handle } = await run([toolTurn('test', 'boom', { message: 'disk on fire' }, 'c1'), { text: 'recovered' }]);
    const messages = await fx.kernel.listMessages(handle.operationId);
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
    assert.equal(messages[2]!.toolResult?.error, 'tool_error');
  });

  it('a failed call does not stop the next call of the same turn', async () => {
    const { rec, final } = await run([
      { toolCalls: [{ id: 'c1', identifier: 'test', apiName: 'boom', args: {} }, { id: 'c2', identifier: 'test', apiName: 'echo', args: { ok: true } }] },
      { text: 'done' },
    ]);
    assert.equal(final.status, 'done');
    assert.deepEqual(rec.of('afterToolCall').map((e) => [e.nativeToolCallId, e.result.success]), [['c1', false], ['c2', true]]);
    assert.equal(fx.tools.calls.length, 2);
  });

  it('a tool the agent may not use is not executed and no hook sees the call; the model is told tool_not_allowed', async () => {
    const { rec, final, turnRequests } = await run([toolTurn('other', 'echo', {}, 'c1'), { text: 'ok' }], ['test/*']);
    assert.equal(final.status, 'done');
    assert.equal(fx.tools.calls.length, 0);
    assert.equal(rec.of('beforeToolCall').length, 0);
    assert.equal(rec.of('afterToolCall').length, 0);
    const tool = turnRequests[1]!.messages.find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.error, 'tool_not_allowed');
    assert.match(tool.content, /not available/);
    assert.deepEqual(turnRequests[0]!.toolNames.sort(), ['test/boom', 'test/echo']);
  });
});
