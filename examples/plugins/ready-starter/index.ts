import { definePlugin, Logger, Operations, v, type AgentDefinition } from 'hookgate';

/**
 * Starts one operation as soon as the kernel is ready: the agent and the
 * prompt come from its settings, so a config file alone decides what runs.
 *
 * ```yaml
 * plugins:
 *   extra: [./ready-starter/index.js]
 *   settings:
 *     ready-starter:
 *       prompt: Say hello
 *       awaitDone: true        # ready waits until the operation ended (a one-shot command)
 *       agent:
 *         id: starter
 *         model: { provider: scripted, turns: [{ text: hello from ready }] }
 * ```
 *
 * `Operations` resolves from the ready phase on (after every plugin started
 * and the runtime is built). The ids it started live in the plugin's
 * per-kernel state, never in a module variable.
 */
export default definePlugin({
  id: 'ready-starter',
  description: 'Starts an operation from its settings once the kernel is ready',
  settings: v.strictObject({
    prompt: v.pipe(v.string(), v.nonEmpty('expected a non-empty prompt')),
    /** An agent definition, as in an agent file; execAgent validates it. */
    agent: v.record(v.string(), v.unknown()),
    awaitDone: v.optional(v.boolean(), false),
  }),
  state: (): { started: string[] } => ({ started: [] }),
  register() {},
  async ready(ctx) {
    const operations = ctx.resolve(Operations);
    const run = await operations.execAgent({ agent: ctx.settings.agent as unknown as AgentDefinition, prompt: ctx.settings.prompt });
    ctx.state.started.push(run.operationId);
    ctx.resolve(Logger).info('ready-starter started an operation', { plugin: 'ready-starter', operationId: run.operationId });
    if (ctx.settings.awaitDone) await operations.wait(run.operationId);
  },
});
