import assert from 'node:assert/strict';
import { MemoryStore } from '../../../plugins/store-memory/memory-store.js';
import storeMemoryPlugin from '../../../plugins/store-memory/index.js';
import { Store } from '../../../kernel/tokens.js';
import { describeStoreContract } from '../store-contract.js';

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
