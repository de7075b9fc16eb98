import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { killed, runHookgate, runUntil, slowWriterAgent } from '../../helpers/cli-process.js';
import { MIGRATIONS, applyMigrations } from '../../../plugins/store-sqlite/migrations.js';
import { SqliteStore } from '../../../plugins/store-sqlite/sqlite-store.js';

const CAREFUL_AGENT = `id: careful
model:
  provider: scripted
  turns:
    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: note.txt, content: approved } } ]
    - text: written
    - text: continued on the old thread
tools: [fs/*]
approval: { tools: [fs/writeFile] }
`;

const SLOW_AGENT = slowWriterAgent(3000);

/** The operation id of a `run --json` from its operation_started event. */
function startedId(stdout: string): string {
  const started = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.type === 'operation_started');
  assert.ok(started, `no operation_started in ${stdout}`);
  return String(started.operationId);
}

/**
 * Rebuilds `file` as a schema-4 database: a new file made by the version 1-4
 * migrations only, holding every row of `file` in the columns schema 4 has
 * (the store identity included, so generated message ids stay the same).
 * The rows are ones the runtime wrote, so they are what a schema-4 hookgate
 * left behind: migration 5 only adds the threads table and two columns.
 */
function rebuildAtSchemaFour(file: string, target: string): void {
  const db = new Database(target);
  try {
    applyMigrations(db, 0, undefined, MIGRATIONS.filter((m) => m.version <= 4));
    assert.equal(db.pragma('user_version', { simple: true }), 4);
    db.exec(`ATTACH DATABASE '${file.replace(/'/g, "''")}' AS src`);
    db.pragma('foreign_keys = OFF');
    const tables = db.prepare<[], string>("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all();
    db.transaction(() => {
      for (const table of tables) {
        const columns = (db.pragma(`main.table_info(${table})`) as Array<{ name: string }>).map((c) => c.name).join(', ');
        db.exec(`DELETE FROM main.${table}; INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM src.${table}`);
      }
    })();
    db.exec('DETACH DATABASE src');
  } finally {
    db.close();
  }
}

/** Replaces the project's store file in `dir` with its schema-4 rebuild (rebuildAtSchemaFour); resolves the file's path. */
async function replaceWithSchemaFour(dir: string): Promise<string> {
  const file = path.join(dir, '.hookgate', 'hookgate.db');
  const old = path.join(dir, 'schema4.db');
  rebuildAtSchemaFour(file, old);
  for (const suffix of ['', '-wal', '-shm']) await rm(file + suffix, { force: true });
  await rename(old, file);
  return file;
}

describe('threads: a schema-4 database migrates, and its operations still show, approve and continue (real CLI)', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-schema4-')));
    await writeFile(path.join(dir, 'careful.yaml'), CAREFUL_AGENT);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('show prints the thread, approve finishes the parked operation, run --thread continues its conversation', async () => {
    const parked = await runHookgate(dir, ['run', 'careful.yaml', 'write the note', '--json']);
    assert.equal(parked.code, 3, parked.stderr);
    const operationId = startedId(parked.stdout);
    const file = await replaceWithSchemaFour(dir);
    {
      const db = new Database(file, { readonly: true });
      assert.equal(db.pragma('user_version', { simple: true }), 4);
      assert.equal(db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'threads'").get(), undefined);
      assert.equal(db.prepare('SELECT status FROM operations WHERE id = ?').pluck().get(operationId), 'waiting_approval');
      db.close();
    }

    const show = await runHookgate(dir, ['show', operationId]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, new RegExp(`${operationId}  agent careful  waiting_approval`));
    assert.match(show.stdout, new RegExp(`^  thread thread_${operationId}$`, 'm'));
    assert.match(show.stdout, /user: write the note/);
    const json = JSON.parse((await runHookgate(dir, ['show', operationId, '--json'])).stdout) as { operation: { threadId: string }; messages: Array<{ position: number }> };
    assert.equal(json.operation.threadId, `thread_${operationId}`);
    assert.deepEqual(json.messages.map((m) => m.position), json.messages.map((_, i) => i + 1));

    const approved = await runHookgate(dir, ['approve', operationId]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(await readFile(path.join(dir, '.hookgate', 'sandbox', 'note.txt'), 'utf8'), 'approved');

    const continued = await runHookgate(dir, ['run', 'careful.yaml', 'and now?', '--thread', `thread_${operationId}`, '--json']);
    assert.equal(continued.code, 0, continued.stderr);
    const nextId = startedId(continued.stdout);

    const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
    await store.migrate();
    try {
      assert.equal((await store.getOperation(operationId))!.status, 'done');
      const next = (await store.getOperation(nextId))!;
      assert.deepEqual([next.status, next.threadId, next.state.lastText], ['done', `thread_${operationId}`, 'continued on the old thread']);
      const thread = await store.listThreadMessages(`thread_${operationId}`);
      assert.deepEqual(thread.map((m) => [m.operationId === operationId ? 'old' : 'new', m.role, m.content]), [
        ['old', 'user', 'write the note'],
        ['old', 'assistant', ''],
        ['old', 'tool', thread[2]!.content],
        ['old', 'assistant', 'written'],
        ['new', 'user', 'and now?'],
        ['new', 'assistant', 'continued on the old thread'],
      ]);
      assert.deepEqual(thread.map((m) => m.position), [1, 2, 3, 4, 5, 6]);
    } finally {
      await store.close();
    }
    assert.equal(existsSync(path.join(dir, 'schema4.db')), false);

    const busy = await runHookgate(dir, ['run', 'careful.yaml', 'x', '--thread', 'thread_nope']);
    assert.notEqual(busy.code, 0);
    assert.match(busy.stderr, /THREAD_NOT_FOUND|no thread has id thread_nope/);
  });

  it('an operation a schema-4 process left running (killed mid-turn) migrates without a lease, and resume finishes it from its last step', async () => {
    await writeFile(path.join(dir, 'slow.yaml'), SLOW_AGENT);
    const { child, operationId } = await runUntil(dir, ['slow.yaml'], (e) => e.type === 'step_started' && e.stepIndex === 2);
    await killed(child);
    const file = await replaceWithSchemaFour(dir);
    {
      const db = new Database(file, { readonly: true });
      assert.equal(db.pragma('user_version', { simple: true }), 4);
      assert.equal(db.prepare('SELECT status FROM operations WHERE id = ?').pluck().get(operationId), 'running');
      db.close();
    }

    // Schema 4 had no leases: nobody holds it after the migration, so resume needs no --force.
    const resumed = await runHookgate(dir, ['resume', operationId]);
    assert.equal(resumed.code, 0, resumed.stderr);
    const store = new SqliteStore({ path: file, backgroundCheckpoints: false });
    await store.migrate();
    try {
      const op = (await store.getOperation(operationId))!;
      assert.deepEqual([op.status, op.state.lastText, op.threadId], ['done', 'all done', `thread_${operationId}`]);
      const tools = (await store.listMessages(operationId)).filter((m) => m.role === 'tool');
      assert.equal(tools.length, 2, 'each write has one result');
      assert.equal(new Set(tools.map((m) => m.toolCallId)).size, 2);
      assert.equal(await store.getLease(operationId), undefined, 'released at the end');
    } finally {
      await store.close();
    }
    assert.equal(await readFile(path.join(dir, '.hookgate', 'sandbox', 'second.txt'), 'utf8'), 'two');
  });
});
