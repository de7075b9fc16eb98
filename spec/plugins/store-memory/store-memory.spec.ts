import assert from 'node:assert/strict';
import { MemoryStore } from '../../../plugins/store-memory/memory-store.js';
import storeMemoryPlugin from '../../../plugins/store-memory/index.js';
import { Store } from '../../../kernel/tokens.js';
import { describeStoreContract } from '../store-contract.js';
import { deepFreeze } from '../../../kernel/agent-definition.js';

describeStoreContract('store-memory', async () => {
  const store = new MemoryStore();
  await store.migrate();
  return store;
});

describe('store-memory plugin', () => {
  it('declares id store-memory, provides Store and requires nothing', () => {
    assert.equal(storeMemoryPlugin.id, 'store-memory');
    assert.deepEqual(storeMemoryPlugin.provides, [Store]);
    assert.deepEqual(storeMemoryPlugin.requires, []);
  });
});

describe('store-memory agent definitions', () => {
  const state = { stepIndex: 0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };

  it('keeps one frozen copy of a deep-frozen agent for all its operations', async () => {
    const store = new MemoryStore();
    await store.migrate();
    const agent = deepFreeze({ id: 'a', tools: ['fs/*'], model: { provider: 'scripted', turns: [{ text: 'hi' }] } });
    await store.createOperation({ id: 'op-1', agentId: 'a', agent, context: {}, state }, [], []);
    await store.createOperation({ id: 'op-2', agentId: 'a', agent, context: {}, state }, [], []);
    const [one, two] = [(await store.getOperation('op-1'))!, (await store.getOperation('op-2'))!];
    assert.equal(one.agent, two.agent);
    assert.notEqual(one.agent, agent);
    assert.ok(Object.isFrozen((one.agent as { model: object }).model));
    assert.deepEqual(one.agent, agent);
    // The rest of the record is still the caller's own copy.
    one.context.x = 'changed';
    assert.deepEqual((await store.getOperation('op-1'))!.context, {});
  });

  it('copies an agent that is not deep-frozen, so later changes to it never reach the store', async () => {
    const store = new MemoryStore();
    await store.migrate();
    const agent = Object.freeze({ id: 'a', model: { provider: 'scripted' } }); // frozen on top only
    await store.createOperation({ id: 'op-1', agentId: 'a', agent, context: {}, state }, [], []);
    (agent.model as { provider: string }).provider = 'changed';
    const stored = (await store.getOperation('op-1'))!;
    assert.deepEqual(stored.agent, { id: 'a', model: { provider: 'scripted' } });
    (stored.agent as { id: string }).id = 'mutated';
    assert.equal(((await store.getOperation('op-1'))!.agent as { id: string }).id, 'a');
  });
});
