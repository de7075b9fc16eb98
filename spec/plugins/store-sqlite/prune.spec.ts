import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { OperationState } from '../../../kernel/store.js';
import { applyMigrations, AUTO_VACUUM_INCREMENTAL, LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../../plugins/store-sqlite/migrations.js';
import { SqliteStore } from '../../../plugins/store-sqlite/sqlite-store.js';
import { captureLogger } from '../../helpers/capture-logger.js';

function state(stepIndex = 0): OperationState {
  return { stepIndex, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
}

/** page_count, freelist_count, auto_vacuum and the integrity of a closed database file, read on a connection of its own. */
function pages(file: string): { pageCount: number; freelist: number; autoVacuum: number; version: number; foreignKeyProblems: number; integrity: string } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return {
      pageCount: db.pragma('page_count', { simple: true }) as number,
      freelist: db.pragma('freelist_count', { simple: true }) as number,
      autoVacuum: db.pragma('auto_vacuum', { simple: true }) as number,
      version: db.pragma('user_version', { simple: true }) as number,
      foreignKeyProblems: (db.pragma('foreign_key_check') as unknown[]).length,
      integrity: db.pragma('integrity_check', { simple: true }) as string,
    };
  } finally {
    db.close();
  }
}

/** `count` finished conversations of about 20 KB each (ten tool rounds), then a running one (the store's newest). */
async function fill(store: SqliteStore, count: number, prefix = 'op'): Promise<void> {
  const text = 'x'.repeat(1000);
  for (let i = 0; i < count; i++) {
    const id = `${prefix}-${String(i).padStart(5, '0')}`;
    await store.createOperation({ id, agentId: 'agent-a', agent: { id: 'agent-a' }, context: {}, state: state() }, [{ role: 'user', content: text }], [{ id: 'h' }]);
    for (let step = 0; step < 10; step++) {
      const call = { id: `call_${step}`, identifier: 'fs', apiName: 'readFile', args: { path: 'a' } };
      await store.commitStep(id, {
        state: state(step + 1),
        step: { operationId: id, stepIndex: step, kind: 'call_tool', startedAt: 's', finishedAt: 'f', usage: state().usage, summary: {} },
        messages: [{ role: 'assistant', content: text, toolCalls: [call] }, { role: 'tool', toolCallId: call.id, content: text }],
      });
    }
    await store.commitStep(id, { state: state(11), status: 'done', reason: 'done' });
  }
  await store.createOperation({ id: `${prefix}-newest`, agentId: 'agent-z', agent: { id: 'agent-z' }, context: {}, state: state() }, [], []);
}

describe('store-sqlite prune', function () {
  this.timeout(120_000);
  let dir: string;
  let n = 0;
  const freshPath = () => path.join(dir, `case-${++n}`, 'hookgate.db');
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'hookgate-prune-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the space back: the file shrinks to a fraction, no free pages left, every row of a pruned operation gone', async () => {
    const file = freshPath();
    let store = new SqliteStore({ path: file, backgroundCheckpoints: false });
    await store.migrate();
    await fill(store, 300);
    await store.close();
    const before = { bytes: statSync(file).size, ...pages(file) };
    assert.equal(before.autoVacuum, AUTO_VACUUM_INCREMENTAL, 'a new database is created with auto_vacuum = INCREMENTAL');

    store = new SqliteStore({ path: file, backgroundCheckpoints: false });
    await store.migrate();
    const counts = await store.prune({ maxOperations: 10 });
    assert.equal(counts.operations, 290);
    assert.ok(counts.reclaimedBytes > 0, 'reports reclaimed bytes');
    await store.close();
    const after = { bytes: statSync(file).size, ...pages(file) };

    assert.ok(after.bytes < before.bytes / 5, `the file shrank from ${before.bytes} to ${after.bytes} bytes`);
    assert.ok(after.pageCount < before.pageCount / 5, `page_count ${before.pageCount} -> ${after.pageCount}`);
    assert.equal(after.freelist, 0, 'no free page left in the file');
    assert.equal(after.integrity, 'ok');
    assert.equal(after.foreignKeyProblems, 0, 'no row refers to a removed one');
    assert.equal(counts.reclaimedBytes, (before.pageCount - after.pageCount) * 2048);
    const db = new Database(file, { readonly: true });
    try {
      const left = (sql: string) => db.prepare(sql).pluck().get() as number;
      assert.equal(left('SELECT COUNT(*) FROM operations'), 11);
      assert.equal(left('SELECT COUNT(*) FROM threads'), 11);
      // Every log entry left belongs to an operation left: the 290 ranges were deleted, not orphaned.
      assert.equal(left('SELECT COUNT(*) FROM operation_log l WHERE NOT EXISTS (SELECT 1 FROM operations o WHERE o.seq = l.key / 16777216)'), 0);
      assert.equal(left('SELECT COUNT(*) FROM operation_log'), 10 * 31);
      assert.equal(left('SELECT COUNT(*) FROM hook_registrations'), 10);
    } finally {
      db.close();
    }
  });

  it('leaves foreign keys on for every other call, and a pruned store takes new work', async () => {
    const store = new SqliteStore({ path: freshPath(), backgroundCheckpoints: false });
    await store.migrate();
    try {
      await fill(store, 5);
      await store.prune({ maxOperations: 1 });
      await fill(store, 2, 'again');
      assert.deepEqual((await store.listOperations()).map((o) => o.id), ['again-newest', 'again-00001', 'again-00000', 'op-newest', 'op-00004']);
      // A generated message id is never reused: the newest operation (the highest number) is never pruned.
      const ids = (await store.listMessages('again-00000')).map((m) => m.id);
      assert.equal(new Set(ids).size, ids.length);
      // The store's own connection has foreign keys on again: a thread that still has operations cannot be deleted.
      const db = (store as unknown as { db: Database.Database }).db;
      assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
      assert.throws(() => db.prepare('DELETE FROM threads WHERE id = ?').run('thread_again-00000'), /FOREIGN KEY/);
    } finally {
      await store.close();
    }
  });

  describe('migration from schema version 6', () => {
    /** A version 6 database written with the version 1-6 SQL only, auto_vacuum off: one finished conversation. */
    function versionSixDatabase(): string {
      const file = freshPath();
      mkdirSync(path.dirname(file), { recursive: true });
      const db = new Database(file);
      try {
        db.pragma('page_size = 2048');
        db.pragma('journal_mode = WAL');
        db.pragma('foreign_keys = ON');
        applyMigrations(db, 0, undefined, MIGRATIONS.slice(0, 6));
        db.prepare("INSERT INTO agent_definitions (seq, digest, agent) VALUES (1, 'd1', ?)").run(JSON.stringify({ id: 'agent-a' }));
        db.prepare("INSERT INTO threads (seq, id, agent_id, created_at, updated_at) VALUES (1, 'thread_op-a', 'agent-a', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')").run();
        db.prepare("INSERT INTO threads (seq, id, agent_id, created_at, updated_at) VALUES (2, 'thread_op-b', 'agent-a', '2025-01-02T00:00:00.000Z', '2025-01-02T00:00:00.000Z')").run();
        const op = db.prepare(
          `INSERT INTO operations (seq, id, agent_id, status, reason, state, created_at, updated_at, agent_seq, context, thread_seq, position_base)
           VALUES (?, ?, 'agent-a', ?, ?, ?, ?, ?, 1, '{}', ?, 0)`,
        );
        op.run(1, 'op-a', 'done', 'done', JSON.stringify(state(2)), '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:05.000Z', 1);
        op.run(2, 'op-b', 'waiting_approval', null, JSON.stringify(state(1)), '2025-01-02T00:00:00.000Z', '2025-01-02T00:00:05.000Z', 2);
        const message = db.prepare(
          "INSERT INTO operation_log (key, operation_seq, entry, created_at, message_seq, message_id, role, content) VALUES (?, ?, 'message', ?, ?, ?, ?, ?)",
        );
        message.run(16777217, 1, '2025-01-01T00:00:01.000Z', 1, 'm-1', 'user', 'hello '.repeat(2000));
        message.run(16777218, 1, '2025-01-01T00:00:02.000Z', 2, 'm-2', 'assistant', 'hi');
        message.run(2 * 16777216 + 1, 2, '2025-01-02T00:00:01.000Z', 1, 'b-1', 'user', 'other');
        db.prepare("INSERT INTO operation_log (key, operation_seq, entry, created_at, step_index, step_kind, started_at, finished_at, usage, summary) VALUES (?, 1, 'step', 'c', 0, 'call_llm', 's', 'f', ?, '{}')")
          .run(16777219, JSON.stringify(state().usage));
        db.prepare("INSERT INTO hook_registrations (operation_id, position, hook) VALUES ('op-a', 0, '{}')").run();
        assert.equal(db.pragma('auto_vacuum', { simple: true }), 0);
      } finally {
        db.close();
      }
      return file;
    }

    it('turns auto_vacuum to INCREMENTAL with a one-time VACUUM, keeps every row, and logs the migration', async () => {
      const file = versionSixDatabase();
      const { logger, lines } = captureLogger();
      const store = new SqliteStore({ path: file, logger, backgroundCheckpoints: false });
      await store.migrate();
      try {
        assert.equal(LATEST_SCHEMA_VERSION, 9);
        const a = (await store.getOperation('op-a'))!;
        assert.deepEqual([a.status, a.threadId, a.state.stepIndex, a.updatedAt], ['done', 'thread_op-a', 2, '2025-01-01T00:00:05.000Z']);
        assert.deepEqual((await store.listMessages('op-a')).map((m) => [m.id, m.seq, m.position]), [['m-1', 1, 1], ['m-2', 2, 2]]);
        assert.equal((await store.listSteps('op-a')).length, 1);
        assert.equal((await store.getOperation('op-b'))!.status, 'waiting_approval');
        assert.ok(lines.some((l) => { const r = JSON.parse(l) as { msg?: string; version?: number }; return r.msg === 'store migrated' && r.version === 7; }), 'the migration is logged');
      } finally {
        await store.close();
      }
      const after = pages(file);
      assert.deepEqual([after.version, after.autoVacuum, after.integrity], [LATEST_SCHEMA_VERSION, AUTO_VACUUM_INCREMENTAL, 'ok']);
    });

    it('prunes a migrated file and gives its space back; the parked operation stays', async () => {
      const file = versionSixDatabase();
      const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await store.migrate();
      await store.createOperation({ id: 'op-c', agentId: 'agent-z', agent: {}, context: {}, state: state() }, [], []);
      const before = pages(file).pageCount;
      const counts = await store.prune({ maxAgeMs: 1000 });
      assert.deepEqual([counts.threads, counts.operations, counts.messages, counts.steps, counts.hooks], [1, 1, 2, 1, 1]);
      assert.ok(counts.reclaimedBytes > 0);
      assert.equal(await store.getOperation('op-a'), undefined);
      assert.equal((await store.getOperation('op-b'))!.status, 'waiting_approval');
      await store.close();
      assert.ok(pages(file).pageCount < before, 'fewer pages after the prune');
    });

    it('finishes the upgrade of a file a crash left between the VACUUM and the version bump', async () => {
      const file = versionSixDatabase();
      const db = new Database(file);
      try {
        db.pragma(`auto_vacuum = ${AUTO_VACUUM_INCREMENTAL}`);
        db.exec('VACUUM'); // what migration 7 did before the crash; user_version is still 6
        assert.equal(db.pragma('user_version', { simple: true }), 6);
      } finally {
        db.close();
      }
      const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await store.migrate();
      try {
        assert.deepEqual((await store.listMessages('op-a')).map((m) => m.id), ['m-1', 'm-2']);
      } finally {
        await store.close();
      }
      assert.deepEqual([pages(file).version, pages(file).autoVacuum], [LATEST_SCHEMA_VERSION, AUTO_VACUUM_INCREMENTAL]);
    });
  });
});
