import assert from 'node:assert/strict';
import { validate, version } from 'uuid';
import { timeOrderedId } from '../../kernel/time-ordered-id.js';

describe('time-ordered ids', () => {
  it('are version 7 UUIDs carrying the millisecond clock', () => {
    const id = timeOrderedId(Date.UTC(2030, 0, 1));
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(validate(id));
    assert.equal(version(id), 7);
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
    // The clock going back does not move the ids back: they keep the latest millisecond.
    assert.equal(parseInt(ids.at(-1)!.slice(0, 8) + ids.at(-1)!.slice(9, 13), 16), now);
  });

  it('sort in creation order on the real clock (many ids share a millisecond)', () => {
    const ids = Array.from({ length: 20_000 }, () => timeOrderedId());
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
    const millis = new Set(ids.map((id) => id.slice(0, 13)));
    assert.ok(millis.size < ids.length, 'some ids share a millisecond, so the counter is what orders them');
  });

  it('differ in their random part when generated in the same millisecond', () => {
    const now = Date.UTC(2032, 0, 1);
    const [a, b] = [timeOrderedId(now), timeOrderedId(now)];
    assert.notEqual(a!.slice(24), b!.slice(24));
  });
});
