import { HookgateError } from '../../kernel/errors.js';
import type { PostgresConfig } from '../../config/postgres-schema.js';

/**
 * The password `store.postgres.passwordEnv` names, read from `env` (the
 * kernel's environment). No `passwordEnv`: undefined (trust, peer or
 * PGPASSFILE authentication). A named variable that is unset or empty:
 * CONFIG_INVALID naming the variable (never a value). Synchronous.
 */
export function postgresPassword(config: Pick<PostgresConfig, 'passwordEnv'>, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const name = config.passwordEnv;
  if (name === undefined) return undefined;
  const value = env[name];
  if (value === undefined || value === '') {
    throw new HookgateError('CONFIG_INVALID', `store.postgres.passwordEnv: the environment variable ${name} is not set; it must hold the PostgreSQL password (the config names the variable, never the password)`, {
      details: { field: 'store.postgres.passwordEnv', variable: name },
    });
  }
  return value;
}
