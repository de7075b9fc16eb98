import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { link, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isHookgateError } from '../../../kernel/errors.js';
import { createSandboxFs } from '../../../kernel/sandbox-fs.js';
import { Sandbox } from '../../../kernel/tokens.js';
import { createKernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { LocalSandbox } from '../../../plugins/sandbox-local/local-sandbox.js';

function escape(err: unknown): boolean {
  assert.ok(isHookgateError(err, 'SANDBOX_ESCAPE'), `expected SANDBOX_ESCAPE, got ${String(err)}`);
  return true;
}

function code(expected: string) {
  return (err: unknown) => {
    assert.ok(isHookgateError(err, expected as never), `expected ${expected}, got ${String(err)}`);
    return true;
  };
}

/** A process that no longer runs (gone, or a zombie nobody reaped yet). */
async function processGone(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** document 001's `harness.sandbox` on this host: the file verbs, exec, cwd and resolvePath, confined like the fs tools. */
describe('sandbox-local: the local sandbox', function () {
  this.timeout(30_000);
  let base: string;
  let root: string;
  let outside: string;
  let sandbox: LocalSandbox;
  beforeEach(async () => {
    base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-sandbox-local-')));
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    await mkdir(root);
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret.txt'), 'outside secret');
    sandbox = new LocalSandbox(createSandboxFs(root), { execTimeoutMs: 5_000, maxOutputBytes: 1_000, maxReadBytes: 64 });
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  describe('verbs', () => {
    it('writeFile creates missing parents; readFile, readFileBuffer, readdir, stat and exists see it', async () => {
      await sandbox.writeFile('a/b/c.txt', 'hello');
      await sandbox.writeFile('a/bytes.bin', new Uint8Array([0, 1, 255]));
      assert.equal(await sandbox.readFile('a/b/c.txt'), 'hello');
      assert.deepEqual([...(await sandbox.readFileBuffer('a/bytes.bin'))], [0, 1, 255]);
      assert.deepEqual(await sandbox.readdir('a'), ['b', 'bytes.bin']);
      const st = await sandbox.stat('a/b/c.txt');
      assert.deepEqual([st.isFile, st.isDirectory, st.isSymbolicLink, st.size], [true, false, false, 5]);
      assert.ok(st.mtime instanceof Date);
      assert.equal((await sandbox.stat('a')).isDirectory, true);
      assert.equal(await sandbox.exists('a/b/c.txt'), true);
      assert.equal(await sandbox.exists('a/nope.txt'), false);
      assert.equal(await readFile(path.join(root, 'a/b/c.txt'), 'utf8'), 'hello');
    });

    it('mkdir (recursive, and plain refusing a missing parent), rm (files, folders with recursive, force on missing)', async () => {
      await sandbox.mkdir('x/y/z', { recursive: true });
      await sandbox.mkdir('x/y/z', { recursive: true });
      await assert.rejects(sandbox.mkdir('m/n'), code('TOOL_TARGET_INVALID'));
      await sandbox.writeFile('x/y/z/f.txt', '1');
      await assert.rejects(sandbox.rm('x'), code('TOOL_TARGET_INVALID'));
      await sandbox.rm('x', { recursive: true });
      assert.equal(await sandbox.exists('x'), false);
      await assert.rejects(sandbox.rm('gone.txt'), code('TOOL_TARGET_INVALID'));
      await sandbox.rm('gone.txt', { force: true });
      await assert.rejects(sandbox.rm('.', { recursive: true }), code('TOOL_TARGET_INVALID'));
      assert.ok(existsSync(root), 'the root itself is never deleted');
    });

    it('cwd is the sandbox folder; resolvePath resolves against it without touching the file system', async () => {
      assert.equal(sandbox.cwd, root);
      assert.equal(sandbox.resolvePath('a/../b.txt'), path.join(root, 'b.txt'));
      assert.equal(sandbox.resolvePath(path.join(root, 'c')), path.join(root, 'c'));
      assert.equal(existsSync(path.join(root, 'b.txt')), false);
    });

    it('readFile refuses a file larger than maxReadBytes instead of returning part of it', async () => {
      await writeFile(path.join(root, 'big.txt'), 'x'.repeat(65));
      await assert.rejects(sandbox.readFile('big.txt'), /65 bytes, more than the sandbox reads at once \(maxReadBytes 64\)/);
    });

    it('exec runs in the sandbox folder (or a folder inside it) with only the environment it is given', async () => {
      process.env.HOOKGATE_SPEC_HOST_SECRET = 'host-secret-value';
      try {
        await sandbox.mkdir('sub');
        const ran = await sandbox.exec('pwd; echo "$GREETING"; env', { env: { GREETING: 'hi' } });
        assert.equal(ran.exitCode, 0);
        const [pwd, greeting] = ran.stdout.split('\n');
        assert.equal(pwd, root);
        assert.equal(greeting, 'hi');
        assert.doesNotMatch(ran.stdout, /host-secret-value/);
        assert.equal((await sandbox.exec('pwd', { cwd: 'sub' })).stdout, `${path.join(root, 'sub')}\n`);
      } finally {
        delete process.env.HOOKGATE_SPEC_HOST_SECRET;
      }
    });

    it('exec reports the exit code and stderr; a command killed by a signal exits 128 + its number', async () => {
      const failed = await sandbox.exec('echo oops >&2; exit 3');
      assert.deepEqual([failed.exitCode, failed.stderr], [3, 'oops\n']);
      assert.equal((await sandbox.exec('kill -TERM $$')).exitCode, 128 + 15);
    });
  });

  describe('attacks', () => {
    it('".." and absolute paths outside the root are refused by every verb; nothing outside changes', async () => {
      for (const p of ['../outside/secret.txt', 'a/../../outside/secret.txt', path.join(outside, 'secret.txt'), '/etc/passwd']) {
        await assert.rejects(sandbox.readFile(p), escape);
        await assert.rejects(sandbox.readFileBuffer(p), escape);
        await assert.rejects(sandbox.writeFile(p, 'pwned'), escape);
        await assert.rejects(sandbox.stat(p), escape);
        await assert.rejects(sandbox.exists(p), escape, 'an escape is an error, not "does not exist"');
        await assert.rejects(sandbox.rm(p, { force: true }), escape);
        await assert.rejects(sandbox.mkdir(p, { recursive: true }), escape);
        assert.throws(() => sandbox.resolvePath(p), escape);
      }
      await assert.rejects(sandbox.readdir('..'), escape);
      await assert.rejects(sandbox.exec('pwd', { cwd: '..' }), escape);
      assert.equal(await readFile(path.join(outside, 'secret.txt'), 'utf8'), 'outside secret');
    });

    it('symlinks out of the root are refused (read, write, list, mkdir below, exec cwd); rm removes the link, never its target', async () => {
      await symlink(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
      await symlink(outside, path.join(root, 'linkdir'));
      await assert.rejects(sandbox.readFile('link.txt'), escape);
      await assert.rejects(sandbox.writeFile('link.txt', 'pwned'), escape);
      await assert.rejects(sandbox.writeFile('linkdir/new.txt', 'pwned'), escape);
      await assert.rejects(sandbox.readdir('linkdir'), escape);
      await assert.rejects(sandbox.mkdir('linkdir/deeper', { recursive: true }), escape);
      await assert.rejects(sandbox.exec('pwd', { cwd: 'linkdir' }), escape);
      await assert.rejects(sandbox.stat('link.txt'), escape);
      await sandbox.rm('link.txt');
      await sandbox.rm('linkdir');
      assert.equal(await readFile(path.join(outside, 'secret.txt'), 'utf8'), 'outside secret');
      assert.equal(existsSync(path.join(outside, 'new.txt')), false);
      assert.equal(existsSync(path.join(outside, 'deeper')), false);
    });

    it('a symlink inside the root is followed and reported as a link', async () => {
      await sandbox.writeFile('real/target.txt', 'inside');
      await symlink(path.join(root, 'real'), path.join(root, 'alias'));
      assert.equal(await sandbox.readFile('alias/target.txt'), 'inside');
      const st = await sandbox.stat('alias');
      assert.deepEqual([st.isSymbolicLink, st.isDirectory], [true, true]);
    });

    it('a hard link to a file outside is refused', async () => {
      await link(path.join(outside, 'secret.txt'), path.join(root, 'hard.txt'));
      await assert.rejects(sandbox.readFile('hard.txt'), escape);
      await assert.rejects(sandbox.writeFile('hard.txt', 'pwned'), escape);
      assert.equal(await readFile(path.join(outside, 'secret.txt'), 'utf8'), 'outside secret');
    });

    it('NUL bytes in paths, commands and env values are refused before anything runs', async () => {
      await assert.rejects(sandbox.readFile('a\u0000b'), escape);
      await assert.rejects(sandbox.writeFile('ok.txt\u0000../../x', 'x'), escape);
      assert.throws(() => sandbox.resolvePath('a\u0000'), escape);
      await assert.rejects(sandbox.exec('echo hi\u0000; touch pwned'), code('SANDBOX_ARGUMENT_INVALID'));
      await assert.rejects(sandbox.exec('echo', { env: { A: 'x\u0000y' } }), code('SANDBOX_ARGUMENT_INVALID'));
      await assert.rejects(sandbox.exec('echo', { env: { 'A=B': 'x' } }), code('SANDBOX_ARGUMENT_INVALID'));
      await assert.rejects(sandbox.exec('echo', { cwd: 'a\u0000' }), escape);
      assert.equal(existsSync(path.join(root, 'pwned')), false);
    });

    it('a huge output is bounded per stream (the rest drained and counted), and the command still completes', async () => {
      const ran = await sandbox.exec("head -c 5000000 /dev/zero | tr '\\0' a; head -c 3000 /dev/zero | tr '\\0' b >&2");
      assert.equal(ran.exitCode, 0);
      assert.ok(ran.stdout.startsWith('a'.repeat(1000) + '\n[output truncated: 4999000 more bytes dropped'), ran.stdout.slice(0, 1100));
      assert.ok(ran.stderr.startsWith('b'.repeat(1000) + '\n[output truncated: 2000 more bytes dropped'));
    });

    it('a command past its deadline is killed with everything it started, and exec rejects with SANDBOX_EXEC_TIMEOUT', async () => {
      await assert.rejects(sandbox.exec('sleep 30 & echo $! > bg.pid; wait', { timeoutMs: 300 }), (err: unknown) => {
        assert.ok(isHookgateError(err, 'SANDBOX_EXEC_TIMEOUT'), String(err));
        assert.match(err.message, /300 ms deadline/);
        return true;
      });
      const pid = Number((await readFile(path.join(root, 'bg.pid'), 'utf8')).trim());
      for (let i = 0; i < 100 && !(await processGone(pid)); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await processGone(pid), true, 'the background child of the shell was killed too');
    });

    it('a deadline settles even when a process that left the group (setsid) still holds the output pipes', async () => {
      const pidFile = path.join(root, 'escaped.pid');
      try {
        await assert.rejects(sandbox.exec('setsid sh -c \'echo $$ > escaped.pid; exec sleep 30\' & wait', { timeoutMs: 300 }), code('SANDBOX_EXEC_TIMEOUT'));
      } finally {
        const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
        if (pid > 0) process.kill(pid, 'SIGKILL'); // the escaped sleep, still running
      }
    });

    it('a timeoutMs above the sandbox maximum, zero or fractional is refused', async () => {
      for (const timeoutMs of [5_001, 0, 1.5, -1]) await assert.rejects(sandbox.exec('true', { timeoutMs }), code('SANDBOX_ARGUMENT_INVALID'));
    });

    it('an abort signal kills the command and rejects with its reason', async () => {
      const controller = new AbortController();
      const running = sandbox.exec('sleep 30', { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      await assert.rejects(running, (err: unknown) => err instanceof DOMException && err.name === 'AbortError');
      await assert.rejects(sandbox.exec('true', { signal: AbortSignal.abort() }), (err: unknown) => err instanceof DOMException && err.name === 'AbortError');
    });

    it('an empty command or content of the wrong type is refused', async () => {
      await assert.rejects(sandbox.exec('   '), code('SANDBOX_ARGUMENT_INVALID'));
      await assert.rejects(sandbox.writeFile('x.txt', 42 as unknown as string), code('SANDBOX_ARGUMENT_INVALID'));
    });
  });

  describe('the plugin', () => {
    it('binds the Sandbox token over sandbox.root with plugins.settings.sandbox-local, and refuses bad settings', async () => {
      const cwd = base;
      const config = loadConfig({ cwd, env: {} });
      const kernel = createKernel({ config: { ...config, sandbox: { root }, plugins: { ...config.plugins, settings: { 'sandbox-local': { maxOutputBytes: 4 } } } }, env: {} });
      await kernel.start();
      try {
        const bound = kernel.resolve(Sandbox);
        assert.equal(bound.cwd, root);
        assert.match((await bound.exec('echo 123456')).stdout, /^1234\n\[output truncated: 3 more bytes dropped/);
      } finally {
        await kernel.stop();
      }
      const bad = createKernel({ config: { ...config, sandbox: { root }, plugins: { ...config.plugins, settings: { 'sandbox-local': { execTimeoutMs: -1 } } } }, env: {} });
      await assert.rejects(bad.start(), /plugins\.settings\.sandbox-local\.execTimeoutMs/);
    });
  });
});
