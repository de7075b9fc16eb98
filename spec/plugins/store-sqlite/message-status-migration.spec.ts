import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { OperationState } from '../../../kernel/store.js';
import { LATEST_SCHEMA_VERSION } from '../../../plugins/store-sqlite/migrations.js';
import { SqliteStore } from '../../../plugins/store-sqlite/sqlite-store.js';

function state(stepIndex = 0): OperationState {
  return { stepIndex, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
}

/** Schema 12 (message status and completion time) over a database written at schema 11. */
describe('store-sqlite migration from schema version 11', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'hookgate-schema-12-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds the two columns to a schema 11 file: its messages read back whole, without status, and can be updated', async () => {
    const file = path.join(dir, 'hookgate.db');
    const first = new SqliteStore({ path: file });
    await first.migrate();
    await first.createOperation({ id: 'op-1', agentId: 'a', agent: { id: 'a' }, context: {}, state: state(), thread: { id: 'th-1', agentId: 'a' } }, [{ id: 'm-1', role: 'user', content: 'before the upgrade' }], []);
    await first.commitStep('op-1', { state: state(1), messages: [{ role: 'assistant', content: 'answer' }] });
    const written = await first.listThreadMessages('th-1');
    await first.close();
    // The file as schema 11 wrote it: without the two columns.
    const db = new Database(file);
    db.exec('ALTER TABLE operation_log DROP COLUMN status; ALTER TABLE operation_log DROP COLUMN response_completed_at;');
    db.pragma('user_version = 11');
    db.close();

    const second = new SqliteStore({ path: file });
    await second.migrate();
    try {
      const check = new Database(file, { readonly: true });
      assert.equal(check.pragma('user_version', { simple: true }), LATEST_SCHEMA_VERSION);
      assert.ok(LATEST_SCHEMA_VERSION >= 12);
      const columns = (check.prepare('PRAGMA table_info(operation_log)').all() as Array<{ name: string }>).map((c) => c.name);
      check.close();
      assert.ok(columns.includes('status') && columns.includes('response_completed_at'), columns.join(', '));
      assert.deepEqual(await second.listThreadMessages('th-1'), written);
      const updated = await second.updateMessage('th-1', written[1]!.id, { status: 'completed', responseCompletedAt: 1_767_225_600_000_001 });
      assert.deepEqual(updated, { ...written[1]!, status: 'completed', responseCompletedAt: 1_767_225_600_000_001 });
      assert.deepEqual(await second.listThreadMessages('th-1'), [written[0]!, updated]);
    } finally {
      await second.close();
    }
  });
});
