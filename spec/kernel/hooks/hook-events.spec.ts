import assert from 'node:assert/strict';
import { recordHooks, scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every one of the 16 hook types fires with the payload fields document 000's Events table lists. */
describe('hook events: payloads of the 16 hook types', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  /** One tool call, then a final answer; fixed usage per turn. */
  async function toolRun(extra: { userId?: string; origin?: { userId?: string }; context?: Record<string, string> } = {}) {
    fx.kernel.agents.define({
      id: 'worker',
      tools: ['test/*'],
      model: scripted([
        { ...toolTurn('test', 'echo', { a: 1 }, 'call-1'), usage: { promptTokens: 10, completionTokens: 5 } },
        { text: 'all done', usage: { promptTokens: 20, completionTokens: 7 } },
      ]),
    });
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'worker', prompt: 'go', hooks: rec.hooks, ...extra });
    const final = await handle.completed();
    return { rec, handle, final };
  }

  it('beforeStep carries operationId, agentId, stepIndex, timestamp and the step type, once per step', async () => {
    const { rec, handle } = await toolRun();
    const events = rec.of('beforeStep');
    assert.deepEqual(events.map((e) => [e.stepIndex, e.stepType]), [[0, 'call_llm'], [1, 'call_tool'], [2, 'call_llm']]);
    for (const e of events) {
      assert.equal(e.operationId, handle.operationId);
      assert.equal(e.agentId, 'worker');
      assert.match(e.timestamp, ISO);
    }
  });

  it('afterStep carries the step content, tool calls, tool results, the step usage and the running totals', async () => {
    const { rec, handle } = await toolRun();
    const [llm, tool, last] = rec.of('afterStep');
    assert.equal(llm!.operationId, handle.operationId);
    assert.equal(llm!.stepIndex, 0);
    assert.equal(llm!.stepType, 'call_llm');
    // The runtime mints each call's identity; the model's id is kept as nativeId (issue 9, item 1).
    assert.equal(llm!.toolCalls!.length, 1);
    const [call] = llm!.toolCalls!;
    assert.match(call!.id, /^call_[0-9a-f]{32}$/);
    assert.deepEqual({ ...call, id: undefined }, { id: undefined, nativeId: 'call-1', identifier: 'test', apiName: 'echo', args: { a: 1 } });
    assert.deepEqual(llm!.usage, { promptTokens: 10, completionTokens: 5, totalTokens: 15, cost: 0 });
    assert.equal(llm!.totalUsage.totalTokens, 15);

    assert.equal(tool!.stepType, 'call_tool');
    assert.equal(tool!.toolResults!.length, 1);
    assert.equal(tool!.toolResults![0]!.toolCallId, call!.id);
    assert.equal(tool!.toolResults![0]!.result.content, 'echo: {"a":1}');
    assert.equal(tool!.usage.totalTokens, 0);
    assert.equal(tool!.totalUsage.totalTokens, 15);

    assert.equal(last!.content, 'all done');
    assert.deepEqual(last!.usage, { promptTokens: 20, completionTokens: 7, totalTokens: 27, cost: 0 });
    assert.equal(last!.totalUsage.totalTokens, 42);
    assert.match(last!.timestamp, ISO);
  });

  it('onComplete carries reason, status, totals, final text and (in process) the final state', async () => {
    const { rec, handle, final } = await toolRun();
    const [done] = rec.of('onComplete');
    assert.equal(rec.of('onComplete').length, 1);
    assert.equal(done!.operationId, handle.operationId);
    assert.equal(done!.agentId, 'worker');
    assert.equal(done!.reason, 'done');
    assert.equal(done!.status, 'done');
    assert.equal(done!.stepCount, 3);
    assert.equal(done!.finalText, 'all done');
    assert.equal(done!.totalUsage.totalTokens, 42);
    const state = done!.finalState as { id: string; status: string; reason: string };
    assert.equal(state.id, handle.operationId);
    assert.equal(state.status, 'done');
    assert.equal(state.reason, 'done');
    assert.equal(final.status, 'done');
  });

  it('onError carries errorMessage, an error code and the operation identity', async () => {
    fx.kernel.agents.define({ id: 'broken', model: scripted([{ error: 'the model is on fire' }]) });
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'broken', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    const [err] = rec.of('onError');
    assert.equal(rec.of('onError').length, 1);
    assert.equal(err!.operationId, handle.operationId);
    assert.equal(err!.agentId, 'broken');
    assert.equal(err!.stepIndex, 0);
    assert.match(err!.errorMessage, /the model is on fire/);
    assert.equal(err!.errorCode, 'MODEL_FAILED');
    assert.match(err!.timestamp, ISO);
    assert.deepEqual(rec.sequence().slice(-2), ['onError', 'onComplete']);
  });

  it('beforeToolCall carries every required Tool Context field', async () => {
    const { rec, handle } = await toolRun();
    const [before] = rec.of('beforeToolCall');
    const assistant = (await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'assistant' && m.toolCalls?.length);
    assert.ok(assistant);
    assert.match(before!.toolCallId, /^call_[0-9a-f]{32}$/);
    assert.equal(before!.nativeToolCallId, 'call-1');
    assert.equal(before!.assistantMessageId, assistant.id);
    assert.equal(before!.identifier, 'test');
    assert.equal(before!.apiName, 'echo');
    assert.deepEqual(before!.args, { a: 1 });
    assert.equal(before!.callIndex, 0);
    assert.equal(before!.stepIndex, 1);
    assert.equal(before!.operationId, handle.operationId);
    assert.equal(before!.executor, 'server');
    assert.equal(before!.toolSource, 'test-source');
    assert.equal(before!.agentId, 'worker');
  });

  it('tool events carry userId = runtime.userId ?? origin.userId', async () => {
    const both = await toolRun({ userId: 'u-runtime', origin: { userId: 'u-origin' } });
    assert.equal(both.rec.of('beforeToolCall')[0]!.userId, 'u-runtime');
    assert.equal(both.rec.of('afterToolCall')[0]!.userId, 'u-runtime');
    const originOnly = await toolRun({ origin: { userId: 'u-origin' } });
    assert.equal(originOnly.rec.of('beforeToolCall')[0]!.userId, 'u-origin');
    const none = await toolRun();
    assert.equal('userId' in none.rec.of('beforeToolCall')[0]!, false);
  });

  it('tool events carry the run context associations given to execAgent', async () => {
    const { rec } = await toolRun({ context: { topicId: 'topic-1', sessionId: 'session-1', threadId: 'thread-1' } });
    const [before] = rec.of('beforeToolCall');
    assert.equal(before!.topicId, 'topic-1');
    assert.equal(before!.sessionId, 'session-1');
    assert.equal(before!.threadId, 'thread-1');
  });

  it('afterToolCall carries the Tool Context, the structured result and mocked: false for a real run', async () => {
    const { rec, handle } = await toolRun();
    const [after] = rec.of('afterToolCall');
    assert.match(after!.toolCallId, /^call_[0-9a-f]{32}$/);
    assert.equal(after!.nativeToolCallId, 'call-1');
    assert.equal(after!.operationId, handle.operationId);
    assert.equal(after!.identifier, 'test');
    assert.equal(after!.apiName, 'echo');
    assert.equal(after!.mocked, false);
    assert.equal(after!.result.content, 'echo: {"a":1}');
    assert.equal(after!.result.success, true);
    assert.equal(typeof after!.result.executionTime, 'number');
  });

  it('callIndex is the position of the call within its assistant message', async () => {
    fx.kernel.agents.define({
      id: 'two-calls',
      tools: ['test/*'],
      model: scripted([
        { toolCalls: [{ id: 'c0', identifier: 'test', apiName: 'echo', args: { n: 0 } }, { id: 'c1', identifier: 'test', apiName: 'echo', args: { n: 1 } }] },
        { text: 'ok' },
      ]),
    });
    const rec = recordHooks(['beforeToolCall']);
    await (await fx.kernel.execAgent({ agentId: 'two-calls', prompt: 'go', hooks: rec.hooks })).completed();
    assert.deepEqual(rec.of('beforeToolCall').map((e) => [e.nativeToolCallId, e.callIndex, e.stepIndex]), [['c0', 0, 1], ['c1', 1, 2]]);
  });

  it('onToolCallError carries the Tool Context and the error message', async () => {
    fx.kernel.agents.define({ id: 'boomer', tools: ['test/*'], model: scripted([toolTurn('test', 'boom', { message: 'kaboom' }, 'call-b'), { text: 'ok' }]) });
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'boomer', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    const [err] = rec.of('onToolCallError');
    assert.equal(rec.of('onToolCallError').length, 1);
    assert.match(err!.toolCallId, /^call_[0-9a-f]{32}$/);
    assert.equal(err!.nativeToolCallId, 'call-b');
    assert.equal(err!.identifier, 'test');
    assert.equal(err!.apiName, 'boom');
    assert.equal(err!.operationId, handle.operationId);
    assert.equal(err!.executor, 'server');
    assert.equal(err!.error, 'kaboom');
  });

  it('beforeHumanIntervention carries pendingTools, operationId and stepIndex', async () => {
    fx.kernel.agents.define({
      id: 'careful',
      tools: ['fs/*'],
      approval: { tools: ['fs/writeFile'] },
      model: scripted([toolTurn('fs', 'writeFile', { path: 'a.txt', content: 'hi' }, 'call-w'), { text: 'ok' }]),
    });
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'go', hooks: rec.hooks });
    await handle.settled();
    const [before] = rec.of('beforeHumanIntervention');
    assert.equal(before!.operationId, handle.operationId);
    assert.equal(before!.stepIndex, 1);
    assert.equal(before!.pendingTools.length, 1);
    assert.match(before!.pendingTools[0]!.toolCallId, /^call_[0-9a-f]{32}$/);
    assert.equal(before!.pendingTools[0]!.nativeToolCallId, 'call-w');
    assert.equal(before!.pendingTools[0]!.identifier, 'fs');
    assert.equal(before!.pendingTools[0]!.apiName, 'writeFile');
    assert.deepEqual(before!.pendingTools[0]!.args, { path: 'a.txt', content: 'hi' });
    await fx.kernel.abort(handle.operationId);
  });

  it('afterHumanIntervention carries the action, the tool call id and the rejection reason', async () => {
    fx.kernel.agents.define({
      id: 'careful',
      tools: ['fs/*'],
      approval: { tools: ['fs/writeFile'] },
      model: scripted([toolTurn('fs', 'writeFile', { path: 'a.txt', content: 'hi' }, 'call-w'), { text: 'ok' }]),
    });
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'go', hooks: rec.hooks });
    await handle.settled();
    const pendingId = rec.of('beforeHumanIntervention')[0]!.pendingTools[0]!.toolCallId;
    await (await fx.kernel.rejectAndContinue(handle.operationId, { toolCallId: pendingId, reason: 'not now' })).completed();
    const [after] = rec.of('afterHumanIntervention');
    assert.equal(rec.of('afterHumanIntervention').length, 1);
    assert.equal(after!.operationId, handle.operationId);
    assert.equal(after!.action, 'rejectAndContinue');
    assert.equal(after!.toolCallId, pendingId);
    assert.equal(after!.rejectionReason, 'not now');
    assert.match(after!.timestamp, ISO);
  });

  it('onStopByHumanIntervention carries the tool call id and the rejection reason', async () => {
    fx.kernel.agents.define({
      id: 'careful',
      tools: ['fs/*'],
      approval: { tools: ['fs/writeFile'] },
      model: scripted([toolTurn('fs', 'writeFile', { path: 'a.txt', content: 'hi' }, 'call-w'), { text: 'ok' }]),
    });
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'go', hooks: rec.hooks });
    await handle.settled();
    const pendingId = rec.of('beforeHumanIntervention')[0]!.pendingTools[0]!.toolCallId;
    await (await fx.kernel.reject(handle.operationId, { toolCallId: pendingId, reason: 'no writing' })).completed();
    const [stop] = rec.of('onStopByHumanIntervention');
    assert.equal(rec.of('onStopByHumanIntervention').length, 1);
    assert.equal(stop!.operationId, handle.operationId);
    assert.equal(stop!.toolCallId, pendingId);
    assert.equal(stop!.rejectionReason, 'no writing');
  });

  /** Two tool rounds, then an answer; a low threshold makes the second round compact the first. */
  function defineCompactingAgent(summaries?: unknown[]) {
    fx.kernel.agents.define({
      id: 'chatty',
      tools: ['test/*'],
      compaction: { thresholdTokens: 10, keepRecent: 2 },
      model: scripted(
        [toolTurn('test', 'echo', { text: 'x'.repeat(200) }, 'c1'), toolTurn('test', 'echo', { text: 'y'.repeat(200) }, 'c2'), { text: 'finished' }],
        summaries ? { summaries } : {},
      ),
    });
  }

  it('beforeCompact carries messageCount, tokenCount and stepIndex', async () => {
    defineCompactingAgent([{ text: 'the summary' }]);
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'chatty', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    const [before] = rec.of('beforeCompact');
    assert.equal(rec.of('beforeCompact').length, 1);
    assert.equal(before!.operationId, handle.operationId);
    assert.equal(before!.messageCount, 5);
    assert.ok(before!.tokenCount > 10, `tokenCount ${before!.tokenCount}`);
    assert.equal(before!.stepIndex, 4);
  });

  it('afterCompact carries groupId (the summary message id), messagesBefore, messagesAfter and the summary', async () => {
    defineCompactingAgent([{ text: 'the summary' }]);
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'chatty', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    const [after] = rec.of('afterCompact');
    assert.equal(after!.operationId, handle.operationId);
    assert.equal(after!.messagesBefore, 5);
    assert.equal(after!.messagesAfter, 3);
    assert.equal(after!.summary, 'the summary');
    const summary = (await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'summary');
    assert.equal(after!.groupId, summary?.id);
  });

  it('onCompactError carries the error, tokenCount and stepIndex', async () => {
    defineCompactingAgent([{ error: 'summarizer down' }]);
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'chatty', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    const [err] = rec.of('onCompactError');
    assert.equal(rec.of('onCompactError').length, 1);
    assert.equal(err!.operationId, handle.operationId);
    assert.match(err!.error, /summarizer down/);
    assert.ok(err!.tokenCount > 10);
    assert.equal(err!.stepIndex, 4);
  });

  function defineParentAndChild(childModel: Record<string, unknown>) {
    fx.kernel.agents.define({ id: 'child', model: childModel });
    fx.kernel.agents.define({
      id: 'parent',
      subagents: ['child'],
      model: scripted([toolTurn('agents', 'child', { instruction: 'count the files' }, 'call-sub'), { text: 'parent done' }]),
    });
  }

  it('beforeCallAgent fires on the parent with the sub-agent id and the instruction', async () => {
    defineParentAndChild(scripted([{ text: 'three files' }]));
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'parent', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    const [before] = rec.of('beforeCallAgent');
    assert.equal(rec.of('beforeCallAgent').length, 1);
    assert.equal(before!.operationId, handle.operationId);
    assert.equal(before!.agentId, 'child');
    assert.equal(before!.instruction, 'count the files');
    assert.equal(before!.stepIndex, 1);
  });

  it('afterCallAgent fires on the parent with subOperationId and success', async () => {
    defineParentAndChild(scripted([{ text: 'three files' }]));
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'parent', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    const [after] = rec.of('afterCallAgent');
    assert.equal(after!.operationId, handle.operationId);
    assert.equal(after!.agentId, 'child');
    assert.equal(after!.success, true);
    const child = await fx.kernel.getOperation(after!.subOperationId);
    assert.equal(child?.parentOperationId, handle.operationId);
  });

  it('onCallAgentError fires on the parent with the sub-agent id and the error', async () => {
    defineParentAndChild(scripted([{ error: 'child model broke' }]));
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'parent', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    const errors = rec.of('onCallAgentError', handle.operationId);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.agentId, 'child');
    assert.match(errors[0]!.error, /child model broke/);
  });
});
