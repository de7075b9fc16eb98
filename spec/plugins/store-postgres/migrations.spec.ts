import assert from 'node:assert/strict';
import { isHookgateError } from '../../../kernel/errors.js';
import { PostgresStore } from '../../../plugins/store-postgres/index.js';
import { POSTGRES_SCHEMA_VERSION } from '../../../plugins/store-postgres/postgres-migrations.js';
import { adminQuery, TEST_POSTGRES, usePostgresSchemas } from '../../helpers/postgres-fixtures.js';

const state = { stepIndex: 0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };

async function versions(schema: string): Promise<number[]> {
  return (await adminQuery(`SELECT version FROM ${schema}.hookgate_migrations ORDER BY version`)).rows.map((r: { version: number }) => r.version);
}

async function tables(schema: string): Promise<string[]> {
  return (await adminQuery('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema])).rows.map((r: { table_name: string }) => r.table_name);
}

describe('store-postgres: versioned migrations', function () {
  this.timeout(30_000);
  const schemas = usePostgresSchemas('migrate');

  it('migrates a schema that does not exist yet: creates it, every table, and one row per applied version', async () => {
    const schema = schemas.schema();
    assert.deepEqual(await tables(schema), []);
    const store = new PostgresStore({ ...TEST_POSTGRES, schema });
    await store.migrate();
    await store.close();
    assert.deepEqual(await versions(schema), Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1));
    assert.deepEqual(await tables(schema), ['decision_policies', 'decisions', 'hook_registrations', 'hookgate_migrations', 'messages', 'operations', 'steps', 'submissions', 'threads', 'tool_steps', 'user_values', 'users']);
  });

  it('migrating again (the same store, a new one, two at once) changes nothing and keeps every row', async () => {
    const schema = schemas.schema();
    const first = await schemas.store({ schema });
    await first.createOperation({ id: 'op-1', agentId: 'a', agent: {}, context: {}, state }, [{ role: 'user', content: 'kept' }], []);
    await first.migrate();
    await first.close();
    const [x, y] = [new PostgresStore({ ...TEST_POSTGRES, schema }), new PostgresStore({ ...TEST_POSTGRES, schema })];
    await Promise.all([x.migrate(), y.migrate()]);
    assert.deepEqual(await versions(schema), Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1));
    assert.deepEqual((await y.listMessages('op-1')).map((m) => m.content), ['kept']);
    await x.close();
    await y.close();
  });

  it('two first starts racing on an empty schema both succeed and apply each version once', async () => {
    const schema = schemas.schema();
    const stores = [0, 1, 2].map(() => new PostgresStore({ ...TEST_POSTGRES, schema }));
    await Promise.all(stores.map((s) => s.migrate()));
    assert.deepEqual(await versions(schema), Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1));
    await Promise.all(stores.map((s) => s.close()));
  });

  it('refuses a schema written by a newer hookgate with STORE_SCHEMA_NEWER and leaves it as it was', async () => {
    const schema = schemas.schema();
    await (await schemas.store({ schema })).close();
    await adminQuery(`INSERT INTO ${schema}.hookgate_migrations (version, applied_at) VALUES ($1, 'later')`, [POSTGRES_SCHEMA_VERSION + 1]);
    const before = await tables(schema);
    const store = new PostgresStore({ ...TEST_POSTGRES, schema });
    await assert.rejects(store.migrate(), (err: unknown) => isHookgateError(err, 'STORE_SCHEMA_NEWER') && /newer/.test((err as Error).message));
    assert.deepEqual(await tables(schema), before);
    assert.deepEqual(await versions(schema), [...Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1), POSTGRES_SCHEMA_VERSION + 1]);
    await assert.rejects(store.getOperation('x'), (err: unknown) => isHookgateError(err, 'KERNEL_NOT_STARTED'));
    await store.close();
  });
});
