import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { isHookgateError } from '../../../kernel/errors.js';
import { createSandboxFs } from '../../../plugins/tools-builtin/sandbox-path.js';
import { createSandboxFixture, type SandboxFixture } from './sandbox-fixture.js';

/** Asserts a SANDBOX_ESCAPE whose message names the path as the caller wrote it. */
function refusedAsEscape(userPath: string) {
  return (err: unknown) => {
    assert.ok(isHookgateError(err, 'SANDBOX_ESCAPE'), `expected SANDBOX_ESCAPE, got ${String(err)}`);
    assert.ok(err.message.startsWith(`path ${JSON.stringify(userPath)} `), err.message);
    return true;
  };
}

describe('tools-builtin sandbox confinement', () => {
  let fx: SandboxFixture;

  beforeEach(async () => {
    fx = await createSandboxFixture();
    await writeFile(path.join(fx.outside, 'secret.txt'), 'outside secret');
  });
  afterEach(() => fx.cleanup());

  it('refuses "../x" with a message naming the path', async () => {
    await assert.rejects(fx.call('fs', 'readFile', { path: '../outside/secret.txt' }), (err: unknown) => {
      assert.ok(isHookgateError(err, 'SANDBOX_ESCAPE'));
      assert.equal(err.message, 'path "../outside/secret.txt" is outside the sandbox');
      return true;
    });
  });

  it('refuses "a/../../x" and writes nothing outside', async () => {
    await assert.rejects(fx.call('fs', 'writeFile', { path: 'a/../../outside/new.txt', content: 'x' }), refusedAsEscape('a/../../outside/new.txt'));
    assert.equal(existsSync(path.join(fx.outside, 'new.txt')), false);
  });

  it('refuses /etc/passwd', async () => {
    await assert.rejects(fx.call('fs', 'readFile', { path: '/etc/passwd' }), refusedAsEscape('/etc/passwd'));
  });

  it('refuses an absolute path outside the root', async () => {
    const abs = path.join(fx.outside, 'secret.txt');
    await assert.rejects(fx.call('fs', 'readFile', { path: abs }), refusedAsEscape(abs));
  });

  it('refuses a sibling folder whose name starts with the root name', async () => {
    await mkdir(`${fx.root}-evil`);
    await writeFile(`${fx.root}-evil/x.txt`, 'x');
    await assert.rejects(fx.call('fs', 'readFile', { path: `${fx.root}-evil/x.txt` }), refusedAsEscape(`${fx.root}-evil/x.txt`));
  });

  it('accepts an absolute path inside the root', async () => {
    const abs = path.join(fx.root, 'notes', 'a.txt');
    const written = await fx.call('fs', 'writeFile', { path: abs, content: 'inside' });
    assert.deepEqual(written.data, { path: 'notes/a.txt', bytes: 6 });
    assert.equal((await fx.call('fs', 'readFile', { path: abs })).content, 'inside');
  });

  it('accepts absolute paths through both the configured and the real root when the root is a symlink', async () => {
    const linkedRoot = path.join(fx.base, 'root-link');
    await symlink(fx.root, linkedRoot);
    const sandbox = createSandboxFs(linkedRoot);
    await writeFile(path.join(fx.root, 'a.txt'), 'A');
    assert.equal((await sandbox.readFile(path.join(linkedRoot, 'a.txt'))).text, 'A');
    assert.equal((await sandbox.readFile(path.join(fx.root, 'a.txt'))).text, 'A');
  });

  it('refuses reading through a symlink file that points outside', async () => {
    await symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.root, 'link.txt'));
    await assert.rejects(fx.call('fs', 'readFile', { path: 'link.txt' }), refusedAsEscape('link.txt'));
  });

  it('refuses a relative symlink that climbs out of the root', async () => {
    await symlink('../outside/secret.txt', path.join(fx.root, 'rel-link.txt'));
    await assert.rejects(fx.call('fs', 'readFile', { path: 'rel-link.txt' }), refusedAsEscape('rel-link.txt'));
  });

  it('refuses reading a file under a symlinked folder that points outside', async () => {
    await symlink(fx.outside, path.join(fx.root, 'linked-dir'));
    await assert.rejects(fx.call('fs', 'readFile', { path: 'linked-dir/secret.txt' }), refusedAsEscape('linked-dir/secret.txt'));
  });

  it('refuses listing a symlinked folder that points outside', async () => {
    await symlink(fx.outside, path.join(fx.root, 'linked-dir'));
    await assert.rejects(fx.call('fs', 'listDir', { path: 'linked-dir' }), refusedAsEscape('linked-dir'));
  });

  it('refuses writing into a symlinked folder that points outside, even into a new subfolder', async () => {
    await symlink(fx.outside, path.join(fx.root, 'linked-dir'));
    await assert.rejects(fx.call('fs', 'writeFile', { path: 'linked-dir/sub/new.txt', content: 'x' }), refusedAsEscape('linked-dir/sub/new.txt'));
    assert.deepEqual(await readdir(fx.outside), ['secret.txt']);
  });

  it('refuses writing through a symlink file that points outside and leaves the target unchanged', async () => {
    await symlink(path.join(fx.outside, 'secret.txt'), path.join(fx.root, 'link.txt'));
    await assert.rejects(fx.call('fs', 'writeFile', { path: 'link.txt', content: 'overwritten' }), refusedAsEscape('link.txt'));
    assert.equal(await readFile(path.join(fx.outside, 'secret.txt'), 'utf8'), 'outside secret');
  });

  it('refuses writing through a dangling symlink that points outside and creates nothing', async () => {
    await symlink(path.join(fx.outside, 'not-yet.txt'), path.join(fx.root, 'dangling.txt'));
    await assert.rejects(fx.call('fs', 'writeFile', { path: 'dangling.txt', content: 'x' }), refusedAsEscape('dangling.txt'));
    assert.equal(existsSync(path.join(fx.outside, 'not-yet.txt')), false);
  });

  it('refuses a chain of symlinks that ends outside', async () => {
    await symlink(fx.outside, path.join(fx.root, 'hop2'));
    await symlink('hop2', path.join(fx.root, 'hop1'));
    await assert.rejects(fx.call('fs', 'readFile', { path: 'hop1/secret.txt' }), refusedAsEscape('hop1/secret.txt'));
  });

  it('follows a symlink that stays inside the root', async () => {
    await mkdir(path.join(fx.root, 'real'));
    await writeFile(path.join(fx.root, 'real', 'a.txt'), 'inside');
    await symlink('real', path.join(fx.root, 'alias'));
    assert.equal((await fx.call('fs', 'readFile', { path: 'alias/a.txt' })).content, 'inside');
  });

  it('refuses a path containing a NUL byte', async () => {
    await assert.rejects(fx.call('fs', 'readFile', { path: 'a.txt\0../../etc/passwd' }), (err: unknown) => {
      assert.ok(isHookgateError(err, 'SANDBOX_ESCAPE'));
      assert.match(err.message, /contains a NUL byte/);
      return true;
    });
  });

  it('never reveals the host path of the root in an escape error', async () => {
    await assert.rejects(fx.call('fs', 'readFile', { path: '../x' }), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.equal(err.message.includes(fx.base), false);
      return true;
    });
  });
});
