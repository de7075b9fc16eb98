import assert from 'node:assert/strict';
import { isHookgateError } from '../../kernel/errors.js';
import type { Store } from '../../kernel/store.js';
import { MAX_USER_VALUE_BYTES } from '../../kernel/user-values.js';

async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isHookgateError(err, 'USER_VALUE_INVALID'), String(err));
    assert.match((err as Error).message, pattern);
    return true;
  });
}

/** Per-user values (kernel/user-values.ts), for every store (run by the store contract). */
export function describeUserValuesContract(current: () => Store): void {
  describe('user values (UserState.getValue / setValue)', () => {
    let store: Store;
    beforeEach(() => {
      store = current();
    });

    it('sets, reads back a copy, replaces and removes one key, each write resolving to the value it replaced', async () => {
      assert.equal(await store.getUserValue('u-1', 'plan'), undefined);
      assert.deepEqual(await store.setUserValue('u-1', 'plan', { tier: 'free', seats: [1, 2] }), { previous: undefined });
      const read = (await store.getUserValue('u-1', 'plan')) as { tier: string };
      assert.deepEqual(read, { tier: 'free', seats: [1, 2] });
      read.tier = 'changed by the caller';
      assert.deepEqual(await store.getUserValue('u-1', 'plan'), { tier: 'free', seats: [1, 2] });
      assert.deepEqual(await store.setUserValue('u-1', 'plan', 'pro'), { previous: { tier: 'free', seats: [1, 2] } });
      assert.deepEqual(await store.setUserValue('u-1', 'plan', null), { previous: 'pro' });
      assert.equal(await store.getUserValue('u-1', 'plan'), null);
      assert.deepEqual(await store.setUserValue('u-1', 'plan', undefined), { previous: null });
      assert.equal(await store.getUserValue('u-1', 'plan'), undefined);
      assert.deepEqual(await store.setUserValue('u-1', 'plan', undefined), { previous: undefined });
    });

    it('keeps users and keys apart, compared exactly, and lists a user\'s keys in code-point order', async () => {
      for (const [user, key, value] of [['u-1', 'b', 1], ['u-1', 'a', 2], ['U-1', 'a', 3], ['u-1', '\u{1F600}', 4], ['u-1', '\uFFFD', 5], ['u-1', 'caf\u00e9', 6], ['u-1', 'cafe\u0301', 7]] as const) {
        await store.setUserValue(user, key, value);
      }
      assert.deepEqual(await store.listUserValueKeys('u-1'), ['a', 'b', 'cafe\u0301', 'caf\u00e9', '\uFFFD', '\u{1F600}']);
      assert.deepEqual(await store.listUserValueKeys('U-1'), ['a']);
      assert.deepEqual(await store.listUserValueKeys('nobody'), []);
      assert.equal(await store.getUserValue('U-1', 'a'), 3);
      assert.equal(await store.getUserValue('u-1', 'cafe\u0301'), 7);
    });

    it('hostile ids and keys are opaque data: a path-like user id and prototype keys are ordinary rows, and nothing is polluted', async () => {
      await store.setUserValue('../x', '__proto__', { polluted: true });
      await store.setUserValue('../x', 'constructor', 'c');
      await store.setUserValue("u'; DROP TABLE user_values; --", 'k', 1);
      await store.setUserValue('../x', 'v', JSON.parse('{"__proto__":{"polluted":true},"ok":1}'));
      assert.deepEqual(await store.getUserValue('../x', '__proto__'), { polluted: true });
      assert.equal(await store.getUserValue('../x', 'constructor'), 'c');
      assert.equal(await store.getUserValue("u'; DROP TABLE user_values; --", 'k'), 1);
      const v = (await store.getUserValue('../x', 'v')) as Record<string, unknown>;
      assert.deepEqual(Object.keys(v), ['__proto__', 'ok']);
      assert.equal(Object.getPrototypeOf(v), Object.prototype);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.deepEqual(await store.listUserValueKeys('../x'), ['__proto__', 'constructor', 'v']);
      assert.equal(await store.getUserValue('x', '__proto__'), undefined);
    });

    it('refuses bad ids, keys and values with USER_VALUE_INVALID naming what was wrong, storing nothing', async () => {
      await refused(store.setUserValue('', 'k', 1), /user id must be 1 to 256 characters/);
      await refused(store.setUserValue('u'.repeat(257), 'k', 1), /user id must be 1 to 256 characters long \(got 257\)/);
      await refused(store.setUserValue('a\u0000b', 'k', 1), /user id must not contain control characters/);
      await refused(store.setUserValue(42 as unknown as string, 'k', 1), /user id must be a string, got number/);
      await refused(store.getUserValue('u', ''), /key must be 1 to 256 characters/);
      await refused(store.setUserValue('u', 'line\nbreak', 1), /key must not contain control characters/);
      await refused(store.setUserValue('u', 'k', () => 1), /"k" is not JSON: it holds a function/);
      await refused(store.setUserValue('u', 'k', { n: Number.NaN }), /"k" is not JSON: it holds the number NaN/);
      await refused(store.setUserValue('u', 'k', { when: new Date(0) }), /"k" is not JSON: it holds a Date instance/);
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      await refused(store.setUserValue('u', 'k', cycle), /"k" is not JSON: it holds a cycle/);
      let deep: unknown = 1;
      for (let i = 0; i < 100_000; i++) deep = [deep];
      await refused(store.setUserValue('u', 'k', deep), /"k" nests deeper than 64 levels/);
      await refused(store.setUserValue('u', 'huge', 'x'.repeat(MAX_USER_VALUE_BYTES)), new RegExp(`"huge" is ${MAX_USER_VALUE_BYTES + 2} bytes of JSON; a user value is at most ${MAX_USER_VALUE_BYTES} bytes`));
      assert.deepEqual(await store.listUserValueKeys('u'), []);
      // The largest value that fits is stored whole (JSON text of exactly the limit, multi-byte characters counted as bytes).
      const fits = '\u00e9'.repeat((MAX_USER_VALUE_BYTES - 2) / 2);
      await store.setUserValue('u', 'big', fits);
      assert.equal(await store.getUserValue('u', 'big'), fits);
    });

    it('concurrent writes of one key are serialized: every previous value is one another write stored, each seen once', async () => {
      const writes = await Promise.all(Array.from({ length: 12 }, (_, i) => store.setUserValue('u-race', 'n', i)));
      const previous = writes.map((w) => w.previous);
      assert.equal(previous.filter((p) => p === undefined).length, 1, JSON.stringify(previous));
      const seen = previous.filter((p) => p !== undefined) as number[];
      assert.equal(new Set(seen).size, seen.length, JSON.stringify(previous));
      const last = (await store.getUserValue('u-race', 'n')) as number;
      assert.ok(!seen.includes(last), `the final value ${last} was replaced by nobody`);
    });
  });
}
