import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { PostgresStore, type PostgresStoreOptions } from '../../plugins/store-postgres/index.js';

/** The PostgreSQL the specs use: the machine's local server (.ci/run starts it), database `test`, trust authentication. */
export const TEST_POSTGRES = {
  host: process.env.HOOKGATE_TEST_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.HOOKGATE_TEST_PG_PORT ?? 5432),
  database: process.env.HOOKGATE_TEST_PG_DATABASE ?? 'test',
  user: process.env.HOOKGATE_TEST_PG_USER ?? 'postgres',
} as const;

/** A schema name no other run uses (process id, time, random): specs running in parallel never share tables. */
export function uniqueSchema(label = 't'): string {
  return `hg_${label}_${process.pid}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** Runs `sql` on a short-lived admin connection to the test database. */
export async function adminQuery(sql: string, values?: unknown[]): Promise<pg.QueryResult> {
  const client = new pg.Client({ ...TEST_POSTGRES, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

/**
 * Fails (never skips) with a message saying what to start when the test
 * server cannot be reached: a spec that needs PostgreSQL must not pass
 * without it.
 */
export async function requirePostgres(): Promise<void> {
  try {
    await adminQuery('SELECT 1');
  } catch (err) {
    const where = `${TEST_POSTGRES.user}@${TEST_POSTGRES.host}:${TEST_POSTGRES.port}/${TEST_POSTGRES.database}`;
    throw new Error(`These specs need PostgreSQL at ${where} (trust authentication); it is not reachable: ${(err as Error).message}. Start it (.ci/run does) and run again.`);
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

/**
 * For describe blocks: fails the block when the server is down, and drops
 * every schema made through the returned `store()` after each test.
 */
export function usePostgresSchemas(label: string): { store(options?: Partial<PostgresStoreOptions>): Promise<PostgresStore>; schema(): string } {
  let made: string[] = [];
  before(requirePostgres);
  afterEach(async () => {
    const schemas = made;
    made = [];
    for (const schema of schemas) await dropSchema(schema);
  });
  return {
    schema() {
      const schema = uniqueSchema(label);
      made.push(schema);
      return schema;
    },
    async store(options = {}) {
      const store = new PostgresStore({ ...TEST_POSTGRES, schema: this.schema(), poolSize: 4, ...options });
      await store.migrate();
      return store;
    },
  };
}
