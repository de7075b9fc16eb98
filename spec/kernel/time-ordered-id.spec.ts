import assert from 'node:assert/strict';
import { timeOrderedId } from '../../kernel/time-ordered-id.js';

describe('time-ordered ids', () => {
  it('are version 7 UUIDs carrying the millisecond clock', () => {
    const id = timeOrderedId(Date.UTC(2030, 0, 1));
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), Date.UTC(2030, 0, 1));
  });

  it('sort in creation order, within one millisecond and when the clock goes back', () => {
    const now = Date.UTC(2031, 0, 1);
    const ids = [
      ...Array.from({ length: 5000 }, () => timeOrderedId(now)),
      ...Array.from({ length: 10 }, () => timeOrderedId(now - 1000)),
    ];
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
  });
});
