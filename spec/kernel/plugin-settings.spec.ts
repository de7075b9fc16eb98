import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import greetingPlugin from '../../examples/plugins/greeting-tools/index.js';
import { createKernel, definePlugin, loadConfig, v, type Kernel } from '../../index.js';

/** A plugin's own config section, `plugins.settings.<id>`, validated by its schema and typed in ctx.settings (issue 10 item 2). */
describe('kernel: plugin settings', () => {
  let dir: string;
  let kernel: Kernel | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-plugin-settings-')));
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** A kernel on a config file with `yaml` under `plugins:`, a memory store, and `plugins`. */
  async function kernelWith(yaml: string, plugins = [greetingPlugin]): Promise<Kernel> {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), `store: { driver: memory }\nplugins:\n${yaml}`);
    kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), plugins, env: {} });
    return kernel;
  }

  async function greet(k: Kernel): Promise<string> {
    k.agents.define({ id: 'greeter', tools: ['greet/*'], model: { provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'greet', apiName: 'hello', args: { name: 'Ada' } }] }, { text: 'ok' }] } });
    const run = await k.execAgent({ agentId: 'greeter', prompt: 'greet Ada' });
    await run.completed();
    return (await k.listMessages(run.operationId)).find((m) => m.role === 'tool')!.content;
  }

  it('the greeting-tools example reads its greeting from plugins.settings.greeting-tools', async () => {
    const k = await kernelWith('  settings:\n    greeting-tools: { greeting: Hi }\n');
    await k.start();
    assert.equal(await greet(k), 'Hi, Ada!');
  });

  it('an absent section is validated as {}: the schema\'s defaults apply', async () => {
    const k = await kernelWith('  settings: {}\n');
    await k.start();
    assert.equal(await greet(k), 'Hello, Ada!');
  });

  it('a value of the wrong type: kernel.start() fails with CONFIG_INVALID naming the field, before any plugin registers', async () => {
    const registered: string[] = [];
    const witness = definePlugin({ id: 'witness', register: () => void registered.push('witness') });
    const k = await kernelWith('  settings:\n    greeting-tools: { greeting: 42 }\n', [greetingPlugin, witness]);
    await assert.rejects(k.start(), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.equal(err.message, 'plugins.settings.greeting-tools.greeting: expected string, got 42');
      return true;
    });
    assert.deepEqual(registered, []);
  });

  it('a schema\'s own message, an unknown key, a plugin that is not loaded and a plugin without settings are each reported, all at once', async () => {
    const k = await kernelWith(
      '  settings:\n    greeting-tools: { greeting: "", greting: Hi }\n    greeting-tool: { greeting: Hi }\n    model-scripted: { fast: true }\n',
      [greetingPlugin],
    );
    await assert.rejects(k.start(), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'CONFIG_INVALID');
      const lines = err.message.split('\n');
      assert.ok(lines.includes('plugins.settings.greeting-tools.greeting: expected a non-empty greeting'), err.message);
      assert.ok(lines.includes('plugins.settings.greeting-tools.greting: unknown key'), err.message);
      assert.ok(lines.some((l) => /^plugins\.settings\.greeting-tool: no plugin with this id is loaded \(loaded: .*greeting-tools/.test(l)), err.message);
      assert.ok(lines.includes('plugins.settings.model-scripted: plugin model-scripted takes no settings'), err.message);
      assert.equal(lines.length, 4, err.message);
      return true;
    });
  });

  it('the validated (transformed) value reaches register, start and stop as typed ctx.settings', async () => {
    const seen: Array<[string, number, string[]]> = [];
    const sized = definePlugin({
      id: 'sized',
      settings: v.object({ limit: v.pipe(v.string(), v.transform(Number), v.number()), tags: v.optional(v.array(v.string()), []) }),
      register(ctx) {
        const limit: number = ctx.settings.limit;
        seen.push(['register', limit, ctx.settings.tags]);
      },
      start: (ctx) => void seen.push(['start', ctx.settings.limit, ctx.settings.tags]),
      stop: (ctx) => void seen.push(['stop', ctx.settings.limit, ctx.settings.tags]),
    });
    const k = await kernelWith('  settings:\n    sized: { limit: "12", tags: [a] }\n', [sized]);
    await k.start();
    await k.stop();
    assert.deepEqual(seen, [['register', 12, ['a']], ['start', 12, ['a']], ['stop', 12, ['a']]]);
  });

  it('the config refuses a settings key that is not a plugin id, and a plugins.extra that is not a list of module names', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'plugins:\n  settings:\n    Greeting_Tools: {}\n');
    assert.throws(() => loadConfig({ cwd: dir, env: {} }), /plugins\.settings.*expected a plugin id \(kebab-case, such as greeting-tools\)/);
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'plugins:\n  extra: [./my-plugin.js]\n');
    assert.deepEqual(loadConfig({ cwd: dir, env: {} }).plugins.extra, ['./my-plugin.js']);
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'plugins:\n  extra: [42]\n');
    assert.throws(() => loadConfig({ cwd: dir, env: {} }), /plugins\.extra/);
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'plugins:\n  extra: ["  "]\n');
    assert.throws(() => loadConfig({ cwd: dir, env: {} }), /plugins\.extra: expected module paths or package names, none empty/);
  });
});
