import * as v from 'valibot';

/** `execution`: where an operation's steps run. */
export const EXECUTION_MODES = ['in-process', 'queue'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

export const DEFAULT_QUEUE_PREFIX = 'hookgate';
export const DEFAULT_QUEUE_CONCURRENCY = 8;

const wholeNumber = (min: number, max: number, what: string) =>
  v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/, `expected ${what}`), v.transform(Number))]),
    v.check((n) => Number.isInteger(n) && n >= min && n <= max, `expected a whole number from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')} (${what})`),
  );

/**
 * The URL forms Redis clients take; a password belongs in `passwordEnv`, never in the file. Checks, not regex actions,
 * with messages not starting "expected ": the loader echoes the value for those, and it may hold a password (every
 * check runs on a bad value).
 */
const redisUrl = v.pipe(
  v.string(),
  v.check((url) => /^rediss?:\/\/[^\s]+$/.test(url), 'not a redis:// or rediss:// URL without spaces (the value is not echoed)'),
  // Up to the last "@", not the first "/": a password may hold "/", "?" or "#" (the URL parser would then fail on it and
  // its error carries the whole URL).
  v.check((url) => !/^rediss?:\/\/[^@]*:[^@]*@/.test(url), 'put the password in an environment variable and name it with queue.redis.passwordEnv, not in the URL'),
  v.check((url) => URL.canParse(url) && new URL(url).password === '', 'not a URL the parser reads: redis:// or rediss://, a host, an optional :port and /database (the value is not echoed)'),
);

/**
 * `queue:` in hookgate.config.yaml, read with `execution: queue`: where Redis
 * is (`url`, or `host` and `port`), the name of the variable holding its
 * password (`passwordEnv`), the key prefix that separates installations
 * sharing one Redis, and how many steps one worker runs at once.
 */
export const QueueSchema = v.strictObject({
  redis: v.optional(
    v.strictObject({
      url: v.optional(redisUrl),
      host: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a host name or address'))),
      port: v.optional(wholeNumber(1, 65_535, 'a port')),
      db: v.optional(wholeNumber(0, 255, 'a database number')),
      username: v.optional(v.pipe(v.string(), v.minLength(1, 'expected a user name'))),
      passwordEnv: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name'))),
    }),
  ),
  prefix: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'expected a key prefix of letters, digits, "_", "." and "-"'))),
  concurrency: v.optional(wholeNumber(1, 1_000, 'steps at once per worker')),
});

/** The `queue` section with its defaults (`redis.url` wins over host and port). */
export interface QueueConfig {
  redis: { url?: string; host: string; port: number; db?: number; username?: string; passwordEnv?: string };
  prefix: string;
  concurrency: number;
}

/** Defaults: Redis on 127.0.0.1:6379 without a password, prefix `hookgate`, 8 steps at once per worker. */
export function queueConfig(parsed: v.InferOutput<typeof QueueSchema> | undefined): QueueConfig {
  const redis = parsed?.redis;
  return {
    redis: {
      ...(redis?.url !== undefined ? { url: redis.url } : {}),
      host: redis?.host ?? '127.0.0.1',
      port: redis?.port ?? 6379,
      ...(redis?.db !== undefined ? { db: redis.db } : {}),
      ...(redis?.username !== undefined ? { username: redis.username } : {}),
      ...(redis?.passwordEnv !== undefined ? { passwordEnv: redis.passwordEnv } : {}),
    },
    prefix: parsed?.prefix ?? DEFAULT_QUEUE_PREFIX,
    concurrency: parsed?.concurrency ?? DEFAULT_QUEUE_CONCURRENCY,
  };
}
