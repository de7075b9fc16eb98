import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isHookgateError } from '../../../kernel/errors.js';
import { createSandboxFixture, type SandboxFixture } from './sandbox-fixture.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

function refusedAsHardLink(userPath: string, links = 2) {
  return (err: unknown) => {
    assert.ok(isHookgateError(err, 'SANDBOX_ESCAPE'), `expected SANDBOX_ESCAPE, got ${String(err)}`);
    assert.equal(err.message, `path ${JSON.stringify(userPath)} is a file with ${links} hard links (another name for it may lie outside the sandbox): refused`);
    return true;
  };
}

function refusedAsSpecial(userPath: string, kind: string) {
  return (err: unknown) => {
    assert.ok(isHookgateError(err, 'TOOL_TARGET_INVALID'), `expected TOOL_TARGET_INVALID, got ${String(err)}`);
    assert.equal(err.message, `path ${JSON.stringify(userPath)} is ${kind}, not a regular file`);
    return true;
  };
}

function hasMkfifo(): boolean {
  try {
    execFileSync('mkfifo', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('tools-builtin sandbox: hard links and special files', () => {
  let fx: SandboxFixture;
  let secret: string;

  beforeEach(async () => {
    fx = await createSandboxFixture();
    secret = path.join(fx.outside, 'secret.txt');
    await writeFile(secret, 'outside secret\n');
    fs.linkSync(secret, path.join(fx.root, 'link.txt'));
  });
  afterEach(() => fx.cleanup());

  it('fs/readFile refuses a hard link to a file outside the sandbox (and says nothing of its content)', async () => {
    await assert.rejects(fx.call('fs', 'readFile', { path: 'link.txt' }), (err: unknown) => {
      refusedAsHardLink('link.txt')(err);
      assert.doesNotMatch((err as Error).message, /outside secret/);
      return true;
    });
  });

  it('fs/readFile refuses it in every encoding and through an absolute path inside the root', async () => {
    for (const encoding of ['base64', 'hex', 'latin1']) {
      await assert.rejects(fx.call('fs', 'readFile', { path: 'link.txt', encoding }), refusedAsHardLink('link.txt'));
    }
    const abs = path.join(fx.root, 'link.txt');
    await assert.rejects(fx.call('fs', 'readFile', { path: abs }), refusedAsHardLink(abs));
  });

  it('fs/writeFile refuses a hard-linked target and leaves the outside file untouched (not even truncated)', async () => {
    await assert.rejects(fx.call('fs', 'writeFile', { path: 'link.txt', content: 'pwned' }), refusedAsHardLink('link.txt'));
    await assert.rejects(fx.call('fs', 'writeFile', { path: 'link.txt', content: 'cHduZWQ=', encoding: 'base64' }), refusedAsHardLink('link.txt'));
    assert.equal(await readFile(secret, 'utf8'), 'outside secret\n');
  });

  it('fs/writeFile refuses a hard link reached through a symlink inside the sandbox', async () => {
    fs.symlinkSync('link.txt', path.join(fx.root, 'alias.txt'));
    await assert.rejects(fx.call('fs', 'writeFile', { path: 'alias.txt', content: 'pwned' }), refusedAsHardLink('alias.txt'));
    assert.equal(await readFile(secret, 'utf8'), 'outside secret\n');
  });

  it('fs/stat refuses a hard link (its size and times would be those of the outside file)', async () => {
    await assert.rejects(fx.call('fs', 'stat', { path: 'link.txt' }), refusedAsHardLink('link.txt'));
  });

  it('counts every link: a file with three names is refused too, and one with both names inside the sandbox', async () => {
    fs.linkSync(secret, path.join(fx.outside, 'third.txt'));
    await assert.rejects(fx.call('fs', 'readFile', { path: 'link.txt' }), refusedAsHardLink('link.txt', 3));
    await writeFile(path.join(fx.root, 'a.txt'), 'a');
    fs.linkSync(path.join(fx.root, 'a.txt'), path.join(fx.root, 'b.txt'));
    await assert.rejects(fx.call('fs', 'readFile', { path: 'a.txt' }), refusedAsHardLink('a.txt'));
  });

  it('fs/deletePath removes the hard link itself and the outside file stays', async () => {
    const r = await fx.call('fs', 'deletePath', { path: 'link.txt' });
    assert.equal(r.content, 'deleted file "link.txt"');
    assert.equal(await readFile(secret, 'utf8'), 'outside secret\n');
    assert.equal((await stat(secret)).nlink, 1);
  });

  it('ordinary files still read, write and replace (one link)', async () => {
    await fx.call('fs', 'writeFile', { path: 'notes/n.txt', content: 'first version, long' });
    await fx.call('fs', 'writeFile', { path: 'notes/n.txt', content: 'second' });
    assert.equal((await fx.call('fs', 'readFile', { path: 'notes/n.txt' })).content, 'second');
    assert.equal(await readFile(path.join(fx.root, 'notes', 'n.txt'), 'utf8'), 'second', 'replaced, not overwritten in place past the new end');
  });

  it('refuses to read or write a FIFO, without hanging and without opening it for writing', async function () {
    if (!hasMkfifo()) this.skip();
    execFileSync('mkfifo', [path.join(fx.root, 'pipe')]);
    await assert.rejects(fx.call('fs', 'readFile', { path: 'pipe' }), refusedAsSpecial('pipe', 'a FIFO (named pipe)'));
    await assert.rejects(fx.call('fs', 'writeFile', { path: 'pipe', content: 'x' }), refusedAsSpecial('pipe', 'a FIFO (named pipe)'));
    assert.equal((await fx.call('fs', 'stat', { path: 'pipe' })).content.includes('"type":"other"'), true, 'stat still describes it');
  });

  it('refuses to read or write a Unix socket', async () => {
    const sock = path.join(fx.root, 's.sock');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      await assert.rejects(fx.call('fs', 'readFile', { path: 's.sock' }), refusedAsSpecial('s.sock', 'a socket'));
      await assert.rejects(fx.call('fs', 'writeFile', { path: 's.sock', content: 'x' }), refusedAsSpecial('s.sock', 'a socket'));
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('CLI: a hard link planted in the sandbox', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-links-cli-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('`hookgate run`: reading and overwriting it are tool errors the model sees; the outside file is unchanged', async () => {
    const sandbox = path.join(dir, '.hookgate', 'sandbox');
    await mkdir(sandbox, { recursive: true });
    await writeFile(path.join(dir, 'secret.env'), 'API_KEY=outside-value\n');
    fs.linkSync(path.join(dir, 'secret.env'), path.join(sandbox, 'notes.txt'));
    await writeFile(
      path.join(dir, 'agent.yaml'),
      [
        'id: linker',
        'model:',
        '  provider: scripted',
        '  turns:',
        '    - toolCalls: [ { identifier: fs, apiName: readFile, args: { path: notes.txt } } ]',
        '    - toolCalls: [ { identifier: fs, apiName: writeFile, args: { path: notes.txt, content: "API_KEY=attacker" } } ]',
        '    - text: done',
        'tools: [fs/*]',
      ].join('\n') + '\n',
    );
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'store: { driver: memory }\n');
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HOOKGATE_')));
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, 'run', 'agent.yaml'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const refusals = r.stdout.match(/path "notes\.txt" is a file with 2 hard links \(another name for it may lie outside the sandbox\): refused/g) ?? [];
    assert.equal(refusals.length, 2, r.stdout);
    assert.doesNotMatch(r.stdout, /outside-value/);
    assert.equal(await readFile(path.join(dir, 'secret.env'), 'utf8'), 'API_KEY=outside-value\n');
  });
});

describe('tools-builtin sandbox: roots built in code (no config loader)', () => {
  it('refuses a blank root and the file-system root with CONFIG_INVALID', async () => {
    const { createSandboxFs } = await import('../../../plugins/tools-builtin/sandbox-path.js');
    for (const [root, message] of [
      ['   ', 'sandbox.root must be a non-empty path'],
      ['/', 'sandbox.root "/" is the root of the file system'],
    ] as const) {
      assert.throws(() => createSandboxFs(root), (err: unknown) => {
        assert.ok(isHookgateError(err, 'CONFIG_INVALID'), String(err));
        assert.equal(err.message, message);
        return true;
      });
    }
  });
});
