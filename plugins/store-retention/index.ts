import { HookgateConfigToken } from '../../config/config-token.js';
import { definePlugin } from '../../kernel/plugin.js';
import { prunesAnything } from '../../kernel/retention.js';
import { Config, Logger, Store } from '../../kernel/tokens.js';
import { RetentionTimer } from './retention-timer.js';

/**
 * The config's `retention` applied in the background: once the kernel is
 * ready, `Store.prune` runs every `retention.interval` (default 1h; the
 * first pass one interval after start, so a short CLI command never waits on
 * one) on an unref'd timer; errors are logged, never thrown. Without limits
 * in the config nothing is scheduled. `hookgate prune` runs the same pass on
 * demand. Stops before the store does (it requires it), waiting for a pass
 * in progress to finish its batch.
 */
export default definePlugin({
  id: 'store-retention',
  description: 'Prunes finished threads and old decisions in the background by the config\'s retention',
  requires: [Config, Logger, Store],
  state: (): { timer?: RetentionTimer } => ({}),
  register() {},
  ready(ctx) {
    const { policy, intervalMs } = ctx.resolve(HookgateConfigToken).retention ?? { policy: {}, intervalMs: 0 };
    if (!prunesAnything(policy)) return;
    ctx.state.timer = new RetentionTimer(ctx.resolve(Store), policy, intervalMs, ctx.resolve(Logger).child({ plugin: 'store-retention' }));
    ctx.state.timer.start();
  },
  async stop(ctx) {
    const timer = ctx.state.timer;
    ctx.state.timer = undefined;
    await timer?.stop();
  },
});

export { RetentionTimer } from './retention-timer.js';
