import assert from 'node:assert/strict';
import { deepFreeze, type AgentDefinition } from '../../../kernel/agent-definition.js';
import { jsonCopy } from '../../../kernel/json-copy.js';
import type { ToolCall } from '../../../kernel/messages.js';
import { callAllowed, callFacts, callNeedsApproval, toolEntryIn, type ToolEntry } from '../../../kernel/runtime/call-facts.js';
import { mintToolCalls } from '../../../kernel/runtime/tool-call-identity.js';

const agent = (tools: string[], approval?: string[]): AgentDefinition =>
  deepFreeze({ id: 'a', model: { provider: 'scripted' }, tools, ...(approval ? { approval: { tools: approval } } : {}) } as unknown as AgentDefinition);

function entry(identifier: string, apiName: string): ToolEntry {
  return { tool: { identifier, apiName, description: '', parameters: { type: 'object' } }, source: { id: 's', list: () => [], execute: async () => 'ok' } } as unknown as ToolEntry;
}

describe('call facts: the allow-list, approval and tool answers remembered per admitted call', () => {
  const [call] = mintToolCalls([{ id: 'm1', identifier: 'fs', apiName: 'read', args: { path: 'a' } }]);

  it('remembered answers stay what the checks answer, for each agent asked', () => {
    const fsOnly = agent(['fs/*'], ['fs/read']);
    const other = agent(['web/*']);
    assert.equal(callAllowed(fsOnly, call!), true);
    assert.equal(callNeedsApproval(fsOnly, call!), true);
    // The same call object for another agent: its own lists decide, not the remembered answer.
    assert.equal(callAllowed(other, call!), false);
    assert.equal(callNeedsApproval(other, call!), false);
    assert.deepEqual({ ...callFacts(fsOnly, call!) }.allowed, true);
    assert.equal(callFacts(other, call!).allowed, false);
  });

  it('a call that can still change is checked afresh every time', () => {
    const loose: ToolCall = { id: 'call_x', identifier: 'fs', apiName: 'read', args: {} };
    const a = agent(['fs/read']);
    assert.equal(callAllowed(a, loose), true);
    (loose as { apiName: string }).apiName = 'write';
    assert.equal(callAllowed(a, loose), false);
  });

  it('the tool entry is looked up again in another tool map', () => {
    const a = agent(['fs/*']);
    const first = new Map([['fs/read', entry('fs', 'read')]]);
    const second = new Map([['fs/read', entry('fs', 'read')]]);
    assert.equal(toolEntryIn(first, a, call!), first.get('fs/read'));
    assert.equal(toolEntryIn(second, a, call!), second.get('fs/read'));
    // No `a/b` + `c` vs `a` + `b/c` confusion, remembered or not.
    const [split] = mintToolCalls([{ id: 'm2', identifier: 'fs/read', apiName: '', args: {} }]);
    const confusing = new Map([['fs/read/', entry('fs', 'read/')]]);
    assert.equal(toolEntryIn(confusing, a, split!), undefined);
    assert.equal(toolEntryIn(confusing, a, split!), undefined);
  });

  it('nothing remembered is on the call: its stored form, keys and symbols are as minted', () => {
    callAllowed(agent(['fs/*']), call!);
    toolEntryIn(new Map([['fs/read', entry('fs', 'read')]]), agent(['fs/*']), call!);
    assert.deepEqual(Object.keys(call!), ['id', 'identifier', 'apiName', 'args', 'nativeId']);
    assert.deepEqual(Object.getOwnPropertySymbols(call!), []);
    assert.deepEqual(Object.getOwnPropertyNames(call!), ['id', 'identifier', 'apiName', 'args', 'nativeId']);
    assert.deepEqual(jsonCopy(call), { id: call!.id, identifier: 'fs', apiName: 'read', args: { path: 'a' }, nativeId: 'm1' });
    assert.match(call!.id, /^call_[0-9a-f]{32}$/);
  });

  it('minted ids count up in hex and never repeat', () => {
    const ids = mintToolCalls(Array.from({ length: 300 }, (_, i) => ({ id: `m${i}`, identifier: 'fs', apiName: 'read', args: {} }))).map((c) => c.id);
    assert.equal(new Set(ids).size, 300);
    for (let i = 1; i < ids.length; i++) assert.equal(BigInt(`0x${ids[i]!.slice(-16)}`) - BigInt(`0x${ids[i - 1]!.slice(-16)}`), 1n);
    assert.equal(new Set(ids.map((id) => id.slice(0, 21))).size, 1);
  });
});
