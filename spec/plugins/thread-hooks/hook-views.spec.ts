import assert from 'node:assert/strict';
import type { ToolCall } from '../../../kernel/messages.js';
import { shareToolCallsJson, toHookMessage } from '../../../plugins/thread-hooks/hook-message.js';
import { frozenToolCall } from '../../../plugins/thread-hooks/hook-tool-result.js';

/**
 * The views thread hooks get are made with shortcuts on the no-op path (a
 * minute's parsed start, JSON shared with a stored copy, one frozen view per
 * call): each must give exactly what the plain computation gives.
 */
describe('thread hooks: the views hooks get (created_at, tool_calls, frozen calls)', () => {
  it('created_at is Date.parse(createdAt) in microseconds for every form, also within a minute already parsed', () => {
    const times = [
      '2026-12-02T06:25:00.000Z', '2026-12-02T06:25:59.999Z', '2026-12-02T06:25:07.042Z', '2026-12-02T06:26:00.001Z',
      '2026-12-02T06:26:60.000Z', '2026-12-02T06:26:5x.000Z', '2026-12-02T06:26:05.000+01:00', '2026-12-02T06:26:05Z',
      '2026-12-02 06:26:05.000Z', 'not a time', '', '2026-12-02T06:26:05.5a0Z', '2026-02-30T06:26:05.000Z', '2026-12-02T06:26:09.100Z',
      '+02026-12-02T06:26:09.100Z', '2024-02-29T23:59:59.999Z', '2024-02-29T23:59:01.000Z',
    ];
    for (const createdAt of times) {
      const row = toHookMessage({ role: 'user', content: 'x', createdAt }, 'm1');
      assert.ok(Object.is(row.created_at, Date.parse(createdAt) * 1000), `${JSON.stringify(createdAt)}: ${row.created_at} vs ${Date.parse(createdAt) * 1000}`);
    }
    const before = Date.now() * 1000;
    const fresh = toHookMessage({ role: 'user', content: 'x' }, 'm2').created_at;
    assert.ok(fresh >= before && fresh <= Date.now() * 1000, 'a message not stored yet is made now');
  });

  it('a stored copy of tool calls gets the JSON of its own calls: shared only when ids, tools and count match', () => {
    const calls: ToolCall[] = [{ id: 'c1', identifier: 'fs', apiName: 'read', args: { path: 'a"b' } }];
    const made = toHookMessage({ role: 'assistant', content: '', toolCalls: calls }, 'm1').tool_calls;
    const copy: ToolCall[] = JSON.parse(JSON.stringify(calls)) as ToolCall[];
    shareToolCallsJson(calls, copy);
    assert.equal(toHookMessage({ role: 'assistant', content: '', toolCalls: copy }, 'm1').tool_calls, made);
    // Another call under the first one's id is never given its JSON.
    const other: ToolCall[] = [{ id: 'c1', identifier: 'fs', apiName: 'write', args: { path: 'z' } }];
    shareToolCallsJson(calls, other);
    const otherJson = toHookMessage({ role: 'assistant', content: '', toolCalls: other }, 'm1').tool_calls;
    const unshared = toHookMessage({ role: 'assistant', content: '', toolCalls: [{ ...other[0]!, args: { path: 'z' } }] }, 'm1').tool_calls;
    assert.notEqual(otherJson, made);
    assert.equal(otherJson, unshared);
    assert.match(otherJson!, /"arguments":"\{\\"path\\":\\"z\\"\}"/);
    const longer: ToolCall[] = [...JSON.parse(JSON.stringify(calls)), { id: 'c2', identifier: 'fs', apiName: 'read', args: {} }];
    shareToolCallsJson(calls, longer);
    assert.equal(JSON.parse(toHookMessage({ role: 'assistant', content: '', toolCalls: longer }, 'm1').tool_calls!).length, 2);
  });

  it('the frozen view of a call is made once per call and made again when the call object changed', () => {
    const call: ToolCall = { id: 'c1', identifier: 'fs', apiName: 'read', args: { path: 'a' } };
    const view = frozenToolCall(call);
    assert.ok(Object.isFrozen(view) && Object.isFrozen(view.function));
    assert.equal(frozenToolCall(call), view);
    assert.equal(view.function.arguments, '{"path":"a"}');
    (call as { args: Record<string, unknown> }).args = { path: 'b' };
    const again = frozenToolCall(call);
    assert.notEqual(again, view);
    assert.equal(again.function.arguments, '{"path":"b"}');
    assert.throws(() => {
      (again as { id: string }).id = 'forged';
    }, TypeError);
  });
});
