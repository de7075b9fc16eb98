import assert from 'node:assert/strict';
import { nativeIdOf, recordHooks, scripted, startKernel, toolTurn, until, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** Sub-agents as the tool `agents/<id>`: a child operation with parentOperationId (issue 3 item 1, callAgent). */
describe('runtime: sub-agents', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  async function run(childModel: Record<string, unknown>, options: { call?: string; subagents?: string[] } = {}) {
    fx.kernel.agents.define({ id: 'child', tools: ['test/*'], model: childModel });
    fx.kernel.agents.define({
      id: 'parent',
      subagents: options.subagents ?? ['child'],
      model: scripted([toolTurn('agents', options.call ?? 'child', { instruction: 'summarize the notes' }, 'call-sub'), { text: 'parent done' }], { provider: 'recorded' }),
    });
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'parent', prompt: 'go', hooks: rec.hooks, userId: 'u-1' });
    const final = await handle.completed();
    return { rec, final, handle };
  }

  it('the sub-agent is offered to the parent model as the tool agents/<id>', async () => {
    const { handle } = await run(scripted([{ text: 'child answer' }]));
    const first = fx.model.requests.find((r) => r.operationId === handle.operationId)!;
    assert.ok(first.toolNames.includes('agents/child'));
  });

  it('calling agents/child runs a child operation with parentOperationId and the instruction as its prompt', async () => {
    const { handle, final } = await run(scripted([{ text: 'child answer' }]));
    assert.equal(final.status, 'done');
    const children = await fx.kernel.listOperations({ parentOperationId: handle.operationId });
    assert.equal(children.length, 1);
    const child = children[0]!;
    assert.equal(child.agentId, 'child');
    assert.equal(child.parentOperationId, handle.operationId);
    assert.equal(child.status, 'done');
    assert.equal(child.userId, 'u-1');
    const childMessages = await fx.kernel.listMessages(child.id);
    assert.equal(childMessages[0]!.role, 'user');
    assert.equal(childMessages[0]!.content, 'summarize the notes');
  });

  it('the child\'s final text is the parent\'s tool result, which the parent model sees', async () => {
    const { handle } = await run(scripted([{ text: 'child answer' }]));
    const tool = (await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(nativeIdOf(await fx.kernel.listMessages(handle.operationId), tool?.toolCallId), 'call-sub');
    assert.equal(tool?.content, 'child answer');
    assert.equal(tool?.toolResult?.success, true);
    const second = fx.model.requests.filter((r) => r.operationId === handle.operationId)[1]!;
    assert.equal(second.messages.find((m) => m.role === 'tool')?.content, 'child answer');
  });

  it('callAgent events fire on the parent; the child reports its own steps and completion under its own id', async () => {
    const { rec, handle } = await run(scripted([toolTurn('test', 'echo', {}, 'child-call'), { text: 'child answer' }]));
    const child = (await fx.kernel.listOperations({ parentOperationId: handle.operationId }))[0]!;
    const parentSeq = rec.sequence(handle.operationId);
    // The call_agent step ends once the child started (its placeholder is stored); the child's answer is
    // published later into that placeholder, through result control, and only then observed.
    // A sub-agent call is a tool call: its beforeToolCall (the gate's mock stage) comes first.
    assert.deepEqual(parentSeq.slice(parentSeq.indexOf('beforeCallAgent') - 2), [
      'beforeStep',
      'beforeToolCall',
      'beforeCallAgent',
      'afterCallAgent',
      'afterStep',
      'afterToolCall',
      'beforeStep',
      'afterStep',
      'onComplete',
    ]);
    assert.equal(rec.of('beforeStep', handle.operationId).find((e) => e.stepType === 'call_agent')?.stepIndex, 1);
    assert.equal(rec.of('afterCallAgent', handle.operationId)[0]!.subOperationId, child.id);
    const childComplete = rec.of('onComplete', child.id);
    assert.equal(childComplete.length, 1);
    assert.equal(childComplete[0]!.parentOperationId, handle.operationId);
    assert.equal(childComplete[0]!.finalText, 'child answer');
    assert.equal(rec.of('beforeToolCall', child.id)[0]!.parentOperationId, handle.operationId);
    const parentAfterCall = rec.events.findIndex((e) => e.type === 'afterToolCall' && e.event.operationId === handle.operationId);
    const childDone = rec.events.findIndex((e) => e.type === 'onComplete' && e.event.operationId === child.id);
    assert.ok(childDone < parentAfterCall, 'the parent publishes the result after the child completed');
  });

  it('a failing child: onCallAgentError on the parent, an error tool result, and the parent goes on', async () => {
    const { rec, handle, final } = await run(scripted([{ error: 'child model broke' }]));
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'parent done');
    assert.equal(rec.of('onCallAgentError', handle.operationId).length, 1);
    assert.equal(rec.of('afterCallAgent', handle.operationId)[0]!.success, true, 'creation succeeded');
    const tool = (await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.toolResult?.success, false);
    assert.match(tool!.content, /child model broke/);
  });

  it('calling a sub-agent the parent does not declare is refused by the allow-list: the call fails, not the run, and no hook sees it', async () => {
    fx.kernel.agents.define({ id: 'stranger', model: scripted([{ text: 'should not run' }]) });
    const { rec, handle, final } = await run(scripted([{ text: 'unused' }]), { call: 'stranger' });
    assert.equal(final.status, 'done');
    assert.deepEqual(await fx.kernel.listOperations({ parentOperationId: handle.operationId }), []);
    for (const type of ['beforeToolCall', 'afterToolCall', 'beforeCallAgent', 'afterCallAgent', 'onCallAgentError'] as const) {
      assert.equal(rec.of(type, handle.operationId).length, 0, `${type} must not see a call outside the allow-list`);
    }
    const tool = (await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.toolResult?.error, 'tool_not_allowed');
    assert.match(tool!.content, /agents\/stranger/);
  });

  it('aborting the parent while the child runs interrupts both', async () => {
    // Ten minutes: a parent that waited for the child would hit mocha's timeout.
    fx.kernel.agents.define({ id: 'child', model: scripted([{ text: 'slow child', delayMs: 600_000 }]) });
    fx.kernel.agents.define({ id: 'parent', subagents: ['child'], model: scripted([toolTurn('agents', 'child', { instruction: 'wait' }), { text: 'done' }]) });
    const rec = recordHooks(['afterCallAgent']);
    const handle = await fx.kernel.execAgent({ agentId: 'parent', prompt: 'go', hooks: rec.hooks });
    await until(() => rec.of('afterCallAgent').length === 1);
    await fx.kernel.abort(handle.operationId);
    const final = await handle.completed();
    assert.equal(final.reason, 'interrupted');
    const child = await fx.kernel.waitForOperation(rec.of('afterCallAgent')[0]!.subOperationId);
    assert.equal(child.reason, 'interrupted');
    assert.equal(child.state.lastText, undefined, 'the slow child never answered');
  });
});
