import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { SubmissionEnvironments } from '../../../plugins/agent-api/agent-environment.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useSandbox } from '../../../plugins/agent-api/use-sandbox.js';
import { localSandbox } from '../../../plugins/sandbox-local/local-sandbox-factory.js';
import { recordedModel } from './agent-api-fixtures.js';

/**
 * Attack (review): a `useSandbox` environment whose declared cwd is a symlink
 * inside the root that points out of it, and a symlink the sandbox's own
 * command creates: every verb through them is refused and nothing outside
 * is read, written or created. (Passed on arrival: a regression guard.)
 */
describe('agent-api attack: symlinks out of a useSandbox environment', function () {
  this.timeout(20_000);
  let base: string;
  let root: string;
  let outside: string;
  beforeEach(async () => {
    base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-sandbox-link-')));
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    await mkdir(root);
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret.txt'), 'top secret');
    await symlink(outside, path.join(root, 'out'));
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  const environment = (cwd?: string) => {
    const rendered = renderAgent((() => (useModel(recordedModel([])), useSandbox(localSandbox(root), cwd !== undefined ? { cwd } : undefined))) as Agent);
    return new SubmissionEnvironments(() => undefined).of(rendered.sandbox, 'A').sandbox!;
  };

  it('a cwd that is a symlink leading out: reads, writes, folders, deletes and exec there are refused', async () => {
    const box = environment('out');
    await assert.rejects(box.readFile('secret.txt'), /SANDBOX_ESCAPE|outside/);
    await assert.rejects(box.writeFile('planted.txt', 'x'), /SANDBOX_ESCAPE|outside/);
    await assert.rejects(box.mkdir('planted-dir'), /SANDBOX_ESCAPE|outside/);
    await assert.rejects(box.rm('secret.txt'), /SANDBOX_ESCAPE|outside/);
    await assert.rejects(box.exec('touch planted-by-exec'), /SANDBOX_ESCAPE|outside/);
    assert.deepEqual((await readdir(outside)).sort(), ['secret.txt']);
  });

  it('a symlink the sandbox command makes inside the root leads nowhere for the file verbs', async () => {
    const box = environment();
    const made = await box.exec(`ln -s ${JSON.stringify(outside)} escape`);
    assert.equal(made.exitCode, 0, made.stderr);
    await assert.rejects(box.readFile('escape/secret.txt'), /SANDBOX_ESCAPE|outside/);
    await assert.rejects(box.writeFile('escape/planted.txt', 'x'), /SANDBOX_ESCAPE|outside/);
    await assert.rejects(box.exec('true', { cwd: 'escape' }), /SANDBOX_ESCAPE|outside/);
    assert.deepEqual((await readdir(outside)).sort(), ['secret.txt']);
  });
});
