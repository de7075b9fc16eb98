import { definePlugin } from '../../kernel/plugin.js';
import { HookgateConfigToken } from '../../config/config-token.js';
import { Config, Environment, Logger, Secrets, Store } from '../../kernel/tokens.js';
import { postgresPassword } from './postgres-password.js';
import { PostgresStore } from './postgres-store.js';

/**
 * The networked store (`store.driver: postgres`): PostgreSQL through a
 * node-postgres Pool, its tables in `store.postgres.schema`. The store is
 * built when first resolved: CONFIG_INVALID then when `passwordEnv` names a
 * variable that is not set (the password is registered as a secret, so
 * logs never show it). Start connects and migrates (STORE_UNAVAILABLE when
 * the server cannot be used, STORE_SCHEMA_NEWER for a newer schema); stop
 * ends the pool.
 */
export default definePlugin({
  id: 'store-postgres',
  description: 'Operations, messages, hooks, users, submissions and the decision log in PostgreSQL (node-postgres), shared by several processes',
  requires: [Config, Logger, Environment],
  optional: [Secrets],
  provides: [Store],
  drivers: [{ kind: 'store', name: 'postgres' }],
  register(ctx) {
    ctx.bindFactory(Store, (c) => {
      const config = c.resolve(HookgateConfigToken).store.postgres;
      const password = postgresPassword(config, c.resolve(Environment));
      if (password !== undefined && c.has(Secrets)) c.resolve(Secrets).add(password);
      const { passwordEnv: _name, ...where } = config;
      return new PostgresStore({ ...where, password, logger: c.resolve(Logger).child({ plugin: 'store-postgres' }) });
    });
  },
  async start(ctx) {
    await ctx.resolve(Store).migrate();
  },
  async stop(ctx) {
    await ctx.resolve(Store).close();
  },
});

export { PostgresStore } from './postgres-store.js';
export type { PostgresStoreOptions } from './postgres-store.js';
