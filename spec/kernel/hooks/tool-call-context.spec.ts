import assert from 'node:assert/strict';
import { buildToolCallHookContext, type ToolRunContext } from '../../../kernel/hooks/tool-call-context.js';

const call = { id: 'call-1', identifier: 'fs', apiName: 'readFile', args: { path: 'a.txt' } };

function build(run: Partial<ToolRunContext> = {}, extra: { toolSource?: string; toolMessageId?: string; executor?: 'server' | 'client' } = {}) {
  return buildToolCallHookContext({
    call,
    assistantMessageId: 'msg-a',
    callIndex: 2,
    stepIndex: 7,
    run: { operationId: 'op-1', agentId: 'agent-1', ...run },
    ...extra,
  });
}

/** buildToolCallHookContext: document 000 "Tool Context" (issue 3 item 4). */
describe('buildToolCallHookContext', () => {
  it('has every required field', () => {
    const ctx = build();
    assert.equal(ctx.toolCallId, 'call-1');
    assert.equal(ctx.assistantMessageId, 'msg-a');
    assert.equal(ctx.identifier, 'fs');
    assert.equal(ctx.apiName, 'readFile');
    assert.deepEqual(ctx.args, { path: 'a.txt' });
    assert.equal(ctx.callIndex, 2);
    assert.equal(ctx.stepIndex, 7);
    assert.equal(ctx.operationId, 'op-1');
    assert.equal(ctx.executor, 'server');
    assert.equal(ctx.agentId, 'agent-1');
    assert.ok(!Number.isNaN(Date.parse(ctx.timestamp)));
  });

  it('userId is runtime.userId when set, else origin.userId, else absent', () => {
    assert.equal(build({ runtime: { userId: 'rt' }, origin: { userId: 'or' } }).userId, 'rt');
    assert.equal(build({ runtime: {}, origin: { userId: 'or' } }).userId, 'or');
    assert.equal(build({ origin: { userId: 'or' } }).userId, 'or');
    assert.equal('userId' in build(), false);
  });

  it('copies the optional run associations only when present', () => {
    const ctx = build({
      parentOperationId: 'op-parent',
      associations: { topicId: 't', sessionId: 's', threadId: 'th', groupId: 'g', taskId: 'k', workspaceId: 'w', documentId: 'd', sourceMessageId: 'sm', unrelated: 'x' },
    });
    assert.equal(ctx.topicId, 't');
    assert.equal(ctx.sessionId, 's');
    assert.equal(ctx.threadId, 'th');
    assert.equal(ctx.groupId, 'g');
    assert.equal(ctx.taskId, 'k');
    assert.equal(ctx.workspaceId, 'w');
    assert.equal(ctx.documentId, 'd');
    assert.equal(ctx.sourceMessageId, 'sm');
    assert.equal(ctx.parentOperationId, 'op-parent');
    assert.equal('unrelated' in ctx, false);
    const bare = build();
    for (const key of ['topicId', 'sessionId', 'threadId', 'groupId', 'taskId', 'workspaceId', 'documentId', 'parentOperationId', 'toolSource', 'toolMessageId', 'executionTarget', 'activeDeviceId']) {
      assert.equal(key in bare, false, key);
    }
  });

  it('carries toolSource, toolMessageId, executor, executionTarget and activeDeviceId when given', () => {
    const ctx = build({ runtime: { executionTarget: 'sandbox', activeDeviceId: 'dev-1' } }, { toolSource: 'mcp:files', toolMessageId: 'msg-t', executor: 'client' });
    assert.equal(ctx.toolSource, 'mcp:files');
    assert.equal(ctx.toolMessageId, 'msg-t');
    assert.equal(ctx.executor, 'client');
    assert.equal(ctx.executionTarget, 'sandbox');
    assert.equal(ctx.activeDeviceId, 'dev-1');
  });
});
