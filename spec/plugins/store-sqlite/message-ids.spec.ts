import assert from 'node:assert/strict';
import { isHookgateError } from '../../../kernel/errors.js';
import { MessageIds } from '../../../plugins/store-sqlite/message-ids.js';

describe('store-sqlite message ids', () => {
  const ids = new MessageIds('0123456789abcde');

  it('are version 8 UUIDs made of the namespace and the log key', () => {
    const id = ids.forKey(5 * 16_777_216 + 3);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(id, '01234567-89ab-8cde-8000-000005000003');
  });

  it('give back the key of an id of the same namespace, for keys up to 2^53', () => {
    for (const key of [1, 16_777_217, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER]) assert.equal(ids.keyOf(ids.forKey(key)), key);
  });

  it('know no key for ids of another namespace or another shape', () => {
    const other = new MessageIds('fedcba987654321');
    assert.equal(ids.keyOf(other.forKey(42)), undefined);
    for (const id of ['m-1', 'msg_4b7f', '01234567-89ab-7cde-8000-000005000003', '01234567-89ab-8cde-9000-000005000003', `${ids.forKey(1)}x`]) {
      assert.equal(ids.keyOf(id), undefined, id);
    }
  });

  it('read an id in upper case as the same id (UUIDs compare case-insensitively)', () => {
    assert.equal(ids.keyOf('01234567-89AB-8CDE-8000-000005000003'), 5 * 16_777_216 + 3);
  });

  it('refuse a namespace that is not 15 lowercase hex digits', () => {
    for (const bad of ['', '0123456789abcd', '0123456789abcdef', '0123456789ABCDE', '0123456789abcdg']) {
      assert.throws(() => new MessageIds(bad), (err: unknown) => isHookgateError(err, 'STORE_CORRUPT'), bad);
    }
  });
});
