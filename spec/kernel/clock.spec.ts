import assert from 'node:assert/strict';
import { isoString, nowIso } from '../../kernel/clock.js';

describe('clock: ISO strings formatted without Date#toISOString', () => {
  it('equal toISOString at the edges of days, months, leap years, centuries and the four-digit years', () => {
    const edges = [
      0,
      1,
      999,
      1000,
      86_399_999,
      86_400_000,
      Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(2000, 1, 29, 12),
      Date.UTC(2000, 2, 1),
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(2100, 1, 28, 23, 59, 59, 999),
      Date.UTC(2100, 2, 1),
      Date.UTC(2026, 11, 1, 21, 27, 11, 5),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    for (const ms of edges) assert.equal(isoString(ms), new Date(ms).toISOString(), `at ${ms}`);
  });

  it('equal toISOString for random times, in and out of order (the cached day changes back and forth)', () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor(next() * 253_402_300_800_000);
      assert.equal(isoString(ms), new Date(ms).toISOString(), `at ${ms}`);
    }
  });

  it('outside 1970-9999 and for fractional or odd values: what toISOString gives, or throws', () => {
    for (const ms of [-1, -86_400_001, Date.UTC(-5, 0, 1), 253_402_300_800_000, Date.UTC(275_000, 0, 1), 1.5]) {
      assert.equal(isoString(ms), new Date(ms).toISOString(), `at ${ms}`);
    }
    assert.throws(() => isoString(Number.NaN), RangeError);
    assert.throws(() => isoString(8.64e15 + 1), RangeError);
  });

  it('nowIso reads the clock: between the readings before and after', () => {
    const before = new Date().toISOString();
    const now = nowIso();
    const after = new Date().toISOString();
    assert.ok(before <= now && now <= after, `${before} <= ${now} <= ${after}`);
    assert.equal(new Date(now).toISOString(), now);
  });
});
