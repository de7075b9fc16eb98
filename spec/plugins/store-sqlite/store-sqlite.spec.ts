import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { SqliteStore } from '../../../plugins/store-sqlite/sqlite-store.js';
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

  describe('store-sqlite migrations', () => {
    const ALL_TABLES = ['decision_policies', 'decisions', 'hook_registrations', 'messages', 'operations', 'steps', 'users'];

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
