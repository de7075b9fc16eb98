import assert from 'node:assert/strict';
import type { Kernel } from '../../../kernel/kernel.js';
import type { ToolCall } from '../../../kernel/messages.js';
import type { OperationState } from '../../../kernel/store.js';
import { PolicyWorld } from '../policies/harness.js';

/**
 * Review of issue 9, item 1 (an upgrade): operations stored before call
 * identities were minted keep the model's ids in `pendingToolCalls` and
 * `approvedToolCallIds`. A model (or an OpenAI-compatible server) that reused
 * `call_0` across turns left an approval of an earlier call that matches a
 * later, different call by id. After the upgrade, resuming such an operation
 * must not let the later call run on the earlier call's approval.
 */
describe('review: state from before minted call identities', function () {
  this.timeout(20000);
  let world: PolicyWorld;

  afterEach(async () => {
    await world?.cleanup();
  });

  const agent = {
    id: 'legacy',
    tools: ['fs/*'],
    approval: { tools: ['fs/writeFile'] },
    model: { provider: 'recorded', turns: [{ text: 'unused' }, { text: 'unused' }, { text: 'done' }] },
  };

  async function legacyOperation(kernel: Kernel, status: 'running'): Promise<string> {
    const a: ToolCall = { id: 'call_0', identifier: 'fs', apiName: 'writeFile', args: { path: 'a.txt', content: 'approved write' } };
    const b: ToolCall = { id: 'call_0', identifier: 'fs', apiName: 'writeFile', args: { path: 'b.txt', content: 'never approved' } };
    const state: OperationState = {
      stepIndex: 5,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 },
      pendingToolCalls: [b],
      // The human approved call_0 = a.txt in turn one (the approval of the old schema, keyed by the model's id).
      approvedToolCallIds: ['call_0'],
      modelTurns: 2,
      compactions: 0,
    };
    const id = `op_legacy_${Date.now()}`;
    await kernel.store.createOperation(
      { id, agentId: agent.id, agent, context: {}, state },
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [a] },
        { role: 'tool', toolCallId: 'call_0', content: 'wrote a.txt', toolResult: { content: 'wrote a.txt', success: true } },
        { role: 'assistant', content: '', toolCalls: [b] },
      ],
      [],
    );
    assert.equal((await kernel.getOperation(id))!.status, status);
    return id;
  }

  it('resuming an operation left running by the old version asks again for a call whose legacy id an earlier call was approved under', async () => {
    world = await PolicyWorld.create({});
    const kernel = await world.boot();
    kernel.agents.define(agent);
    const operationId = await legacyOperation(kernel, 'running');
    const handle = await kernel.resume(operationId);
    const settled = await handle.settled();
    assert.equal(await world.sandboxFile('b.txt'), undefined, 'b.txt was written on the approval given to a.txt');
    assert.equal(settled.status, 'waiting_approval');
    await kernel.abort(operationId);
  });
});
