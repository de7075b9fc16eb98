import { definePlugin } from '../../kernel/plugin.js';
import { Config, Logger, ToolSources } from '../../kernel/tokens.js';
import { HookgateConfigToken } from '../../config/config-token.js';
import { BuiltinToolSource } from './builtin-tool-source.js';
import { createSandboxFs, type SandboxFs } from './sandbox-path.js';

export { BuiltinToolSource } from './builtin-tool-source.js';
export { createSandboxFs, SandboxFs } from './sandbox-path.js';

/**
 * `tools-builtin`: provides the `builtin` tool source (`fs/readFile`,
 * `fs/writeFile`, `fs/listDir`, `fs/stat`, `fs/deletePath`, `time/now`).
 * Every `fs` path is confined to `config.sandbox.root`. `register` does no
 * I/O; `start` creates the sandbox folder and fails (wrapped by the kernel
 * with this plugin's id) when it cannot. The sandbox lives in the plugin's
 * per-kernel state, so register and start see the same one.
 */
export default definePlugin({
  id: 'tools-builtin',
  description: 'File tools confined to the sandbox folder, and the current time',
  requires: [Config, Logger],
  provides: [ToolSources],
  drivers: [{ kind: 'tool-source', name: 'builtin' }],
  state: (): { sandbox?: SandboxFs } => ({}),
  register(ctx) {
    const sandbox = createSandboxFs(ctx.resolve(HookgateConfigToken).sandbox.root);
    ctx.state.sandbox = sandbox;
    const logger = ctx.resolve(Logger).child({ plugin: 'tools-builtin' });
    ctx.bindValue(ToolSources, new BuiltinToolSource({ sandbox, logger }));
  },
  async start(ctx) {
    const sandbox = ctx.state.sandbox ?? createSandboxFs(ctx.resolve(HookgateConfigToken).sandbox.root);
    const realRoot = await sandbox.ensureRoot();
    ctx.resolve(Logger).debug('sandbox folder ready', { plugin: 'tools-builtin', root: realRoot });
  },
});
