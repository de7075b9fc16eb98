import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, isHookgateError, loadConfig, pluginsForConfig, resolvePlugins, type Kernel } from '../../index.js';
import { definePlugin } from '../../kernel/plugin.js';
import { Store } from '../../kernel/tokens.js';
import { MemoryStore } from '../../plugins/store-memory/index.js';
import { ROOT } from '../helpers/cli-process.js';

/** A plugin module outside the project: imports 'hookgate' through a node_modules link, as an installed copy would. */
const GOOD_MODULE = `import { definePlugin, ToolSources } from 'hookgate';
export default definePlugin({
  id: 'outside-tools',
  provides: [ToolSources],
  register(ctx) {
    ctx.bindValue(ToolSources, {
      id: 'outside',
      list: () => [{ identifier: 'outside', apiName: 'ping', toolSource: 'outside', parameters: { type: 'object', properties: {} } }],
      execute: async () => 'pong',
    });
  },
});
`;

/** Issue 11 item 6: `plugins.extra` loads plugin modules by path or package name, with errors naming the field and module. */
describe('config: plugins.extra', () => {
  let dir: string;
  let kernel: Kernel | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-extra-')));
    await mkdir(path.join(dir, 'node_modules'));
    await symlink(ROOT, path.join(dir, 'node_modules', 'hookgate'), 'dir');
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function config(extra: string) {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), `store: { driver: memory }\nplugins:\n  extra: ${extra}\n`);
    return loadConfig({ cwd: dir, env: {} });
  }

  async function rejectsWith(extra: string, message: RegExp): Promise<void> {
    const c = await config(extra);
    const check = (err: unknown) => {
      assert.ok(isHookgateError(err), String(err));
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, message);
      return true;
    };
    await assert.rejects(resolvePlugins(c), check);
    // createKernel defers loading to start(), which fails the same way and starts nothing.
    kernel = createKernel({ config: c, env: {} });
    await assert.rejects(kernel.start(), check);
    assert.deepEqual(kernel.plugins(), []);
  }

  it('a path relative to the config file loads in createKernel: the plugin is listed and its tool runs', async () => {
    await mkdir(path.join(dir, 'plugins'));
    await writeFile(path.join(dir, 'plugins', 'outside.js'), GOOD_MODULE);
    kernel = createKernel({ config: await config('[./plugins/outside.js]'), env: {} });
    await kernel.start();
    assert.equal(kernel.plugins().find((p) => p.id === 'outside-tools')?.state, 'started');
    const run = await kernel.execAgent({
      agent: { id: 'pinger', tools: ['outside/ping'], model: { provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'outside', apiName: 'ping', args: {} }] }, { text: 'done' }] } } as never,
      prompt: 'ping',
    });
    await run.completed();
    assert.equal((await kernel.listMessages(run.operationId)).find((m) => m.role === 'tool')?.content, 'pong');
  });

  it('an absolute path and a package name (resolved from the config folder) load too', async () => {
    await writeFile(path.join(dir, 'abs.js'), GOOD_MODULE.replace("'outside-tools'", "'abs-tools'"));
    await mkdir(path.join(dir, 'node_modules', 'hookgate-plugin-demo'));
    await writeFile(path.join(dir, 'node_modules', 'hookgate-plugin-demo', 'package.json'), JSON.stringify({ name: 'hookgate-plugin-demo', type: 'module', main: 'index.js' }));
    await writeFile(path.join(dir, 'node_modules', 'hookgate-plugin-demo', 'index.js'), GOOD_MODULE.replace("'outside-tools'", "'demo-tools'"));
    const plugins = await resolvePlugins(await config(`[${JSON.stringify(path.join(dir, 'abs.js'))}, hookgate-plugin-demo]`));
    assert.deepEqual(plugins.slice(-2).map((p) => p.id), ['abs-tools', 'demo-tools']);
  });

  it('a missing file names the field, the module and where it looked', async () => {
    await rejectsWith('[./nope.js]', new RegExp(`^plugins\\.extra\\[0\\] \\("\\./nope\\.js"\\): cannot find the module \\(looked for ${path.join(dir, 'nope.js').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)$`));
  });

  it('a missing package names the field, the package and the folder it was resolved from', async () => {
    await rejectsWith('[no-such-hookgate-plugin]', /^plugins\.extra\[0\] \("no-such-hookgate-plugin"\): cannot find the package \(resolved from .*; is it installed there\?\)$/);
  });

  it('a module without a default export is refused, saying how to export the plugin', async () => {
    await writeFile(path.join(dir, 'named.js'), 'export const plugin = {};\n');
    await rejectsWith('[./named.js]', /^plugins\.extra\[0\] \("\.\/named\.js"\): the module has no default export; export the plugin as `export default definePlugin/);
  });

  it('a default export that is not a plugin is refused with what is wrong with its shape', async () => {
    await writeFile(path.join(dir, 'bad.js'), "export default { id: 'bad-plugin', register: 'yes', provides: [42] };\n");
    await rejectsWith(
      '[./bad.js]',
      /^plugins\.extra\[0\] \("\.\/bad\.js"\): the default export is not a plugin: plugin "bad-plugin" is not a valid plugin: register must be a function, got "yes"; provides\[0\] must be a token \(createToken\), got 42$/,
    );
    await writeFile(path.join(dir, 'fn.js'), 'export default function plugin() {}\n');
    await rejectsWith('[./fn.js]', /the default export is not a plugin: expected a plugin \(an object made by definePlugin\), got a function/);
  });

  it('a module that throws while loading is refused with its error', async () => {
    await writeFile(path.join(dir, 'throws.js'), "throw new Error('cannot load me');\n");
    await rejectsWith('[./throws.js]', /^plugins\.extra\[0\] \("\.\/throws\.js"\): the module failed to load: cannot load me$/);
  });

  it('store.driver picks a store plugin that another module provides; two plugins may not claim one driver', async () => {
    const custom = definePlugin({
      id: 'store-custom',
      provides: [Store],
      drivers: [{ kind: 'store', name: 'custom' }],
      register: (ctx) => ctx.bindFactory(Store, () => new MemoryStore()),
      start: (ctx) => ctx.resolve(Store).migrate(),
    });
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'store: { driver: custom }\n');
    const c = loadConfig({ cwd: dir, env: {} });
    const ids = pluginsForConfig(c, [custom]).map((p) => p.id);
    assert.ok(ids.includes('store-custom') && !ids.includes('store-sqlite') && !ids.includes('store-memory'), ids.join(', '));
    kernel = createKernel({ config: c, replacePlugins: pluginsForConfig(c, [custom]), env: {} });
    await kernel.start();
    assert.ok(kernel.store instanceof MemoryStore);
    const twin = definePlugin({ ...custom, id: 'store-custom-twin' });
    assert.throws(() => pluginsForConfig(c, [custom, twin]), /store\.driver: plugins "store-custom" and "store-custom-twin" both provide the store driver "custom"; only one may/);
  });
});
