import * as v from 'valibot';
import { HookgateConfigToken } from '../../config/config-token.js';
import { definePlugin } from '../../kernel/plugin.js';
import { Config, ThreadHooks } from '../../kernel/tokens.js';
import { DEFAULT_HOOKS_FOLDER, loadHooksFolder } from './hooks-folder.js';
import { ThreadHooksRuntime } from './thread-hooks-service.js';

export { ThreadHooksRuntime } from './thread-hooks-service.js';

/** `plugins.settings.thread-hooks`: the hooks folder (default `agents/hooks`, relative to the project). */
const SettingsSchema = v.strictObject({
  folder: v.optional(v.pipe(v.string(), v.minLength(1))),
});

/**
 * `thread-hooks`: document 003's thread hooks. Provides the `ThreadHooks`
 * token the runtime opens each operation's hooks through; `start` loads the
 * hooks folder (a missing default folder means no folder hooks; a configured
 * one must exist). Agents select hooks by id (`threadHooks` in an agent file).
 */
export default definePlugin({
  id: 'thread-hooks',
  description: 'Thread hooks (document 003): hooks over the conversation, loaded from the hooks folder or given in code',
  requires: [Config],
  provides: [ThreadHooks],
  settings: SettingsSchema,
  state: (): { runtime: ThreadHooksRuntime } => ({ runtime: new ThreadHooksRuntime() }),
  register(ctx) {
    ctx.bindValue(ThreadHooks, ctx.state.runtime);
  },
  async start(ctx) {
    const settings = ctx.settings as v.InferOutput<typeof SettingsSchema>;
    const config = ctx.resolve(HookgateConfigToken);
    const hooks = await loadHooksFolder({ folder: settings.folder ?? DEFAULT_HOOKS_FOLDER, baseDir: config.baseDir ?? process.cwd(), required: settings.folder !== undefined });
    ctx.state.runtime.setFolderHooks(hooks);
  },
});
