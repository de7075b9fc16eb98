import assert from 'node:assert/strict';
import { activeMessages } from '../../../kernel/runtime/running-operation.js';
import type { MessageRecord } from '../../../kernel/store.js';

function message(seq: number, role: MessageRecord['role'], compactedInto?: string): MessageRecord {
  const m: MessageRecord = { id: `m${seq}`, operationId: 'op', seq, position: seq, role, content: `c${seq}`, createdAt: '2026-12-02T00:00:00.000Z' };
  if (compactedInto !== undefined) m.compactedInto = compactedInto;
  return m;
}

/** What the model sees of a conversation: the step loop rebuilds `op.messages` with it after a compaction or a restart. */
describe('runtime: activeMessages', () => {
  it('summaries first, then the rest in the order given; compacted messages left out', () => {
    const all = [message(1, 'user', 's9'), message(2, 'assistant', 's9'), message(3, 'tool'), message(9, 'summary'), message(10, 'user'), message(11, 'summary')];
    assert.deepEqual(activeMessages(all).map((m) => m.id), ['m9', 'm11', 'm3', 'm10']);
  });

  it('a new array holding the same records: the caller may append to it without touching the input', () => {
    const all = [message(1, 'user'), message(2, 'assistant')];
    const active = activeMessages(all);
    assert.notEqual(active, all);
    assert.equal(active[0], all[0]);
    active.push(message(3, 'tool'));
    assert.equal(all.length, 2);
    assert.deepEqual(activeMessages([]), []);
  });
});
