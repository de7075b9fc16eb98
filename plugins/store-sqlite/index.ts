import { definePlugin } from '../../kernel/plugin.js';
import { HookgateConfigToken } from '../../config/config-token.js';
import { Config, Logger, Store } from '../../kernel/tokens.js';
import { SqliteStore } from './sqlite-store.js';

/**
 * The embedded store: a SQLite file at `config.store.sqlite.path`. Start opens
 * the file and migrates it (failing with STORE_CORRUPT or STORE_SCHEMA_NEWER
 * for a file it must not touch) and starts the background checkpointer unless
 * `store.sqlite.backgroundCheckpoints` is false; stop closes both.
 */
export default definePlugin({
  id: 'store-sqlite',
  description: 'Operations, messages, hooks, users and the decision log in a SQLite file (better-sqlite3)',
  requires: [Config, Logger],
  provides: [Store],
  drivers: [{ kind: 'store', name: 'sqlite' }],
  register(ctx) {
    ctx.bindFactory(
      Store,
      (c) => {
        const { path, backgroundCheckpoints } = c.resolve(HookgateConfigToken).store.sqlite;
        return new SqliteStore({ path, backgroundCheckpoints, logger: c.resolve(Logger).child({ plugin: 'store-sqlite' }) });
      },
    );
  },
  async start(ctx) {
    await ctx.resolve(Store).migrate();
  },
  async stop(ctx) {
    await ctx.resolve(Store).close();
  },
});

export { SqliteStore } from './sqlite-store.js';
export type { SqliteStoreOptions } from './sqlite-store.js';
