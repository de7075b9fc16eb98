import { definePlugin } from '../../kernel/plugin.js';
import { Config, Logger, Store, ToolPolicies } from '../../kernel/tokens.js';
import { policyPaths } from '../../config/policy-paths.js';
import { PolicyEngine } from '../../policies/index.js';


/** One engine per kernel container, so start and stop reach the instance the factory made. */
const engines = new WeakMap<object, PolicyEngine>();

/**
 * Policy-as-code as a plugin: loads the configured packs on start (an invalid
 * pack fails the start with every error listed), answers tool calls and
 * results in-process before any webhook control, and writes every decision
 * to the store's decision log. Its worker pool lives and dies with the kernel.
 */
export default definePlugin({
  id: 'policy-engine',
  description: 'Tool policies from YAML packs: re2 matchers, JSONata conditions in worker threads, decision log',
  requires: [Config, Logger, Store],
  provides: [ToolPolicies],
  register(ctx) {
    const config = ctx.resolve(Config);
    ctx.bindFactory(ToolPolicies, (c) => {
      const engine = new PolicyEngine({
        paths: policyPaths(config),
        defaultDecision: config.policies.defaultDecision,
        deadlineMs: config.policies.deadlineMs,
        maxWorkers: config.policies.maxWorkers,
        logRawArgs: config.policies.logRawArgs,
        hotReload: config.policies.hotReload,
        store: c.resolve(Store),
        logger: c.resolve(Logger).child({ component: 'policies' }),
      });
      engines.set(c.container, engine);
      return engine;
    });
  },
  async start(ctx) {
    ctx.resolveAll(ToolPolicies);
    await engines.get(ctx.container)?.start();
  },
  async stop(ctx) {
    const engine = engines.get(ctx.container);
    engines.delete(ctx.container);
    await engine?.stop();
  },
});
