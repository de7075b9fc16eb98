import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { withDefaults } from '../../../config/defaults.js';
import { isHookgateError } from '../../../kernel/errors.js';
import { createLogger } from '../../../kernel/logger.js';
import { PluginHost } from '../../../kernel/plugin-host.js';
import type { OperationState } from '../../../kernel/store.js';
import { Config, Logger, Store } from '../../../kernel/tokens.js';
import storeSqlitePlugin from '../../../plugins/store-sqlite/index.js';
import { applyMigrations, LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../../plugins/store-sqlite/migrations.js';
import { BackgroundCheckpointer, COMMITS_BEFORE_START } from '../../../plugins/store-sqlite/background-checkpointer.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { FIND_OPERATION_IDS_SQL, SqliteStore } from '../../../plugins/store-sqlite/sqlite-store.js';
import { prefixUpperBound } from '../../../plugins/store-sqlite/prefix-range.js';
import { describeStoreContract, rejectsWithCode } from '../store-contract.js';

const run = promisify(execFile);
const childScript = fileURLToPath(new URL('./fixtures/store-child.js', import.meta.url));

let dir: string;
let counter = 0;
/** A path in a folder that does not exist yet. */
const freshPath = () => path.join(dir, `case-${++counter}`, 'data', 'hookgate.db');

function state(stepIndex = 0): OperationState {
  return {
    stepIndex,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 },
    pendingToolCalls: [],
    approvedToolCallIds: [],
    modelTurns: 0,
    compactions: 0,
  };
}

function inspect(file: string): { version: number; tables: string[]; journalMode: string } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return {
      version: db.pragma('user_version', { simple: true }) as number,
      tables: db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[],
      journalMode: db.pragma('journal_mode', { simple: true }) as string,
    };
  } finally {
    db.close();
  }
}

/** Writes `bytes` at a fresh path and returns the path. */
function fileWith(bytes: Buffer): string {
  const file = freshPath();
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, bytes);
  return file;
}

describe('store-sqlite', () => {
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'hookgate-store-sqlite-'));
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  describeStoreContract('store-sqlite', async () => {
    const store = new SqliteStore({ path: freshPath() });
    await store.migrate();
    return store;
  });

  describeStoreContract('store-sqlite (:memory:)', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    await store.migrate();
    return store;
  });

  describe('store-sqlite id prefixes', () => {
    it('plans both prefix look-ups as searches of the index on operations.id, never a scan of the table', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      await store.close();
      const db = new Database(file, { readonly: true });
      try {
        const plan = (sql: string, ...params: unknown[]) =>
          (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
        const bounded = plan(FIND_OPERATION_IDS_SQL.bounded, 'op_01', 'op_02', 10);
        const unbounded = plan(FIND_OPERATION_IDS_SQL.unbounded, { prefix: 'op_01', limit: 10 });
        for (const detail of [bounded, unbounded]) {
          assert.match(detail, /SEARCH operations USING COVERING INDEX sqlite_autoindex_operations_1 \(id>\?/, detail);
          assert.doesNotMatch(detail, /SCAN|TEMP B-TREE/, detail);
        }
        assert.match(bounded, /id>\? AND id<\?/);
      } finally {
        db.close();
      }
    });

    it('bounds a prefix by its last code point that can grow', () => {
      assert.equal(prefixUpperBound('op_01a'), 'op_01b');
      assert.equal(prefixUpperBound('op_\u{10FFFF}'), 'op`');
      assert.equal(prefixUpperBound('a\uD7FF'), 'a\uE000');
      assert.equal(prefixUpperBound(''), undefined);
      assert.equal(prefixUpperBound('\u{10FFFF}\u{10FFFF}'), undefined);
    });
  });

  describe('store-sqlite migrations', () => {
    const ALL_TABLES = ['agent_definitions', 'decision_policies', 'decisions', 'hook_registrations', 'operation_log', 'operations', 'store_identity', 'submissions', 'threads', 'tool_steps', 'user_values', 'users'];

    it('creates a missing file and its folders at the latest schema version', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      await store.close();
      const info = inspect(file);
      assert.equal(info.version, LATEST_SCHEMA_VERSION);
      assert.equal(store.schemaVersion, LATEST_SCHEMA_VERSION);
      assert.deepEqual(info.tables, ALL_TABLES);
    });

    it('migrates an empty file from scratch', async () => {
      const file = fileWith(Buffer.alloc(0));
      const store = new SqliteStore({ path: file });
      await store.migrate();
      await store.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [], []);
      await store.close();
      assert.equal(inspect(file).version, LATEST_SCHEMA_VERSION);
      assert.deepEqual(inspect(file).tables, ALL_TABLES);
    });

    it('puts the database in WAL mode', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      await store.close();
      assert.equal(inspect(file).journalMode, 'wal');
    });

    it('lists migrations numbered from 1 without gaps', () => {
      assert.deepEqual(
        MIGRATIONS.map((m) => m.version),
        MIGRATIONS.map((_, i) => i + 1),
      );
    });

    it('rolls back a failing migration together with its version bump', () => {
      const db = new Database(':memory:');
      try {
        const migrations = [
          { version: 1, description: 'one', sql: 'CREATE TABLE one (a);' },
          { version: 2, description: 'two, broken halfway', sql: 'CREATE TABLE two (a); INSERT INTO missing VALUES (1);' },
        ];
        assert.throws(() => applyMigrations(db, 0, undefined, migrations), /no such table: missing/);
        assert.equal(db.pragma('user_version', { simple: true }), 1);
        assert.deepEqual(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all(), ['one']);
      } finally {
        db.close();
      }
    });

    it('reopens a migrated file and keeps its data', async () => {
      const file = freshPath();
      const first = new SqliteStore({ path: file });
      await first.migrate();
      await first.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [{ role: 'user', content: 'hi' }], []);
      await first.close();
      const second = new SqliteStore({ path: file });
      await second.migrate();
      assert.deepEqual((await second.listMessages('op-1')).map((m) => m.content), ['hi']);
      await second.close();
      assert.equal(inspect(file).version, LATEST_SCHEMA_VERSION);
    });

    it('refuses a newer schema with STORE_SCHEMA_NEWER naming both versions, and leaves the file untouched', async () => {
      const file = freshPath();
      mkdirSync(path.dirname(file), { recursive: true });
      const newer = LATEST_SCHEMA_VERSION + 5;
      const db = new Database(file);
      db.exec('CREATE TABLE future (a)');
      db.pragma(`user_version = ${newer}`);
      db.close();
      const before = readFileSync(file);

      const store = new SqliteStore({ path: file });
      const err = await rejectsWithCode(store.migrate(), 'STORE_SCHEMA_NEWER');
      assert.match(err.message, new RegExp(`version ${newer}\\b`));
      assert.match(err.message, new RegExp(`version ${LATEST_SCHEMA_VERSION}\\b`));
      assert.ok(err.message.includes(file));
      assert.deepEqual(readFileSync(file), before);
      assert.equal(inspect(file).version, newer);
    });

    it('refuses a file of random bytes with STORE_CORRUPT naming the path, and leaves it untouched', async () => {
      const bytes = randomBytes(16384);
      const file = fileWith(bytes);
      const err = await rejectsWithCode(new SqliteStore({ path: file }).migrate(), 'STORE_CORRUPT');
      assert.ok(err.message.includes(file), err.message);
      assert.deepEqual(readFileSync(file), bytes);
      assert.equal(existsSync(`${file}-wal`), false);
    });

    it('refuses a SQLite file whose pages are damaged with STORE_CORRUPT, and leaves it untouched', async () => {
      const source = freshPath();
      const store = new SqliteStore({ path: source });
      await store.migrate();
      await store.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [{ role: 'user', content: 'x'.repeat(5000) }], []);
      await store.close();
      const damaged = Buffer.from(readFileSync(source));
      randomBytes(damaged.length - 100).copy(damaged, 100); // keeps the 100-byte header, destroys every page
      const file = fileWith(damaged);

      const err = await rejectsWithCode(new SqliteStore({ path: file }).migrate(), 'STORE_CORRUPT');
      assert.ok(err.message.includes(file), err.message);
      assert.deepEqual(readFileSync(file), damaged);
    });

    it('refuses a SQLite database another program created, and leaves it untouched', async () => {
      const file = freshPath();
      mkdirSync(path.dirname(file), { recursive: true });
      const db = new Database(file);
      db.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices (total) VALUES (12.5);");
      db.close();
      const before = readFileSync(file);
      await rejectsWithCode(new SqliteStore({ path: file }).migrate(), 'STORE_CORRUPT');
      assert.deepEqual(readFileSync(file), before);
    });

    it('rejects calls before migrate with KERNEL_NOT_STARTED', async () => {
      const file = freshPath();
      await rejectsWithCode(new SqliteStore({ path: file }).getOperation('op-1'), 'KERNEL_NOT_STARTED');
      assert.equal(existsSync(file), false);
    });
  });

  describe('store-sqlite migration from schema version 1', () => {
    const usage = { promptTokens: 3, completionTokens: 4, totalTokens: 7, cost: 0.25 };

    /** A version 1 database with rows in every table, written with the version 1 SQL only. */
    function versionOneDatabase(): string {
      const file = freshPath();
      mkdirSync(path.dirname(file), { recursive: true });
      const db = new Database(file);
      try {
        db.pragma('journal_mode = WAL');
        db.pragma('foreign_keys = ON');
        applyMigrations(db, 0, undefined, [MIGRATIONS[0]!]);
        const op = db.prepare(
          `INSERT INTO operations (id, agent_id, parent_operation_id, user_id, status, reason, agent, context, state, error, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        op.run('op-a', 'agent-a', null, 'u-1', 'error', 'error', JSON.stringify({ id: 'agent-a', big: 'x'.repeat(3000) }),
          JSON.stringify({ topicId: 't1' }), JSON.stringify(state(2)), JSON.stringify({ message: 'boom', code: 'MODEL_FAILED' }),
          '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:05.000Z');
        op.run('op-b', 'agent-b', 'op-a', null, 'running', null, JSON.stringify({ id: 'agent-b' }), '{}', JSON.stringify(state()), null,
          '2025-01-02T00:00:00.000Z', '2025-01-02T00:00:00.000Z');
        const message = db.prepare(
          `INSERT INTO messages (id, operation_id, seq, role, content, tool_calls, tool_call_id, tool_result, compacted_into, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        // Inserted out of seq order and interleaved between operations, as v1 random ids allowed.
        message.run('zz-3', 'op-a', 3, 'summary', 'short', null, null, null, null, '2025-01-01T00:00:03.000Z');
        message.run('aa-1', 'op-a', 1, 'user', 'read a.txt', null, null, null, 'zz-3', '2025-01-01T00:00:01.000Z');
        message.run('b-1', 'op-b', 1, 'user', 'other', null, null, null, null, '2025-01-02T00:00:01.000Z');
        message.run('mm-2', 'op-a', 2, 'tool', 'A', null, 'call_1', JSON.stringify({ content: 'A', success: true }), 'zz-3', '2025-01-01T00:00:02.000Z');
        message.run('aa-4', 'op-a', 4, 'assistant', '', JSON.stringify([{ id: 'call_2', identifier: 'fs', apiName: 'readFile', args: { path: 'b' } }]),
          null, null, null, '2025-01-01T00:00:04.000Z');
        const step = db.prepare(
          'INSERT INTO steps (operation_id, step_index, kind, started_at, finished_at, usage, summary) VALUES (?, ?, ?, ?, ?, ?, ?)',
        );
        step.run('op-a', 1, 'call_tool', 's1', 'f1', JSON.stringify(usage), JSON.stringify({ first: true }));
        step.run('op-b', 0, 'call_llm', 's0', 'f0', JSON.stringify(usage), '{}');
        step.run('op-a', 0, 'call_llm', 's0', 'f0', JSON.stringify(usage), '{}');
        step.run('op-a', 1, 'call_tool', 's1b', 'f1b', JSON.stringify(usage), JSON.stringify({ second: true }));
        db.prepare('INSERT INTO hook_registrations (operation_id, position, hook) VALUES (?, ?, ?)').run('op-a', 0, JSON.stringify({ id: 'h-1' }));
        db.prepare('INSERT INTO users (id, email) VALUES (?, ?)').run('u-1', 'u1@example.test');
        db.prepare(
          `INSERT INTO decisions (id, created_at, operation_id, event, policies, decision, defaulted, latency_micros, input_digest)
           VALUES ('d-1', '2025-01-01T00:00:02.000Z', 'op-a', 'beforeToolCall', ?, 'deny', 0, 12, 'sha256:x')`,
        ).run(JSON.stringify([{ id: 'p-1', effect: 'deny', mode: 'enforce' }]));
        db.prepare('INSERT INTO decision_policies (policy_id, decision_seq) VALUES (?, 1)').run('p-1');
      } finally {
        db.close();
      }
      return file;
    }

    it('moves every row of a version 1 database to the latest schema and reads it back', async () => {
      const file = versionOneDatabase();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      try {
        assert.equal(inspect(file).version, LATEST_SCHEMA_VERSION);
        assert.deepEqual(await store.getOperation('op-a'), {
          id: 'op-a',
          agentId: 'agent-a',
          threadId: 'thread_op-a',
          userId: 'u-1',
          status: 'error',
          reason: 'error',
          agent: { id: 'agent-a', big: 'x'.repeat(3000) },
          context: { topicId: 't1' },
          state: state(2),
          error: { message: 'boom', code: 'MODEL_FAILED' },
          createdAt: '2025-01-01T00:00:00.000Z',
          updatedAt: '2025-01-01T00:00:05.000Z',
          version: 0,
        });
        assert.deepEqual((await store.listOperations()).map((o) => [o.id, o.parentOperationId, o.agent]), [
          ['op-b', 'op-a', { id: 'agent-b' }],
          ['op-a', undefined, { id: 'agent-a', big: 'x'.repeat(3000) }],
        ]);
        assert.deepEqual((await store.listOperations({ status: 'running' })).map((o) => o.id), ['op-b']);
        assert.deepEqual(await store.listMessages('op-a', { includeCompacted: true }), [
          { id: 'aa-1', operationId: 'op-a', seq: 1, position: 1, role: 'user', content: 'read a.txt', compactedInto: 'zz-3', createdAt: '2025-01-01T00:00:01.000Z' },
          { id: 'mm-2', operationId: 'op-a', seq: 2, position: 2, role: 'tool', content: 'A', toolCallId: 'call_1', toolResult: { content: 'A', success: true },
            compactedInto: 'zz-3', createdAt: '2025-01-01T00:00:02.000Z' },
          { id: 'zz-3', operationId: 'op-a', seq: 3, position: 3, role: 'summary', content: 'short', createdAt: '2025-01-01T00:00:03.000Z' },
          { id: 'aa-4', operationId: 'op-a', seq: 4, position: 4, role: 'assistant', content: '',
            toolCalls: [{ id: 'call_2', identifier: 'fs', apiName: 'readFile', args: { path: 'b' } }], createdAt: '2025-01-01T00:00:04.000Z' },
        ]);
        assert.deepEqual((await store.listMessages('op-a')).map((m) => m.id), ['zz-3', 'aa-4']);
        assert.deepEqual((await store.listMessages('op-b')).map((m) => [m.id, m.seq]), [['b-1', 1]]);
        assert.deepEqual((await store.listSteps('op-a')).map((s) => [s.stepIndex, s.startedAt, s.summary]), [
          [0, 's0', {}],
          [1, 's1', { first: true }],
          [1, 's1b', { second: true }],
        ]);
        assert.deepEqual((await store.listSteps('op-b')).map((s) => [s.operationId, s.stepIndex, s.usage]), [['op-b', 0, usage]]);
        assert.deepEqual(await store.loadHooks('op-a'), [{ id: 'h-1' }]);
        assert.deepEqual(await store.getUser('u-1'), { id: 'u-1', email: 'u1@example.test' });
        assert.deepEqual((await store.listDecisions({ policyId: 'p-1' })).map((d) => [d.id, d.operationId, d.decision]), [['d-1', 'op-a', 'deny']]);
      } finally {
        await store.close();
      }
    });

    it('continues the migrated operations: seq after the last message, steps after those of the same index, ids still unique', async () => {
      const store = new SqliteStore({ path: versionOneDatabase() });
      await store.migrate();
      try {
        const written = await store.commitStep('op-a', {
          state: state(3),
          step: { operationId: 'op-a', stepIndex: 1, kind: 'call_tool', startedAt: 's1c', finishedAt: 'f1c', usage, summary: { third: true } },
          messages: [{ role: 'tool', content: 'B', toolCallId: 'call_2' }],
        });
        assert.deepEqual(written.map((m) => m.seq), [5]);
        assert.deepEqual((await store.listSteps('op-a')).map((s) => s.startedAt), ['s0', 's1', 's1b', 's1c']);
        await rejectsWithCode(store.commitStep('op-b', { state: state(), messages: [{ id: 'mm-2', role: 'user', content: 'dup' }] }), 'STORE_CONFLICT');
        await store.commitStep('op-b', { state: state(), compact: { messageIds: ['b-1'], summaryId: 'x' } });
        assert.deepEqual((await store.listMessages('op-b')).map((m) => m.id), []);
      } finally {
        await store.close();
      }
    });
  });

  describe('store-sqlite migration from schema version 2', () => {
    const usage = { promptTokens: 3, completionTokens: 4, totalTokens: 7, cost: 0.25 };

    /** A version 2 database with operations, messages and steps, written with the version 1 and 2 SQL only. */
    function versionTwoDatabase(): string {
      const file = freshPath();
      mkdirSync(path.dirname(file), { recursive: true });
      const db = new Database(file);
      try {
        db.pragma('journal_mode = WAL');
        db.pragma('foreign_keys = ON');
        applyMigrations(db, 0, undefined, MIGRATIONS.slice(0, 2));
        const op = db.prepare(
          `INSERT INTO operations (seq, id, agent_id, parent_operation_id, user_id, status, reason, state, error, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        op.run(1, 'op-a', 'agent-a', null, 'u-1', 'waiting_approval', null, JSON.stringify(state(2)), null, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:05.000Z');
        op.run(2, 'op-b', 'agent-b', 'op-a', null, 'running', null, JSON.stringify(state(1)), null, '2025-01-02T00:00:00.000Z', '2025-01-02T00:00:01.000Z');
        const definition = db.prepare('INSERT INTO operation_definitions (operation_seq, agent, context) VALUES (?, ?, ?)');
        definition.run(1, JSON.stringify({ id: 'agent-a' }), JSON.stringify({ topicId: 't1' }));
        definition.run(2, JSON.stringify({ id: 'agent-b' }), '{}');
        db.prepare(
          `INSERT INTO messages (operation_seq, seq, id, role, content, tool_calls, tool_call_id, tool_result, compacted_into, created_at)
           VALUES (1, 1, 'm-1', 'user', 'hi', NULL, NULL, NULL, NULL, '2025-01-01T00:00:01.000Z')`,
        ).run();
        const step = db.prepare(
          'INSERT INTO steps (operation_seq, step_index, seq, kind, started_at, finished_at, usage, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        );
        step.run(1, 1, 2, 'call_tool', 's1b', 'f1b', JSON.stringify(usage), JSON.stringify({ second: true }));
        step.run(2, 0, 1, 'call_llm', 'b0', 'bf0', JSON.stringify(usage), '{}');
        step.run(1, 0, 1, 'call_llm', 's0', 'f0', JSON.stringify(usage), '{}');
        step.run(1, 1, 1, 'call_tool', 's1', 'f1', JSON.stringify(usage), JSON.stringify({ first: true }));
      } finally {
        db.close();
      }
      return file;
    }

    it('keeps every operation, message and step of a version 2 database and reads them back', async () => {
      const file = versionTwoDatabase();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      try {
        assert.equal(inspect(file).version, LATEST_SCHEMA_VERSION);
        assert.deepEqual(await store.getOperation('op-a'), {
          id: 'op-a',
          agentId: 'agent-a',
          threadId: 'thread_op-a',
          userId: 'u-1',
          status: 'waiting_approval',
          agent: { id: 'agent-a' },
          context: { topicId: 't1' },
          state: state(2),
          createdAt: '2025-01-01T00:00:00.000Z',
          updatedAt: '2025-01-01T00:00:05.000Z',
          version: 0,
        });
        assert.deepEqual((await store.listOperations()).map((o) => [o.id, o.state.stepIndex, o.updatedAt]), [
          ['op-b', 1, '2025-01-02T00:00:01.000Z'],
          ['op-a', 2, '2025-01-01T00:00:05.000Z'],
        ]);
        assert.deepEqual((await store.listSteps('op-a')).map((s) => [s.stepIndex, s.startedAt, s.summary]), [
          [0, 's0', {}],
          [1, 's1', { first: true }],
          [1, 's1b', { second: true }],
        ]);
        assert.deepEqual((await store.listSteps('op-b')).map((s) => [s.operationId, s.stepIndex, s.finishedAt, s.usage]), [['op-b', 0, 'bf0', usage]]);
        assert.deepEqual((await store.listMessages('op-a')).map((m) => [m.id, m.seq]), [['m-1', 1]]);
      } finally {
        await store.close();
      }
    });

    it('continues a migrated operation: a step-only commit reads back as its state, steps after the migrated ones', async () => {
      const store = new SqliteStore({ path: versionTwoDatabase() });
      await store.migrate();
      try {
        const step = { operationId: 'op-a', stepIndex: 1, kind: 'call_tool' as const, startedAt: 's1c', finishedAt: 'f1c', usage, summary: {} };
        await store.commitStep('op-a', { state: state(3), step });
        const op = (await store.getOperation('op-a'))!;
        assert.deepEqual([op.state, op.status], [state(3), 'waiting_approval']);
        assert.ok(op.updatedAt > '2025-01-01T00:00:05.000Z');
        assert.deepEqual((await store.listSteps('op-a')).map((s) => s.startedAt), ['s0', 's1', 's1b', 's1c']);
        assert.equal((await store.getOperation('op-b'))!.state.stepIndex, 1);
      } finally {
        await store.close();
      }
    });
  });

  describe('store-sqlite migration from schema version 3', () => {
    const usage = { promptTokens: 3, completionTokens: 4, totalTokens: 7, cost: 0.25 };

    /** A version 3 database written with the version 1-3 SQL only: op-a's newest step carries a newer state than its row. */
    function versionThreeDatabase(): string {
      const file = freshPath();
      mkdirSync(path.dirname(file), { recursive: true });
      const db = new Database(file);
      try {
        db.pragma('journal_mode = WAL');
        db.pragma('foreign_keys = ON');
        applyMigrations(db, 0, undefined, MIGRATIONS.slice(0, 3));
        const op = db.prepare(
          `INSERT INTO operations (seq, id, agent_id, parent_operation_id, user_id, status, reason, state, error, created_at, updated_at, state_version)
           VALUES (?, ?, ?, NULL, NULL, ?, NULL, ?, NULL, ?, ?, ?)`,
        );
        op.run(1, 'op-a', 'agent-a', 'running', JSON.stringify(state(1)), '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:01.000Z', 1);
        op.run(2, 'op-b', 'agent-b', 'waiting_approval', JSON.stringify(state(4)), '2025-01-02T00:00:00.000Z', '2025-01-02T00:00:09.000Z', 3);
        const definition = db.prepare('INSERT INTO operation_definitions (operation_seq, agent, context) VALUES (?, ?, ?)');
        definition.run(1, JSON.stringify({ id: 'agent-a' }), '{}');
        definition.run(2, JSON.stringify({ id: 'agent-b' }), '{}');
        const message = db.prepare(
          `INSERT INTO messages (operation_seq, seq, id, role, content, tool_calls, tool_call_id, tool_result, compacted_into, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)`,
        );
        message.run(1, 1, 'm-1', 'user', 'read a.txt', null, null, '2025-01-01T00:00:01.000Z');
        message.run(1, 2, 'm-2', 'assistant', '', JSON.stringify([{ id: 'call_1', identifier: 'fs', apiName: 'readFile', args: { path: 'a' } }]), null,
          '2025-01-01T00:00:02.000Z');
        message.run(1, 3, 'm-3', 'tool', '', null, 'call_1', '2025-01-01T00:00:03.000Z'); // a deferred result's empty placeholder
        message.run(2, 1, 'b-1', 'user', 'other', null, null, '2025-01-02T00:00:01.000Z');
        const step = db.prepare(
          `INSERT INTO steps (key, operation_seq, step_index, kind, started_at, finished_at, usage, summary, state, state_version, state_updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        step.run(16777217, 1, 0, 'call_llm', 's0', 'f0', JSON.stringify(usage), '{}', JSON.stringify(state(2)), 2, '2025-01-01T00:00:02.500Z');
        step.run(16777218, 1, 1, 'call_tool', 's1', 'f1', JSON.stringify(usage), JSON.stringify({ first: true }), JSON.stringify(state(3)), 3,
          '2025-01-01T00:00:03.500Z');
        // op-b: a step whose state is older than the row's (a status change came after it), and one with no state.
        step.run(2 * 16777216 + 1, 2, 0, 'call_llm', 'b0', 'bf0', JSON.stringify(usage), '{}', JSON.stringify(state(2)), 2, '2025-01-02T00:00:02.000Z');
        step.run(2 * 16777216 + 2, 2, 1, 'request_human_approve', 'b1', 'bf1', JSON.stringify(usage), '{}', null, null, null);
      } finally {
        db.close();
      }
      return file;
    }

    it('keeps every message, step and current state of a version 3 database', async () => {
      const file = versionThreeDatabase();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      try {
        assert.equal(inspect(file).version, LATEST_SCHEMA_VERSION);
        const a = (await store.getOperation('op-a'))!;
        assert.deepEqual([a.state, a.updatedAt], [state(3), '2025-01-01T00:00:03.500Z']);
        const b = (await store.getOperation('op-b'))!;
        assert.deepEqual([b.state, b.status, b.updatedAt], [state(4), 'waiting_approval', '2025-01-02T00:00:09.000Z']);
        assert.deepEqual((await store.listMessages('op-a')).map((m) => [m.id, m.seq, m.role, m.createdAt]), [
          ['m-1', 1, 'user', '2025-01-01T00:00:01.000Z'],
          ['m-2', 2, 'assistant', '2025-01-01T00:00:02.000Z'],
          ['m-3', 3, 'tool', '2025-01-01T00:00:03.000Z'],
        ]);
        assert.deepEqual((await store.listMessages('op-a'))[1]!.toolCalls, [{ id: 'call_1', identifier: 'fs', apiName: 'readFile', args: { path: 'a' } }]);
        assert.deepEqual((await store.listSteps('op-a')).map((s) => [s.stepIndex, s.kind, s.startedAt, s.summary, s.usage]), [
          [0, 'call_llm', 's0', {}, usage],
          [1, 'call_tool', 's1', { first: true }, usage],
        ]);
        assert.deepEqual((await store.listSteps('op-b')).map((s) => [s.stepIndex, s.kind]), [[0, 'call_llm'], [1, 'request_human_approve']]);
      } finally {
        await store.close();
      }
    });

    it('continues a migrated operation: seq, steps, states, placeholders and compaction; migrated ids stay taken', async () => {
      const store = new SqliteStore({ path: versionThreeDatabase() });
      await store.migrate();
      try {
        const step = { operationId: 'op-a', stepIndex: 2, kind: 'call_llm' as const, startedAt: 's2', finishedAt: 'f2', usage, summary: {} };
        const [written] = await store.commitStep('op-a', { state: state(5), step, messages: [{ role: 'assistant', content: 'next' }] });
        assert.equal(written!.seq, 4);
        assert.match(written!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
        assert.equal((await store.getOperation('op-a'))!.state.stepIndex, 5);
        assert.deepEqual((await store.listSteps('op-a')).map((s) => s.startedAt), ['s0', 's1', 's2']);
        assert.equal(await store.publishToolResult('op-a', 'call_1', { content: 'A', success: true }, { state: state(6) }), true);
        assert.deepEqual((await store.listMessages('op-a')).map((m) => [m.id, m.content]), [['m-1', 'read a.txt'], ['m-2', ''], ['m-3', 'A'], [written!.id, 'next']]);
        assert.equal((await store.getOperation('op-a'))!.state.stepIndex, 6);
        await store.commitStep('op-a', { state: state(7), messages: [{ id: 's-1', role: 'summary', content: 'short' }], compact: { messageIds: ['m-1', written!.id], summaryId: 's-1' } });
        assert.deepEqual((await store.listMessages('op-a')).map((m) => m.id), ['m-2', 'm-3', 's-1']);
        await rejectsWithCode(store.commitStep('op-b', { state: state(), messages: [{ id: 'm-2', role: 'user', content: 'dup' }] }), 'STORE_CONFLICT');
        assert.deepEqual((await store.listMessages('op-b')).map((m) => m.id), ['b-1']);
        assert.equal((await store.getOperation('op-b'))!.state.stepIndex, 4);
      } finally {
        await store.close();
      }
    });
  });

  describe('store-sqlite agent definitions', () => {
    function definitionRows(file: string): Array<{ digest: string | null; agent: string }> {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        return db.prepare('SELECT digest, agent FROM agent_definitions ORDER BY seq').all() as Array<{ digest: string | null; agent: string }>;
      } finally {
        db.close();
      }
    }

    it('stores each distinct agent definition once; every operation reads back its own', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await store.migrate();
      const big = { id: 'agent-a', instructions: 'x'.repeat(4000) };
      try {
        for (const id of ['op-1', 'op-2', 'op-3']) await store.createOperation({ id, agentId: 'agent-a', agent: big, context: { n: id }, state: state() }, [], []);
        await store.createOperation({ id: 'op-4', agentId: 'agent-a', agent: { ...big, instructions: 'changed' }, context: {}, state: state() }, [], []);
        // A failed create (duplicate id) with a new definition leaves nothing behind.
        await rejectsWithCode(store.createOperation({ id: 'op-1', agentId: 'agent-b', agent: { id: 'agent-b' }, context: {}, state: state() }, [], []), 'STORE_CONFLICT');
        assert.deepEqual((await store.listOperations()).map((o) => [o.id, (o.agent as { instructions: string }).instructions.length, o.context]), [
          ['op-4', 7, {}],
          ['op-3', 4000, { n: 'op-3' }],
          ['op-2', 4000, { n: 'op-2' }],
          ['op-1', 4000, { n: 'op-1' }],
        ]);
      } finally {
        await store.close();
      }
      const rows = definitionRows(file);
      assert.equal(rows.length, 2);
      for (const row of rows) assert.match(row.digest!, /^[0-9a-f]{64}$/);
    });

    it('reads back a deep-frozen definition for every operation of it, and stores it again after its row was removed', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await store.migrate();
      const agent = Object.freeze({ id: 'agent-a', model: Object.freeze({ provider: 'scripted', turns: Object.freeze([Object.freeze({ text: 'hi' })]) }) });
      try {
        const one = await store.createOperation({ id: 'op-1', agentId: 'agent-a', agent, context: {}, state: state() }, [], []);
        assert.deepEqual(one.agent, agent);
        assert.deepEqual((await store.getOperation('op-1'))!.agent, agent);
        // What a prune does to a definition no operation uses any more.
        const raw = new Database(file);
        try {
          raw.prepare("DELETE FROM operations WHERE id = 'op-1'").run();
          raw.prepare('DELETE FROM agent_definitions').run();
        } finally {
          raw.close();
        }
        const two = await store.createOperation({ id: 'op-2', agentId: 'agent-a', agent, context: {}, state: state() }, [], []);
        assert.deepEqual(two.agent, agent);
        assert.deepEqual((await store.getOperation('op-2'))!.agent, agent);
      } finally {
        await store.close();
      }
      assert.equal(definitionRows(file).length, 1);
    });

    it('stores a definition that is not deep-frozen as it is at each create, changed in place or not', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await store.migrate();
      const agent = Object.freeze({ id: 'agent-a', model: { provider: 'scripted', name: 'first' } }); // frozen on top only
      try {
        const one = await store.createOperation({ id: 'op-1', agentId: 'agent-a', agent, context: {}, state: state() }, [], []);
        agent.model.name = 'second';
        const two = await store.createOperation({ id: 'op-2', agentId: 'agent-a', agent, context: {}, state: state() }, [], []);
        assert.deepEqual([one.agent, two.agent].map((a) => (a as typeof agent).model.name), ['first', 'second']);
        assert.deepEqual([(await store.getOperation('op-1'))!.agent, (await store.getOperation('op-2'))!.agent].map((a) => (a as typeof agent).model.name), ['first', 'second']);
        (one.agent as typeof agent).model.name = 'changed by the caller';
        assert.equal(((await store.getOperation('op-1'))!.agent as typeof agent).model.name, 'first');
      } finally {
        await store.close();
      }
      assert.equal(definitionRows(file).length, 2);
    });

    it('migrates one row per distinct definition text and keeps each operation on its own', async () => {
      const file = freshPath();
      mkdirSync(path.dirname(file), { recursive: true });
      const db = new Database(file);
      try {
        db.pragma('journal_mode = WAL');
        applyMigrations(db, 0, undefined, MIGRATIONS.slice(0, 3));
        const op = db.prepare(
          `INSERT INTO operations (seq, id, agent_id, status, state, created_at, updated_at) VALUES (?, ?, 'a', 'done', ?, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`,
        );
        const definition = db.prepare('INSERT INTO operation_definitions (operation_seq, agent, context) VALUES (?, ?, ?)');
        ['one', 'two', 'one', 'three', 'two'].forEach((text, i) => {
          op.run(i + 1, `op-${i + 1}`, JSON.stringify(state()));
          definition.run(i + 1, JSON.stringify({ id: 'a', instructions: text }), JSON.stringify({ i: String(i + 1) }));
        });
      } finally {
        db.close();
      }
      const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await store.migrate();
      try {
        assert.deepEqual((await store.listOperations()).map((o) => [o.id, (o.agent as { instructions: string }).instructions, o.context.i]), [
          ['op-5', 'two', '5'],
          ['op-4', 'three', '4'],
          ['op-3', 'one', '3'],
          ['op-2', 'two', '2'],
          ['op-1', 'one', '1'],
        ]);
      } finally {
        await store.close();
      }
      assert.deepEqual(definitionRows(file).map((r) => [r.digest, (JSON.parse(r.agent) as { instructions: string }).instructions]), [
        [null, 'one'],
        [null, 'two'],
        [null, 'three'],
      ]);
    });
  });

  describe('store-sqlite generated message ids', () => {
    const V8_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/;

    async function openWithOperations(file: string): Promise<SqliteStore> {
      const store = new SqliteStore({ path: file });
      await store.migrate();
      await store.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [{ role: 'user', content: 'one' }], []);
      await store.createOperation({ id: 'op-2', agentId: 'a', agent: {}, context: {}, state: state() }, [], []);
      return store;
    }

    it('are version 8 UUIDs that read back the same and can be compacted by', async () => {
      const store = await openWithOperations(freshPath());
      try {
        const written = await store.commitStep('op-1', { state: state(1), messages: [{ role: 'assistant', content: 'two' }, { role: 'user', content: 'three' }] });
        const listed = await store.listMessages('op-1');
        assert.deepEqual(listed.slice(1), written);
        for (const m of listed) assert.match(m.id, V8_ID);
        assert.equal(new Set(listed.map((m) => m.id)).size, 3);
        await store.commitStep('op-1', { state: state(2), messages: [{ id: 'sum-1', role: 'summary', content: 's' }], compact: { messageIds: [listed[0]!.id, listed[1]!.id], summaryId: 'sum-1' } });
        assert.deepEqual((await store.listMessages('op-1')).map((m) => m.content), ['three', 's']);
        assert.deepEqual((await store.listMessages('op-1', { includeCompacted: true })).map((m) => m.compactedInto), ['sum-1', 'sum-1', undefined, undefined]);
      } finally {
        await store.close();
      }
    });

    it('refuse a supplied id that another message has or that lies in the generated namespace, writing nothing', async () => {
      const store = await openWithOperations(freshPath());
      try {
        const [first] = await store.listMessages('op-1');
        const before = await store.getOperation('op-2');
        await assert.rejects(store.commitStep('op-2', { state: state(9), messages: [{ id: first!.id, role: 'user', content: 'dup' }] }), (err: unknown) => {
          assert.ok(isHookgateError(err, 'STORE_CONFLICT'));
          assert.equal(err.message, `Message ${first!.id} already exists`);
          return true;
        });
        // The same namespace with a key no message has yet: a later generated id would collide with it.
        const unused = `${first!.id.slice(0, 19)}8fff-ffffffffffff`;
        await assert.rejects(store.commitStep('op-2', { state: state(9), messages: [{ id: unused, role: 'user', content: 'dup' }] }), (err: unknown) => {
          assert.ok(isHookgateError(err, 'STORE_CONFLICT'));
          assert.match(err.message, /reserved for ids this store generates/);
          return true;
        });
        assert.deepEqual(await store.getOperation('op-2'), before);
        assert.deepEqual(await store.listMessages('op-2', { includeCompacted: true }), []);
      } finally {
        await store.close();
      }
    });

    it('do not reach a message stored under a supplied id, and match upper case too', async () => {
      const store = await openWithOperations(freshPath());
      try {
        const [first] = await store.listMessages('op-1');
        const [given] = await store.commitStep('op-2', { state: state(1), messages: [{ id: 'given-1', role: 'user', content: 'g' }] });
        assert.equal(given!.id, 'given-1');
        // The generated-form id of the key that holds 'given-1' names no message.
        const keyOfFirst = parseInt(first!.id.slice(20).replace('-', ''), 16);
        const twin = `${first!.id.slice(0, 20)}${(keyOfFirst + 16_777_216).toString(16).padStart(15, '0').replace(/^(.{3})/, '$1-')}`;
        await rejectsWithCode(store.commitStep('op-2', { state: state(2), compact: { messageIds: [twin], summaryId: 'given-1' } }), 'STORE_NOT_FOUND');
        await assert.rejects(store.commitStep('op-2', { state: state(2), messages: [{ id: first!.id.toUpperCase(), role: 'user', content: 'dup' }] }), (err: unknown) => {
          assert.ok(isHookgateError(err, 'STORE_CONFLICT'));
          assert.equal(err.message, `Message ${first!.id.toUpperCase()} already exists`);
          return true;
        });
        assert.deepEqual((await store.listMessages('op-2', { includeCompacted: true })).map((m) => [m.id, m.compactedInto]), [['given-1', undefined]]);
      } finally {
        await store.close();
      }
    });

    it('differ between two database files for the same position', async () => {
      const one = await openWithOperations(freshPath());
      const two = await openWithOperations(freshPath());
      try {
        const [a] = await one.listMessages('op-1');
        const [b] = await two.listMessages('op-1');
        assert.equal(a!.id.slice(19), b!.id.slice(19));
        assert.notEqual(a!.id, b!.id);
        // An id of the other file is an ordinary supplied id here.
        await one.commitStep('op-2', { state: state(1), messages: [{ id: b!.id, role: 'user', content: 'copied' }] });
        assert.deepEqual((await one.listMessages('op-2')).map((m) => m.id), [b!.id]);
      } finally {
        await one.close();
        await two.close();
      }
    });
  });

  describe('store-sqlite with two connections to one file', () => {
    it('continues the message seq when the other connection appended to the same operation', async () => {
      const file = freshPath();
      const first = new SqliteStore({ path: file });
      const second = new SqliteStore({ path: file });
      await first.migrate();
      await second.migrate();
      try {
        await first.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [{ role: 'user', content: 'one' }], []);
        await first.commitStep('op-1', { state: state(1), messages: [{ role: 'assistant', content: 'two' }] });
        await second.commitStep('op-1', { state: state(2), messages: [{ role: 'user', content: 'three' }, { role: 'assistant', content: 'four' }] });
        const written = await first.commitStep('op-1', { state: state(3), messages: [{ role: 'user', content: 'five' }] });
        assert.deepEqual(written.map((m) => [m.seq, m.content]), [[5, 'five']]);
        assert.deepEqual((await second.listMessages('op-1')).map((m) => [m.seq, m.content]), [
          [1, 'one'], [2, 'two'], [3, 'three'], [4, 'four'], [5, 'five'],
        ]);
        assert.equal((await second.getOperation('op-1'))!.state.stepIndex, 3);
      } finally {
        await first.close();
        await second.close();
      }
    });

    it('leases: a claim on one connection refuses the other until it expires or is released', async () => {
      const file = freshPath();
      const first = new SqliteStore({ path: file });
      const second = new SqliteStore({ path: file });
      await first.migrate();
      await second.migrate();
      const t0 = 1_800_000_000_000;
      try {
        await first.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [{ role: 'user', content: 'one' }], []);
        assert.ok((await first.claimOperation('op-1', { owner: 'a', ttlMs: 1000, now: t0 })).claimed);
        const refused = await second.claimOperation('op-1', { owner: 'b', ttlMs: 1000, now: t0 + 999 });
        assert.ok(!refused.claimed && refused.holder.owner === 'a');
        const taken = await second.claimOperation('op-1', { owner: 'b', ttlMs: 1000, now: t0 + 1000 });
        assert.ok(taken.claimed);
        assert.equal(await first.renewLease('op-1', { owner: 'a', ttlMs: 1000, now: t0 + 1001 }), undefined);
        assert.equal(await second.releaseLease('op-1', 'b'), true);
        assert.ok((await first.claimOperation('op-1', { owner: 'a', ttlMs: 1000, now: t0 + 1002 })).claimed);
      } finally {
        await first.close();
        await second.close();
      }
    });

    it('reads back the newest state when both connections wrote it with steps and status changes', async () => {
      const file = freshPath();
      const first = new SqliteStore({ path: file });
      const second = new SqliteStore({ path: file });
      await first.migrate();
      await second.migrate();
      const step = (stepIndex: number) => ({ operationId: 'op-1', stepIndex, kind: 'call_llm' as const, startedAt: 'a', finishedAt: 'b', usage: state().usage, summary: {} });
      try {
        await first.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [], []);
        await first.commitStep('op-1', { state: state(1), step: step(0) });
        await second.commitStep('op-1', { state: state(2), step: step(1) });
        await second.commitStep('op-1', { state: state(3), status: 'waiting_approval' });
        await second.commitStep('op-1', { state: state(4), step: step(2) });
        await first.commitStep('op-1', { state: state(5), step: step(3) });
        assert.equal((await second.getOperation('op-1'))!.state.stepIndex, 5);
        await second.commitStep('op-1', { state: state(6), status: 'running' });
        assert.deepEqual((await first.listOperations()).map((o) => [o.state.stepIndex, o.status]), [[6, 'running']]);
        assert.deepEqual((await first.listSteps('op-1')).map((s) => s.stepIndex), [0, 1, 2, 3]);
      } finally {
        await first.close();
        await second.close();
      }
    });
  });

  describe('store-sqlite with another connection writing between commits', () => {
    const step = (stepIndex: number) => ({ operationId: 'op-1', stepIndex, kind: 'call_llm' as const, startedAt: 'a', finishedAt: 'b', usage: state().usage, summary: {} });

    /** Two stores on one file, `op-1` created on the first with one message. */
    async function twoStores(): Promise<{ file: string; first: SqliteStore; second: SqliteStore }> {
      const file = freshPath();
      const first = new SqliteStore({ path: file, backgroundCheckpoints: false });
      const second = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await first.migrate();
      await second.migrate();
      await first.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [{ role: 'user', content: 'one' }], []);
      return { file, first, second };
    }

    it('refuses a compare-and-swap on the version the other connection moved past, and appends after its writes on the new one', async () => {
      const { first, second } = await twoStores();
      try {
        await first.commitStep('op-1', { state: state(1), step: step(0), messages: [{ role: 'assistant', content: 'two' }], expectedVersion: 0 });
        await second.commitStep('op-1', { state: state(2), step: step(1), messages: [{ role: 'user', content: 'three' }], expectedVersion: 1 });
        await rejectsWithCode(
          first.commitStep('op-1', { state: state(9), step: step(9), messages: [{ role: 'assistant', content: 'stale' }], expectedVersion: 1 }),
          'STORE_VERSION_CONFLICT',
        );
        const written = await first.commitStep('op-1', { state: state(3), step: step(2), messages: [{ role: 'assistant', content: 'four' }], expectedVersion: 2 });
        assert.deepEqual(written.map((m) => [m.seq, m.position, m.content]), [[4, 4, 'four']]);
        assert.deepEqual((await second.listMessages('op-1')).map((m) => [m.seq, m.content]), [[1, 'one'], [2, 'two'], [3, 'three'], [4, 'four']]);
        assert.deepEqual((await second.listSteps('op-1')).map((s) => s.stepIndex), [0, 1, 2]);
        const op = (await second.getOperation('op-1'))!;
        assert.deepEqual([op.version, op.state.stepIndex], [3, 3]);
      } finally {
        await first.close();
        await second.close();
      }
    });

    it('refuses the version a publication on the other connection replaced', async () => {
      const { first, second } = await twoStores();
      try {
        await first.commitStep('op-1', { state: state(1), step: step(0), messages: [{ role: 'tool', toolCallId: 'call_d', content: '' }], expectedVersion: 0 });
        assert.equal(await second.publishToolResult('op-1', 'call_d', { content: 'done', success: true }, { state: state(1), expectedVersion: 1 }), true);
        await rejectsWithCode(first.commitStep('op-1', { state: state(2), step: step(1), expectedVersion: 1 }), 'STORE_VERSION_CONFLICT');
        await first.commitStep('op-1', { state: state(2), step: step(1), expectedVersion: 2 });
        assert.equal((await second.getOperation('op-1'))!.version, 3);
      } finally {
        await first.close();
        await second.close();
      }
    });

    it('sees a state-only write and a status change of the other connection, which append nothing to the log', async () => {
      const { first, second } = await twoStores();
      try {
        await first.commitStep('op-1', { state: state(1), step: step(0), messages: [{ role: 'assistant', content: 'two' }], expectedVersion: 0 });
        // The usual commit shape from here on (a step and one message with a generated id) on the first connection.
        await second.commitStep('op-1', { state: state(7), expectedVersion: 1 });
        await rejectsWithCode(
          first.commitStep('op-1', { state: state(9), step: step(9), messages: [{ role: 'assistant', content: 'stale' }], expectedVersion: 1 }),
          'STORE_VERSION_CONFLICT',
        );
        await first.commitStep('op-1', { state: state(8), step: step(1), messages: [{ role: 'assistant', content: 'three' }], expectedVersion: 2 });
        await second.commitStep('op-1', { state: state(8), status: 'waiting_approval', expectedVersion: 3 });
        await rejectsWithCode(
          first.commitStep('op-1', { state: state(9), step: step(9), messages: [{ role: 'assistant', content: 'stale' }], expectedVersion: 3 }),
          'STORE_VERSION_CONFLICT',
        );
        // Without a compare-and-swap the commit still takes the version after the other connection's.
        const written = await first.commitStep('op-1', { state: state(9), step: step(2), messages: [{ role: 'assistant', content: 'four' }] });
        assert.deepEqual(written.map((m) => [m.seq, m.content]), [[4, 'four']]);
        const op = (await second.getOperation('op-1'))!;
        assert.deepEqual([op.version, op.state.stepIndex, op.status], [5, 9, 'waiting_approval']);
        assert.deepEqual((await second.listMessages('op-1')).map((m) => [m.seq, m.content]), [[1, 'one'], [2, 'two'], [3, 'three'], [4, 'four']]);
        assert.deepEqual((await second.listSteps('op-1')).map((s) => s.stepIndex), [0, 1, 2]);
      } finally {
        await first.close();
        await second.close();
      }
    });

    it('refuses the version a publication on the other connection replaced, on a commit with a message', async () => {
      const { first, second } = await twoStores();
      try {
        await first.commitStep('op-1', { state: state(1), step: step(0), messages: [{ role: 'tool', toolCallId: 'call_d', content: '' }], expectedVersion: 0 });
        assert.equal(await second.publishToolResult('op-1', 'call_d', { content: 'done', success: true }, { state: state(1), expectedVersion: 1 }), true);
        await rejectsWithCode(
          first.commitStep('op-1', { state: state(2), step: step(1), messages: [{ role: 'assistant', content: 'stale' }], expectedVersion: 1 }),
          'STORE_VERSION_CONFLICT',
        );
        await first.commitStep('op-1', { state: state(2), step: step(1), messages: [{ role: 'assistant', content: 'after' }], expectedVersion: 2 });
        const messages = await second.listMessages('op-1');
        assert.deepEqual(messages.map((m) => [m.seq, m.content]), [[1, 'one'], [2, 'done'], [3, 'after']]);
        assert.equal((await second.getOperation('op-1'))!.version, 3);
      } finally {
        await first.close();
        await second.close();
      }
    });

    it('does not write into an operation another connection deleted, even when its seq now names a new operation', async () => {
      const { file, first, second } = await twoStores();
      try {
        await first.commitStep('op-1', { state: state(1), step: step(0), messages: [{ role: 'assistant', content: 'two' }] });
        // What a prune in another process does: the operation, its log and its thread go (op-1 has the highest seq,
        // so SQLite hands the next operation the same seq).
        const raw = new Database(file);
        try {
          raw.transaction(() => {
            const seq = raw.prepare("SELECT seq FROM operations WHERE id = 'op-1'").pluck().get() as number;
            raw.prepare('DELETE FROM operation_log WHERE key > ? AND key < ?').run(seq * 2 ** 24, (seq + 1) * 2 ** 24);
            raw.prepare('DELETE FROM operations WHERE seq = ?').run(seq);
            raw.prepare("DELETE FROM threads WHERE id = 'thread_op-1'").run();
          })();
        } finally {
          raw.close();
        }
        await second.createOperation({ id: 'op-2', agentId: 'a', agent: {}, context: {}, state: state() }, [{ role: 'user', content: 'other' }], []);
        await rejectsWithCode(first.commitStep('op-1', { state: state(2), step: step(1), messages: [{ role: 'assistant', content: 'lost' }] }), 'STORE_NOT_FOUND');
        assert.deepEqual((await first.listMessages('op-2')).map((m) => [m.seq, m.content]), [[1, 'other']]);
        assert.deepEqual(await first.listSteps('op-2'), []);
        assert.equal((await first.getOperation('op-2'))!.version, 0);
      } finally {
        await first.close();
        await second.close();
      }
    });
  });

  describe('store-sqlite persistence across processes', () => {
    it('is readable by a new process after close', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      await store.createOperation(
        { id: 'op-1', agentId: 'agent-a', userId: 'u-1', agent: { id: 'agent-a' }, context: { topicId: 't' }, state: state() },
        [{ id: 'm-1', role: 'user', content: 'read a.txt' }],
        [{ id: 'hook-1', type: 'afterToolCall' }],
      );
      await store.commitStep('op-1', {
        step: { operationId: 'op-1', stepIndex: 0, kind: 'call_llm', startedAt: '2025-01-01T00:00:00.000Z', finishedAt: '2025-01-01T00:00:01.000Z',
          usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7, cost: 0 }, summary: { text: 'ok' } },
        messages: [{ role: 'assistant', content: '', toolCalls: [{ id: 'call_1', identifier: 'fs', apiName: 'readFile', args: { path: 'a.txt' } }] },
          { role: 'tool', content: 'A', toolCallId: 'call_1', toolResult: { content: 'A', success: true } }],
        state: state(1),
        status: 'done',
        reason: 'done',
      });
      await store.upsertUser({ id: 'u-1', email: 'u1@example.test' });
      await store.recordDecision({ id: 'd-1', createdAt: '2025-01-01T00:00:00.000Z', operationId: 'op-1', event: 'beforeToolCall',
        policies: [{ id: 'p-1', effect: 'allow', mode: 'enforce' }], decision: 'allow', defaulted: false, latencyMicros: 10, inputDigest: 'x' });
      const expected = {
        schemaVersion: LATEST_SCHEMA_VERSION,
        operations: await store.listOperations(),
        messages: { 'op-1': await store.listMessages('op-1', { includeCompacted: true }) },
        steps: { 'op-1': await store.listSteps('op-1') },
        hooks: { 'op-1': await store.loadHooks('op-1') },
        users: { 'u-1': await store.getUser('u-1') },
        decisions: await store.listDecisions(),
      };
      await store.close();

      const { stdout } = await run(process.execPath, [childScript, 'read', file]);
      assert.deepEqual(JSON.parse(stdout), expected);
    });

    it('keeps what a process wrote even when it exited without closing', async () => {
      const file = freshPath();
      await run(process.execPath, [childScript, 'write', file]);
      const store = new SqliteStore({ path: file });
      await store.migrate();
      try {
        const op = (await store.getOperation('child-op'))!;
        assert.equal(op.status, 'done');
        assert.equal(op.state.stepIndex, 1);
        assert.deepEqual((await store.listMessages('child-op')).map((m) => [m.seq, m.id, m.content]), [
          [1, 'child-m1', 'from the child'],
          [2, 'child-m2', 'done'],
        ]);
        assert.deepEqual(await store.loadHooks('child-op'), [{ id: 'child-hook' }]);
        assert.deepEqual(await store.getUser('child-user'), { id: 'child-user', email: 'child@example.test' });
      } finally {
        await store.close();
      }
    });
  });

  describe('store-sqlite step commits and SIGKILL', () => {
    it('keeps every step commit that resolved before the process was killed, with nothing half written', async function () {
      this.timeout(60_000);
      const file = freshPath();
      const child = spawn(process.execPath, [childScript, 'steps-until-killed', file], { stdio: ['ignore', 'pipe', 'inherit'] });
      let reported = 0;
      let buffered = '';
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      await new Promise<void>((resolve, reject) => {
        child.on('exit', () => reject(new Error(`the child exited after ${reported} commits before it was killed`)));
        child.stdout!.on('data', (chunk: Buffer) => {
          buffered += chunk.toString('utf8');
          const lines = buffered.split('\n');
          buffered = lines.pop()!;
          for (const line of lines) if (line.startsWith('committed ')) reported = Number(line.slice('committed '.length));
          // Past the point where the background checkpointer runs, so its thread is copying when the kill comes.
          if (reported >= COMMITS_BEFORE_START + 300) {
            child.kill('SIGKILL');
            resolve();
          }
        });
      });
      assert.equal(await exited, 'SIGKILL');
      const store = new SqliteStore({ path: file });
      await store.migrate();
      try {
        const steps = await store.listSteps('kill-op');
        const messages = await store.listMessages('kill-op');
        const op = (await store.getOperation('kill-op'))!;
        assert.ok(steps.length >= reported, `${steps.length} steps stored, ${reported} reported committed`);
        assert.deepEqual(steps.map((s) => s.stepIndex), steps.map((_, i) => i));
        // Each commit wrote its step and its message together: one user message, then one per step, in order.
        assert.deepEqual(messages.map((m) => [m.seq, m.content]), [[1, 'start'], ...steps.map((_, i) => [i + 2, `message ${i}`])]);
        assert.deepEqual([op.version, op.state.stepIndex], [steps.length, steps.length]);
      } finally {
        await store.close();
      }
    });
  });

  describe('store-sqlite background checkpoints', () => {
    /** Bytes the database file (not its WAL) holds, and the bytes its pages take. */
    function fileAndPages(file: string): { fileBytes: number; pageBytes: number } {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        const pages = db.pragma('page_count', { simple: true }) as number;
        const size = db.pragma('page_size', { simple: true }) as number;
        return { fileBytes: statSync(file).size, pageBytes: pages * size };
      } finally {
        db.close();
      }
    }

    async function writeSome(store: SqliteStore): Promise<void> {
      await store.createOperation({ id: 'op-1', agentId: 'a', agent: { big: 'x'.repeat(5000) }, context: {}, state: state() }, [], []);
      // Enough commits for the thread to start (it waits for COMMITS_BEFORE_START).
      for (let i = 1; i <= COMMITS_BEFORE_START + 20; i++) {
        await store.commitStep('op-1', { state: state(i), messages: [{ role: 'assistant', content: `m${i} ${'y'.repeat(500)}` }] });
      }
    }

    it('has no thread and copies nothing before COMMITS_BEFORE_START commits', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      try {
        await store.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [], []);
        for (let i = 1; i < COMMITS_BEFORE_START - 1; i++) await store.commitStep('op-1', { state: state(i) });
        await new Promise((r) => setTimeout(r, 200));
        const seen = fileAndPages(file);
        assert.ok(seen.fileBytes < seen.pageBytes, `file ${seen.fileBytes} bytes, pages ${seen.pageBytes} bytes`);
      } finally {
        await store.close();
      }
    });

    it('copies committed pages into the database file on another thread, without a checkpoint by the writer', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      try {
        await writeSome(store);
        // Far below the writer's own checkpoint interval, so only the thread can have copied them.
        const deadline = Date.now() + 10_000;
        let seen = fileAndPages(file);
        while (seen.fileBytes < seen.pageBytes && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 20));
          seen = fileAndPages(file);
        }
        assert.equal(seen.fileBytes, seen.pageBytes);
      } finally {
        await store.close();
      }
    });

    it('leaves the pages in the WAL when switched off', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await store.migrate();
      try {
        await writeSome(store);
        await new Promise((r) => setTimeout(r, 200));
        const seen = fileAndPages(file);
        assert.ok(seen.fileBytes < seen.pageBytes, `file ${seen.fileBytes} bytes, pages ${seen.pageBytes} bytes`);
      } finally {
        await store.close();
      }
    });

    it('does not keep a process alive whose store was never closed', async () => {
      const file = freshPath();
      mkdirSync(path.dirname(file), { recursive: true });
      // execFile's timeout kills a child that hangs; the kill then fails this spec.
      const { stdout } = await run(process.execPath, [childScript, 'leave-open', file], { timeout: 15_000 });
      assert.equal(stdout, 'left open\n');
    });

    it('close ends the thread before the last connection, which checkpoints everything and removes the WAL', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      await writeSome(store);
      await store.close();
      assert.equal(existsSync(`${file}-wal`), false);
      const reopened = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await reopened.migrate();
      try {
        assert.equal((await reopened.listMessages('op-1')).length, COMMITS_BEFORE_START + 20);
      } finally {
        await reopened.close();
      }
    });
  });

  describe('store-sqlite limits and recovery', () => {
    it('refuses a commit that would run past the operation key range, writing nothing', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await store.migrate();
      await store.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [], []);
      await store.close();
      // The operation's last possible key is taken (as after 2^24 - 1 entries).
      const db = new Database(file);
      try {
        const seq = db.prepare("SELECT seq FROM operations WHERE id = 'op-1'").pluck().get() as number;
        db.prepare("INSERT INTO operation_log (key, operation_seq, entry, created_at, message_seq, role, content) VALUES (?, ?, 'message', 'x', 1, 'user', 'last')")
          .run((seq + 1) * 16_777_216 - 1, seq);
      } finally {
        db.close();
      }
      const reopened = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await reopened.migrate();
      try {
        await assert.rejects(reopened.commitStep('op-1', { state: state(1), messages: [{ role: 'assistant', content: 'one more' }] }), (err: unknown) => {
          assert.ok(isHookgateError(err, 'STORE_CONFLICT'));
          assert.match(err.message, /Operation op-1 is full/);
          return true;
        });
        assert.deepEqual((await reopened.listMessages('op-1')).map((m) => m.content), ['last']);
        assert.equal((await reopened.getOperation('op-1'))!.state.stepIndex, 0);
      } finally {
        await reopened.close();
      }
    });

    it('fails migrate cleanly on a damaged message id namespace and stays unusable, not half set up', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
      await store.migrate();
      await store.close();
      const db = new Database(file);
      try {
        db.prepare("UPDATE store_identity SET message_id_namespace = 'not hex'").run();
      } finally {
        db.close();
      }
      const damaged = new SqliteStore({ path: file });
      await rejectsWithCode(damaged.migrate(), 'STORE_CORRUPT');
      await rejectsWithCode(damaged.migrate(), 'STORE_CORRUPT');
      await rejectsWithCode(damaged.getOperation('op-1'), 'KERNEL_NOT_STARTED');
      await damaged.close();
    });

    it('skips a migration another connection applied after this one read the version', async () => {
      const file = freshPath();
      mkdirSync(path.dirname(file), { recursive: true });
      const first = new Database(file);
      first.pragma('journal_mode = WAL');
      applyMigrations(first, 0, undefined, MIGRATIONS.slice(0, 3));
      const second = new Database(file);
      try {
        // Both read version 3; the first applies migration 4, then the second tries.
        assert.equal(applyMigrations(first, 3), LATEST_SCHEMA_VERSION);
        assert.equal(applyMigrations(second, 3), LATEST_SCHEMA_VERSION);
        assert.equal(second.prepare('SELECT count(*) FROM store_identity').pluck().get(), 1);
      } finally {
        first.close();
        second.close();
      }
    });

    it('closes once when close is called twice at the same time', async () => {
      const file = freshPath();
      const store = new SqliteStore({ path: file });
      await store.migrate();
      await store.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state: state() }, [], []);
      for (let i = 1; i <= COMMITS_BEFORE_START + 5; i++) await store.commitStep('op-1', { state: state(i) });
      const both = Promise.all([store.close(), store.close()]);
      await Promise.race([store.close(), both]);
      // Whichever resolved first, the last connection is closed by then, so the WAL is gone.
      assert.equal(existsSync(`${file}-wal`), false);
      await both;
    });
  });

  describe('background checkpointer', () => {
    it('commits go on with a warning when the thread cannot start', async () => {
      const { logger, lines } = captureLogger();
      const checkpointer = new BackgroundCheckpointer(path.join(dir, 'nowhere.db'), logger, new URL('http://127.0.0.1/not-a-worker.js'));
      for (let i = 0; i < COMMITS_BEFORE_START + 10; i++) checkpointer.noteCommit();
      await checkpointer.stop();
      assert.equal(lines.filter((l) => l.includes('background checkpoints could not start')).length, 1);
    });
  });

  describe('store-sqlite plugin', () => {
    function host(file: string): PluginHost {
      const h = new PluginHost([Config, Logger]);
      h.bindCore(Config, withDefaults({ store: { sqlite: { path: file } } }, dir));
      h.bindCore(Logger, createLogger({ level: 'silent' }));
      h.add(storeSqlitePlugin);
      return h;
    }

    it('declares id store-sqlite, requires Config and Logger, provides Store', () => {
      assert.equal(storeSqlitePlugin.id, 'store-sqlite');
      assert.deepEqual(storeSqlitePlugin.requires, [Config, Logger]);
      assert.deepEqual(storeSqlitePlugin.provides, [Store]);
    });

    it('migrates the configured file on start and closes it on stop', async () => {
      const file = freshPath();
      const h = host(file);
      await h.start();
      const store = h.resolve(Store);
      await store.upsertUser({ id: 'u-1', email: 'a@example.test' });
      assert.equal(inspect(file).version, LATEST_SCHEMA_VERSION);
      await h.stop();
      await rejectsWithCode(store.getUser('u-1'), 'KERNEL_STOPPED');
    });

    it('fails to start on a corrupt file, naming the plugin and the file, and leaves the file untouched', async () => {
      const bytes = randomBytes(4096);
      const file = fileWith(bytes);
      const h = host(file);
      await assert.rejects(h.start(), (err: unknown) => {
        assert.ok(isHookgateError(err, 'PLUGIN_START_FAILED'));
        assert.match(err.message, /store-sqlite/);
        assert.ok(err.message.includes(file));
        assert.ok(isHookgateError(err.cause, 'STORE_CORRUPT'));
        return true;
      });
      assert.deepEqual(readFileSync(file), bytes);
    });
  });
});
