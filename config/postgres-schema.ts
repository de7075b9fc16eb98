import * as v from 'valibot';

/** `store.postgres.*` defaults: a local server, database `hookgate`, schema `hookgate`. */
export const POSTGRES_DEFAULTS = { host: '127.0.0.1', port: 5432, database: 'hookgate', user: 'hookgate', schema: 'hookgate', poolSize: 10 } as const;

const intLike = (min: number, max: number, what: string) =>
  v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/, `expected ${what}`), v.transform(Number))]),
    v.check((n) => Number.isInteger(n) && n >= min && n <= max, `expected ${what} from ${min} to ${max}`),
  );

const booleanLike = v.union([v.boolean(), v.pipe(v.picklist(['true', 'false']), v.transform((s) => s === 'true'))], 'expected true or false');

/** An unquoted PostgreSQL identifier: the schema name goes into `search_path` and `CREATE SCHEMA`, so nothing else is allowed. */
const identifier = v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_]{0,62}$/, 'expected a schema name of lowercase letters, digits and "_" (at most 63, not starting with a digit)'));

/** An environment variable name (the password is given only by the name of the variable that holds it). */
const envName = v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable (letters, digits, "_")'));

/**
 * `store.postgres:` in hookgate.config.yaml (store-postgres): where the
 * server is and which schema the store's tables live in. The password never
 * appears in the config, only `passwordEnv`, the name of the variable that
 * holds it (read from the kernel's environment when the store starts).
 */
export const PostgresSchema = v.strictObject({
  host: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a host name, address or socket folder'))),
  port: v.optional(intLike(1, 65_535, 'a port')),
  database: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a database name'))),
  user: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a user name'))),
  passwordEnv: v.optional(envName),
  schema: v.optional(identifier),
  /** TLS to the server (node-postgres `ssl: true`, verifying the certificate). */
  ssl: v.optional(booleanLike),
  poolSize: v.optional(intLike(1, 1_000, 'a pool size')),
});

/** The `store.postgres` section with its defaults (no password: only the variable's name). */
export interface PostgresConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  passwordEnv?: string;
  schema: string;
  ssl: boolean;
  poolSize: number;
}

/** Fills the defaults of {@link POSTGRES_DEFAULTS}; TLS off, no password variable (trust or peer authentication). */
export function postgresConfig(parsed: v.InferOutput<typeof PostgresSchema> | undefined): PostgresConfig {
  return {
    host: parsed?.host ?? POSTGRES_DEFAULTS.host,
    port: parsed?.port ?? POSTGRES_DEFAULTS.port,
    database: parsed?.database ?? POSTGRES_DEFAULTS.database,
    user: parsed?.user ?? POSTGRES_DEFAULTS.user,
    passwordEnv: parsed?.passwordEnv,
    schema: parsed?.schema ?? POSTGRES_DEFAULTS.schema,
    ssl: parsed?.ssl ?? false,
    poolSize: parsed?.poolSize ?? POSTGRES_DEFAULTS.poolSize,
  };
}
