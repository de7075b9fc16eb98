import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, runHookgate } from '../helpers/cli-process.js';
import { TEST_POSTGRES, adminQuery, dropSchema, requirePostgres, uniqueSchema } from '../helpers/postgres-fixtures.js';

const AGENT_API = pathToFileURL(path.join(ROOT, 'dist', 'index.js')).href;

/**
 * Attack (review): `hookgate run|serve|worker <agent module>` start the
 * agent runtime with the store the config names. With `store.driver:
 * postgres` they chose an in-memory store instead (only SQLite was passed
 * on), so every conversation was lost at exit and a queue worker with agent
 * modules never saw the API process's operations. The operation must land
 * in the configured PostgreSQL schema.
 */
describe('hookgate run <agent module> attack: store.driver postgres is the store it runs on', function () {
  this.timeout(60_000);
  let dir: string;
  let schema: string;
  before(() => requirePostgres());
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-module-pg-')));
    schema = uniqueSchema('cli');
  });
  afterEach(async () => {
    await dropSchema(schema);
    await rm(dir, { recursive: true, force: true });
  });

  it("the conversation of a run is stored in the config's PostgreSQL schema, not in memory", async () => {
    const agent = path.join(dir, 'echo.mjs');
    await writeFile(agent, `import { useModel } from '${AGENT_API}';\nexport function Echo() { useModel({ provider: 'scripted', turns: [{ text: 'stored reply' }] }); }\n`);
    const { host, port, database, user } = TEST_POSTGRES;
    await writeFile(path.join(dir, 'hookgate.config.yaml'), `store:\n  driver: postgres\n  postgres: { host: "${host}", port: ${port}, database: ${database}, user: ${user}, schema: ${schema} }\n`);
    const run = await runHookgate(dir, ['run', agent, 'hello', '--id', 'pg-1']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /stored reply/);
    const { rows } = await adminQuery(`SELECT count(*)::int AS n FROM ${schema}.operations`).catch((err: unknown) => assert.fail(`no store tables in ${schema}: ${(err as Error).message}`));
    assert.equal(rows[0].n, 1, 'the operation is in PostgreSQL');
  });
});
