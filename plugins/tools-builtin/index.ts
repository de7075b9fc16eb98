import { definePlugin } from '../../kernel/plugin.js';
import { Config, Logger, ToolSources } from '../../kernel/tokens.js';
import { BuiltinToolSource } from './builtin-tool-source.js';
import { createSandboxFs, type SandboxFs } from './sandbox-path.js';

export { BuiltinToolSource } from './builtin-tool-source.js';
export { createSandboxFs, SandboxFs } from './sandbox-path.js';

// One sandbox per kernel; register and start see the same container.
const sandboxes = new WeakMap<object, SandboxFs>();

/**
 * `tools-builtin`: provides the `builtin` tool source (`fs/readFile`,
 * `fs/writeFile`, `fs/listDir`, `fs/stat`, `fs/deletePath`, `time/now`).
 * Every `fs` path is confined to `config.sandbox.root`. `register` does no
 * I/O; `start` creates the sandbox folder and fails (wrapped by the kernel
 * with this plugin's id) when it cannot.
 */
export default definePlugin({
  id: 'tools-builtin',
  description: 'File tools confined to the sandbox folder, and the current time',
  requires: [Config, Logger],
  provides: [ToolSources],
  register(ctx) {
    const sandbox = createSandboxFs(ctx.resolve(Config).sandbox.root);
    sandboxes.set(ctx.container, sandbox);
    const logger = ctx.resolve(Logger).child({ plugin: 'tools-builtin' });
    ctx.bindValue(ToolSources, new BuiltinToolSource({ sandbox, logger }));
  },
  async start(ctx) {
    const sandbox = sandboxes.get(ctx.container) ?? createSandboxFs(ctx.resolve(Config).sandbox.root);
    const realRoot = await sandbox.ensureRoot();
    ctx.resolve(Logger).debug('sandbox folder ready', { plugin: 'tools-builtin', root: realRoot });
  },
});
