import { definePlugin } from '../../kernel/plugin.js';
import { Config, Logger, Store, ToolPolicies } from '../../kernel/tokens.js';
import { HookgateConfigToken } from '../../config/config-token.js';
import { policyPaths } from '../../config/policy-paths.js';
import { PolicyEngine } from '../../policies/index.js';

/**
 * Policy-as-code as a plugin: loads the configured packs on start (an invalid
 * pack fails the start with every error listed), answers tool calls and
 * results in-process before any webhook control, and writes every decision
 * to the store's decision log. Its worker pool lives and dies with the kernel:
 * the engine the factory made is kept in the plugin's per-kernel state, so
 * start and stop reach this kernel's engine and no other.
 */
export default definePlugin({
  id: 'policy-engine',
  description: 'Tool policies from YAML packs: re2 matchers, JSONata conditions in worker threads, decision log',
  requires: [Config, Logger, Store],
  provides: [ToolPolicies],
  state: (): { engine?: PolicyEngine } => ({}),
  register(ctx) {
    const config = ctx.resolve(HookgateConfigToken);
    ctx.bindFactory(ToolPolicies, (c) => {
      const engine = new PolicyEngine({
        paths: policyPaths(config),
        defaultDecision: config.policies.defaultDecision,
        deadlineMs: config.policies.deadlineMs,
        maxWorkers: config.policies.maxWorkers,
        maxInFlight: config.policies.maxInFlight,
        logRawArgs: config.policies.logRawArgs,
        hotReload: config.policies.hotReload,
        store: c.resolve(Store),
        logger: c.resolve(Logger).child({ component: 'policies' }),
      });
      c.state.engine = engine;
      return engine;
    });
  },
  async start(ctx) {
    ctx.resolveAll(ToolPolicies);
    await ctx.state.engine?.start();
  },
  async stop(ctx) {
    const engine = ctx.state.engine;
    ctx.state.engine = undefined;
    await engine?.stop();
  },
});
