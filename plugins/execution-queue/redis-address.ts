import { HookgateError } from '../../kernel/errors.js';
import type { QueueConfig } from '../../config/queue-schema.js';

/** The connection settings both the probe (ioredis) and BullMQ take. */
export interface RedisClientOptions {
  host?: string;
  port?: number;
  db?: number;
  username?: string;
  password?: string;
  tls?: Record<string, never>;
}

/** How to reach Redis: the client options (password included) and the address to show (never the password). */
export interface RedisAddress {
  options: RedisClientOptions;
  /** `redis://host:port/db`, with the user name when one is set and no password: what logs and errors show. */
  shown: string;
}

/**
 * Builds the Redis client options from the `queue.redis` section: `url`
 * (without a password: the config check refuses one) or host and port, the
 * password read from the variable `passwordEnv` names. Throws CONFIG_INVALID
 * naming that variable (not its value) when it is named but unset. Called at
 * plugin start; never logs.
 */
export function redisAddress(redis: QueueConfig['redis'], env: Readonly<Record<string, string | undefined>>): RedisAddress {
  const options: RedisClientOptions = {};
  let shown: string;
  if (redis.url !== undefined) {
    const url = new URL(redis.url);
    options.host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    options.port = url.port === '' ? 6379 : Number(url.port);
    if (url.username !== '') options.username = decodeURIComponent(url.username);
    const db = url.pathname.replace(/^\//, '');
    if (db !== '') options.db = Number(db);
    if (url.protocol === 'rediss:') options.tls = {};
    shown = `${url.protocol}//${url.username !== '' ? `${url.username}@` : ''}${url.host}${db !== '' ? `/${db}` : ''}`;
  } else {
    options.host = redis.host;
    options.port = redis.port;
    shown = `redis://${redis.username !== undefined ? `${encodeURIComponent(redis.username)}@` : ''}${redis.host.includes(':') ? `[${redis.host}]` : redis.host}:${redis.port}`;
  }
  if (redis.db !== undefined) {
    options.db = redis.db;
    shown = `${shown.replace(/\/\d+$/, '')}/${redis.db}`;
  }
  if (redis.username !== undefined) options.username = redis.username;
  if (redis.passwordEnv !== undefined) {
    const password = env[redis.passwordEnv];
    if (password === undefined || password === '') {
      throw new HookgateError('CONFIG_INVALID', `queue.redis.passwordEnv: the environment variable ${redis.passwordEnv} is not set (it should hold the Redis password)`, {
        details: { field: 'queue.redis.passwordEnv', variable: redis.passwordEnv },
      });
    }
    options.password = password;
  }
  return { options, shown };
}
