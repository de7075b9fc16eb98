import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig, type Kernel } from '../../index.js';
import { ROOT, runHookgate } from '../helpers/cli-process.js';

/**
 * Issue 11, done-when: a plugin loaded through `plugins.extra` from a folder
 * outside the project starts operations from its `ready` phase
 * (examples/plugins/ready-starter). The built example is copied to a temp
 * folder with hookgate linked in as its node_modules/hookgate, as an app that
 * installed hookgate would have it.
 */
describe('examples/plugins/ready-starter, loaded from outside the project', function () {
  this.timeout(60_000);
  let dir: string;
  let kernel: Kernel | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-ready-starter-')));
    assert.ok(!dir.startsWith(ROOT + path.sep), 'the plugin folder is outside the project');
    await mkdir(path.join(dir, 'node_modules'));
    await symlink(ROOT, path.join(dir, 'node_modules', 'hookgate'), 'dir');
    await mkdir(path.join(dir, 'my-plugins'));
    await copyFile(path.join(ROOT, 'dist', 'examples', 'plugins', 'ready-starter', 'index.js'), path.join(dir, 'my-plugins', 'ready-starter.js'));
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const configYaml = (awaitDone: boolean) =>
    [
      'plugins:',
      '  extra: [./my-plugins/ready-starter.js]',
      '  settings:',
      '    ready-starter:',
      '      prompt: Say hello from ready',
      `      awaitDone: ${awaitDone}`,
      '      agent:',
      '        id: starter',
      '        model: { provider: scripted, turns: [{ text: hello from the ready phase }] }',
      '',
    ].join('\n');

  it('createKernel: the operation it starts in ready is stored and runs to done in the SQLite store', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), configYaml(false));
    kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
    await kernel.start();
    assert.equal(kernel.plugins().find((p) => p.id === 'ready-starter')?.state, 'started');
    const [op] = await kernel.listOperations();
    assert.ok(op, 'ready persisted an operation before start() resolved');
    assert.equal(op.agentId, 'starter');
    const final = await kernel.waitForOperation(op.id);
    assert.equal(final.status, 'done');
    const messages = await kernel.listMessages(op.id);
    assert.deepEqual(messages.map((m) => [m.role, m.content]), [['user', 'Say hello from ready'], ['assistant', 'hello from the ready phase']]);
  });

  it('the real CLI loads it for every command that builds a kernel: the operation is done in the store afterwards', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), configYaml(true));
    const plugins = await runHookgate(dir, ['plugins', '--json']);
    assert.equal(plugins.code, 0, plugins.stderr);
    const listed = JSON.parse(plugins.stdout) as Array<{ id: string; state: string }>;
    assert.equal(listed.find((p) => p.id === 'ready-starter')?.state, 'started');
    const ops = await runHookgate(dir, ['operations', '--json']);
    assert.equal(ops.code, 0, ops.stderr);
    const stored = JSON.parse(ops.stdout) as Array<{ agentId: string; status: string }>;
    // One from `plugins`, one from `operations` itself: each kernel's ready ran and waited for its operation.
    assert.equal(stored.length, 2, ops.stdout);
    assert.ok(stored.every((o) => o.agentId === 'starter' && o.status === 'done'), ops.stdout);
  });

  it("policy check's tool catalog includes the tools of a plugins.extra module (greeting-tools, copied outside)", async () => {
    await copyFile(path.join(ROOT, 'dist', 'examples', 'plugins', 'greeting-tools', 'index.js'), path.join(dir, 'my-plugins', 'greeting-tools.js'));
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'plugins:\n  extra: [./my-plugins/greeting-tools.js]\n');
    const res = await runHookgate(dir, ['policy', 'check', '--json']);
    const out = JSON.parse(res.stdout) as { catalog: { tools: string[]; sources: string[]; problems: string[] } };
    assert.ok(out.catalog.tools.includes('greet/hello'), res.stdout);
    assert.ok(out.catalog.sources.includes('greeting (greeting-tools)'), res.stdout);
    assert.deepEqual(out.catalog.problems, []);
  });

  it('a bad plugins.extra entry fails the CLI command with the field and the module named', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'plugins:\n  extra: [./my-plugins/missing.js]\n');
    const res = await runHookgate(dir, ['operations']);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /plugins\.extra\[0\] \("\.\/my-plugins\/missing\.js"\): cannot find the module \(looked for .*missing\.js\)/);
  });
});
