import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { HookgateError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';

/** Where a store-postgres connects: `store.postgres` with the password already read from its variable. */
export interface PostgresConnectionOptions {
  host: string;
  port: number;
  database: string;
  user: string;
  /** The password itself (read from `passwordEnv` by the caller); never logged, never put in an error. */
  password?: string;
  /** The schema the store's tables live in (a checked identifier: it is written into SQL). */
  schema: string;
  ssl?: boolean;
  poolSize?: number;
  logger?: Logger;
}

/** SQLSTATEs a transaction is retried on: a serialization failure or a deadlock (the database rolled it back whole). */
const RETRYABLE = new Set(['40001', '40P01']);
/** Connection-level failures: the server is down, refused us, or the database / role does not exist. */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN', '28P01', '28000', '3D000', '57P01', '57P02', '57P03', '08006', '08001', '08004', '53300']);
const MAX_ATTEMPTS = 5;

/** One query runner: the pool, or the client of a transaction. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

/**
 * A node-postgres Pool on one schema (`search_path` set per connection at
 * connect time, so every statement names tables unqualified). Errors that
 * mean the server cannot be used become STORE_UNAVAILABLE naming host, port,
 * database and user, never the password.
 */
export class PostgresConnection {
  private pool?: Pool;
  readonly where: string;

  constructor(readonly options: PostgresConnectionOptions) {
    this.where = `PostgreSQL ${options.user}@${options.host}:${options.port}/${options.database} (schema ${options.schema})`;
  }

  /**
   * Creates the pool (no connection yet). `pg` is imported here, not at
   * module load: every CLI start loads the plugin catalog, and only a
   * process configured for PostgreSQL pays for the driver. Idempotent.
   */
  async open(): Promise<void> {
    if (this.pool) return;
    const { default: pg } = await import('pg');
    const options = this.options;
    this.pool ??= new pg.Pool({
      host: options.host,
      port: options.port,
      database: options.database,
      user: options.user,
      password: options.password,
      ssl: options.ssl ? { rejectUnauthorized: true } : undefined,
      max: options.poolSize ?? 10,
      options: `-c search_path=${options.schema}`,
      connectionTimeoutMillis: 10_000,
    });
    // An idle client whose server went away emits here; without a listener node would crash the process.
    this.pool.on('error', (err) => options.logger?.warn('store-postgres: an idle connection failed', { code: (err as { code?: string }).code, error: err.message }));
  }

  private get opened(): Pool {
    if (!this.pool) throw new HookgateError('KERNEL_NOT_STARTED', `The store at ${this.where} is not open yet; call migrate() first`);
    return this.pool;
  }

  /**
   * One statement on any pooled connection (its own implicit transaction).
   * A deadlock or serialization failure rolled the statement back whole, so
   * it runs again, up to 5 times.
   */
  async query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.opened.query<R>(text, values);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code !== undefined && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) continue;
        throw this.translate(err);
      }
    }
  }

  /**
   * Runs `fn` in one READ COMMITTED transaction on one connection: COMMIT
   * when it resolves, ROLLBACK when it throws (its error is rethrown, mapped).
   * A serialization failure or deadlock rolls back and runs `fn` again, up
   * to 5 times, so `fn` must not have effects outside the transaction.
   */
  async transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: PoolClient;
      try {
        client = await this.opened.connect();
      } catch (err) {
        throw this.translate(err);
      }
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        broken = await client.query('ROLLBACK').then(() => false, () => true);
        const code = (err as { code?: string }).code;
        if (code !== undefined && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) continue;
        throw this.translate(err);
      } finally {
        client.release(broken);
      }
    }
  }

  /** Runs `fn` on one connection outside a transaction (migrations manage their own). */
  async withClient<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.opened.connect();
    } catch (err) {
      throw this.translate(err);
    }
    try {
      return await fn(client);
    } catch (err) {
      throw this.translate(err);
    } finally {
      client.release();
    }
  }

  /** Ends the pool, if it was opened (waiting for checked-out connections). */
  async end(): Promise<void> {
    await this.pool?.end();
  }

  /** HookgateErrors pass through; connection failures become STORE_UNAVAILABLE; anything else is returned as it is. */
  translate(err: unknown): unknown {
    if (err instanceof HookgateError) return err;
    const code = (err as { code?: string } | null)?.code;
    const message = (err as Error | null)?.message ?? String(err);
    if ((code !== undefined && UNAVAILABLE_CODES.has(code)) || /Connection terminated|timeout exceeded when trying to connect/i.test(message)) {
      const password = this.options.password;
      // Server messages name roles and databases, not passwords; scrubbed anyway so no path can leak one.
      const said = password ? message.split(password).join('***') : message;
      return new HookgateError('STORE_UNAVAILABLE', `${this.where} cannot be used: ${said}${code ? ` (${code})` : ''}`, {
        details: { host: this.options.host, port: this.options.port, database: this.options.database, user: this.options.user, schema: this.options.schema, code },
      });
    }
    return err;
  }
}

/** True when a write broke a UNIQUE or PRIMARY KEY constraint (SQLSTATE 23505), optionally a named one. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string } | null;
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}
