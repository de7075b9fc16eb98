import { definePlugin } from '../../kernel/plugin.js';
import { Store } from '../../kernel/tokens.js';
import { MemoryStore } from './memory-store.js';

/** The Store contract in process memory, for tests and benchmarks. Data is gone when the process ends. */
export default definePlugin({
  id: 'store-memory',
  description: 'Operations, messages, hooks, users and the decision log in process memory',
  provides: [Store],
  drivers: [{ kind: 'store', name: 'memory' }],
  register(ctx) {
    ctx.bindFactory(Store, () => new MemoryStore());
  },
  async start(ctx) {
    await ctx.resolve(Store).migrate();
  },
  async stop(ctx) {
    await ctx.resolve(Store).close();
  },
});

export { MemoryStore } from './memory-store.js';
