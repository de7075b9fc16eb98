import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createKernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import { isHookgateError } from '../../../kernel/errors.js';
import { PostgresStore } from '../../../plugins/store-postgres/index.js';
import { TEST_POSTGRES, usePostgresSchemas } from '../../helpers/postgres-fixtures.js';

const PASSWORD = 'Pg-S3cret-do-not-print-7f3a9c';

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Everything an error carries that could reach a log line or an API response. */
function errorText(err: unknown): string {
  const e = err as Error & { details?: unknown; cause?: unknown };
  return [e.message, e.stack, JSON.stringify(e.details ?? {}), JSON.stringify(e), String(e.cause ?? '')].join('\n');
}

describe('store-postgres: config', function () {
  this.timeout(30_000);
  const schemas = usePostgresSchemas('config');
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-pg-config-')));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function env(extra: Record<string, string>): Record<string, string> {
    return {
      HOOKGATE_STORE__DRIVER: 'postgres',
      HOOKGATE_STORE__POSTGRES__HOST: TEST_POSTGRES.host,
      HOOKGATE_STORE__POSTGRES__PORT: String(TEST_POSTGRES.port),
      HOOKGATE_STORE__POSTGRES__DATABASE: TEST_POSTGRES.database,
      HOOKGATE_STORE__POSTGRES__USER: TEST_POSTGRES.user,
      ...extra,
    };
  }

  it('store.driver postgres picks store-postgres: a kernel started from config runs on the schema it names', async () => {
    const schema = schemas.schema();
    const kernel = createKernel({ config: loadConfig({ cwd: dir, env: env({ HOOKGATE_STORE__POSTGRES__SCHEMA: schema }) }), env: {} });
    await kernel.start();
    try {
      const store = kernel.store;
      assert.ok(store instanceof PostgresStore);
      await store.createThread({ id: 'thread-from-config', agentId: 'a' });
      assert.equal((await store.getThread('thread-from-config'))?.agentId, 'a');
    } finally {
      await kernel.stop();
    }
  });

  it('a passwordEnv naming an unset variable is CONFIG_INVALID naming that variable, before any connection', async () => {
    const config = loadConfig({ cwd: dir, env: env({ HOOKGATE_STORE__POSTGRES__PASSWORD_ENV: 'HOOKGATE_SPEC_PG_PASSWORD_UNSET', HOOKGATE_STORE__POSTGRES__PORT: String(await closedPort()) }) });
    const kernel = createKernel({ config, env: {} });
    await assert.rejects(kernel.start(), (err: unknown) => {
      const inner = findHookgateError(err, 'CONFIG_INVALID');
      assert.ok(inner, `expected CONFIG_INVALID, got ${String(err)}`);
      assert.match(inner.message, /HOOKGATE_SPEC_PG_PASSWORD_UNSET/);
      assert.match(inner.message, /store\.postgres\.passwordEnv/);
      return true;
    });
    await kernel.stop().catch(() => undefined);
  });

  it('rejects a schema name that is not a plain identifier, and a password written into the config', () => {
    assert.throws(() => loadConfig({ cwd: dir, env: env({ HOOKGATE_STORE__POSTGRES__SCHEMA: 'x; DROP TABLE users' }) }),
      (err: unknown) => isHookgateError(err, 'CONFIG_INVALID') && /store\.postgres\.schema/.test((err as Error).message));
    assert.throws(() => loadConfig({ cwd: dir, env: env({ HOOKGATE_STORE__POSTGRES__PASSWORD: PASSWORD }) }),
      (err: unknown) => isHookgateError(err, 'CONFIG_INVALID') && /store\.postgres\.password: unknown key/.test((err as Error).message) && !(err as Error).message.includes(PASSWORD));
  });

  it('a server that cannot be reached is STORE_UNAVAILABLE naming host, port, database and user; the password is in no error and no log line', async () => {
    const port = await closedPort();
    const logs: LogRecord[] = [];
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', sink: (line, record) => { lines.push(line); logs.push(record); } });
    const config = loadConfig({ cwd: dir, env: env({ HOOKGATE_STORE__POSTGRES__PASSWORD_ENV: 'HG_SPEC_PG_PW', HOOKGATE_STORE__POSTGRES__PORT: String(port) }) });
    const kernel = createKernel({ config, env: { HG_SPEC_PG_PW: PASSWORD }, logger });
    let caught: unknown;
    await kernel.start().catch((err: unknown) => { caught = err; });
    await kernel.stop().catch(() => undefined);
    const inner = findHookgateError(caught, 'STORE_UNAVAILABLE');
    assert.ok(inner, `expected STORE_UNAVAILABLE, got ${String(caught)}`);
    assert.match(inner.message, new RegExp(`${TEST_POSTGRES.user}@${TEST_POSTGRES.host}:${port}/${TEST_POSTGRES.database}`));
    assert.ok(!errorText(caught).includes(PASSWORD) && !errorText(inner).includes(PASSWORD), 'the password is in the error');
    assert.ok(!lines.join('\n').includes(PASSWORD), 'the password is in a log line');
  });

  it('an unknown database or a failed query names where, never the password', async () => {
    const store = new PostgresStore({ ...TEST_POSTGRES, database: 'hookgate_no_such_db', password: PASSWORD, schema: schemas.schema() });
    let caught: unknown;
    await store.migrate().catch((err: unknown) => { caught = err; });
    assert.ok(isHookgateError(caught, 'STORE_UNAVAILABLE'), String(caught));
    assert.match((caught as Error).message, /hookgate_no_such_db/);
    assert.ok(!errorText(caught).includes(PASSWORD));
    await store.close();
  });
});

/** The HookgateError of `code` in `err` or its causes (the kernel wraps plugin start failures). */
function findHookgateError(err: unknown, code: Parameters<typeof isHookgateError>[1]): Error | undefined {
  for (let e = err; e; e = (e as { cause?: unknown }).cause) if (isHookgateError(e, code)) return e as Error;
  return undefined;
}
