import assert from 'node:assert/strict';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { isHookgateError } from '../../../kernel/errors.js';
import { createSandboxFixture, toolContext, type SandboxFixture } from './sandbox-fixture.js';

function failsWith(code: 'TOOL_ARGS_INVALID' | 'TOOL_TARGET_INVALID' | 'TOOL_NOT_FOUND', message: string | RegExp) {
  return (err: unknown) => {
    assert.ok(isHookgateError(err, code), `expected ${code}, got ${String(err)}`);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  };
}

describe('tools-builtin fs tools', () => {
  let fx: SandboxFixture;

  beforeEach(async () => {
    fx = await createSandboxFixture();
  });
  afterEach(() => fx.cleanup());

  describe('list', () => {
    it('offers fs/readFile, fs/writeFile, fs/listDir, fs/stat, fs/deletePath and time/now from the builtin source', () => {
      const names = fx.source.list().map((t) => `${t.identifier}/${t.apiName}`);
      assert.deepEqual(names, ['fs/readFile', 'fs/writeFile', 'fs/listDir', 'fs/stat', 'fs/deletePath', 'time/now']);
      assert.ok(fx.source.list().every((t) => t.toolSource === 'builtin' && t.description.length > 20));
    });

    it('describes arguments as JSON Schema objects with their required names', () => {
      const write = fx.source.list().find((t) => t.apiName === 'writeFile');
      assert.equal(write?.parameters.type, 'object');
      assert.deepEqual(write?.parameters.required, ['path', 'content']);
      assert.equal(write?.parameters.additionalProperties, false);
    });
  });

  describe('readFile and writeFile', () => {
    it('reads back what was written and reports the bytes written', async () => {
      const written = await fx.call('fs', 'writeFile', { path: 'hello.txt', content: 'héllo' });
      assert.equal(written.content, 'wrote 6 bytes to "hello.txt"');
      assert.deepEqual(written.data, { path: 'hello.txt', bytes: 6 });
      assert.equal((await fx.call('fs', 'readFile', { path: 'hello.txt' })).content, 'héllo');
    });

    it('writes the file on disk inside the root', async () => {
      await fx.call('fs', 'writeFile', { path: 'on-disk.txt', content: 'disk' });
      assert.equal(await readFile(path.join(fx.root, 'on-disk.txt'), 'utf8'), 'disk');
    });

    it('creates missing parent folders inside the sandbox', async () => {
      await fx.call('fs', 'writeFile', { path: 'a/b/c.txt', content: 'deep' });
      assert.equal(await readFile(path.join(fx.root, 'a', 'b', 'c.txt'), 'utf8'), 'deep');
    });

    it('replaces an existing file', async () => {
      await fx.call('fs', 'writeFile', { path: 'f.txt', content: 'a long first version' });
      await fx.call('fs', 'writeFile', { path: 'f.txt', content: 'short' });
      assert.equal((await fx.call('fs', 'readFile', { path: 'f.txt' })).content, 'short');
    });

    it('writes an empty file', async () => {
      const written = await fx.call('fs', 'writeFile', { path: 'empty.txt', content: '' });
      assert.deepEqual(written.data, { path: 'empty.txt', bytes: 0 });
      assert.equal((await fx.call('fs', 'readFile', { path: 'empty.txt' })).content, '');
    });

    it('round-trips binary content through base64', async () => {
      const bytes = Buffer.from([0, 1, 2, 250, 255]);
      await fx.call('fs', 'writeFile', { path: 'bin.dat', content: bytes.toString('base64'), encoding: 'base64' });
      assert.deepEqual(await readFile(path.join(fx.root, 'bin.dat')), bytes);
      assert.equal((await fx.call('fs', 'readFile', { path: 'bin.dat', encoding: 'hex' })).content, '000102faff');
    });

    it('truncates a file larger than 1 MiB and says so', async () => {
      const size = 1024 * 1024 + 10;
      await writeFile(path.join(fx.root, 'big.txt'), 'x'.repeat(size));
      const result = await fx.call('fs', 'readFile', { path: 'big.txt' });
      assert.ok(result.content.startsWith('x'.repeat(1024 * 1024) + '\n\n[truncated:'));
      assert.match(result.content, /the file has 1048586 bytes; only the first 1048576 are shown/);
      assert.deepEqual(result.data, { path: 'big.txt', size, bytesRead: 1024 * 1024, truncated: true, encoding: 'utf8' });
    });

    it('does not mark a file of exactly the limit as truncated', async () => {
      const small = await createSandboxFixture({ readLimitBytes: 4 });
      try {
        await writeFile(path.join(small.root, 'four.txt'), 'abcd');
        const result = await small.call('fs', 'readFile', { path: 'four.txt' });
        assert.equal(result.content, 'abcd');
        assert.equal((result.data as { truncated: boolean }).truncated, false);
      } finally {
        await small.cleanup();
      }
    });

    it('gives a clear not-found error for a missing file', async () => {
      await assert.rejects(fx.call('fs', 'readFile', { path: 'nope.txt' }), (err: unknown) => {
        assert.ok(isHookgateError(err, 'TOOL_TARGET_INVALID'));
        assert.equal(err.message, 'path "nope.txt" does not exist');
        assert.equal(err.details.reason, 'not_found');
        return true;
      });
    });

    it('refuses to read a directory and points to fs/listDir', async () => {
      await mkdir(path.join(fx.root, 'dir'));
      await assert.rejects(fx.call('fs', 'readFile', { path: 'dir' }), failsWith('TOOL_TARGET_INVALID', 'path "dir" is a directory (use fs/listDir)'));
    });

    it('refuses to read a FIFO instead of hanging on it', async function () {
      try {
        execFileSync('mkfifo', [path.join(fx.root, 'pipe')]);
      } catch {
        this.skip();
      }
      await assert.rejects(fx.call('fs', 'readFile', { path: 'pipe' }), failsWith('TOOL_TARGET_INVALID', 'path "pipe" is a FIFO (named pipe), not a regular file'));
    });

    it('refuses to write over a directory', async () => {
      await mkdir(path.join(fx.root, 'dir'));
      await assert.rejects(fx.call('fs', 'writeFile', { path: 'dir', content: 'x' }), failsWith('TOOL_TARGET_INVALID', 'path "dir" is a directory'));
    });

    it('refuses to write where a parent is a file', async () => {
      await writeFile(path.join(fx.root, 'file.txt'), 'x');
      await assert.rejects(fx.call('fs', 'writeFile', { path: 'file.txt/child.txt', content: 'x' }), failsWith('TOOL_TARGET_INVALID', 'path "file.txt/child.txt" has a parent that is a file, not a directory'));
    });
  });

  describe('listDir', () => {
    it('lists entries sorted by name with their types', async () => {
      await writeFile(path.join(fx.root, 'b.txt'), 'b');
      await mkdir(path.join(fx.root, 'a-dir'));
      await symlink('b.txt', path.join(fx.root, 'c-link'));
      const result = await fx.call('fs', 'listDir', { path: '.' });
      const expected = {
        path: '.',
        entries: [
          { name: 'a-dir', type: 'dir' },
          { name: 'b.txt', type: 'file' },
          { name: 'c-link', type: 'symlink' },
        ],
      };
      assert.deepEqual(result.data, expected);
      assert.deepEqual(JSON.parse(result.content), expected);
    });

    it('lists the sandbox root when no path is given', async () => {
      await writeFile(path.join(fx.root, 'only.txt'), 'x');
      const result = await fx.call('fs', 'listDir', {});
      assert.deepEqual(result.data, { path: '.', entries: [{ name: 'only.txt', type: 'file' }] });
    });

    it('lists a subfolder', async () => {
      await fx.call('fs', 'writeFile', { path: 'sub/x.txt', content: 'x' });
      const result = await fx.call('fs', 'listDir', { path: 'sub' });
      assert.deepEqual(result.data, { path: 'sub', entries: [{ name: 'x.txt', type: 'file' }] });
    });

    it('refuses to list a file and points to fs/readFile', async () => {
      await writeFile(path.join(fx.root, 'f.txt'), 'x');
      await assert.rejects(fx.call('fs', 'listDir', { path: 'f.txt' }), failsWith('TOOL_TARGET_INVALID', 'path "f.txt" is not a directory (use fs/readFile)'));
    });

    it('gives a clear not-found error for a missing folder', async () => {
      await assert.rejects(fx.call('fs', 'listDir', { path: 'missing' }), failsWith('TOOL_TARGET_INVALID', 'path "missing" does not exist'));
    });
  });

  describe('stat', () => {
    it('reports type, size and modification time of a file', async () => {
      await fx.call('fs', 'writeFile', { path: 's.txt', content: '12345' });
      const data = (await fx.call('fs', 'stat', { path: 's.txt' })).data as { path: string; type: string; size: number; modifiedAt: string };
      assert.equal(data.path, 's.txt');
      assert.equal(data.type, 'file');
      assert.equal(data.size, 5);
      assert.ok(!Number.isNaN(Date.parse(data.modifiedAt)));
    });

    it('reports a symlink that stays inside as a symlink', async () => {
      await writeFile(path.join(fx.root, 't.txt'), 'abc');
      await symlink('t.txt', path.join(fx.root, 'l.txt'));
      const data = (await fx.call('fs', 'stat', { path: 'l.txt' })).data as { type: string; size: number };
      assert.equal(data.type, 'symlink');
      assert.equal(data.size, 3);
    });
  });

  describe('deletePath', () => {
    it('deletes a file', async () => {
      await fx.call('fs', 'writeFile', { path: 'gone.txt', content: 'x' });
      const result = await fx.call('fs', 'deletePath', { path: 'gone.txt' });
      assert.equal(result.content, 'deleted file "gone.txt"');
      assert.equal(existsSync(path.join(fx.root, 'gone.txt')), false);
    });

    it('refuses a non-empty folder unless recursive is true', async () => {
      await fx.call('fs', 'writeFile', { path: 'd/x.txt', content: 'x' });
      await assert.rejects(fx.call('fs', 'deletePath', { path: 'd' }), failsWith('TOOL_TARGET_INVALID', /not empty \(pass recursive: true/));
      await fx.call('fs', 'deletePath', { path: 'd', recursive: true });
      assert.equal(existsSync(path.join(fx.root, 'd')), false);
    });

    it('refuses to delete the sandbox root', async () => {
      await assert.rejects(fx.call('fs', 'deletePath', { path: '.', recursive: true }), failsWith('TOOL_TARGET_INVALID', /sandbox root folder and cannot be deleted/));
      assert.equal(existsSync(fx.root), true);
    });

    it('deletes a symlink that points outside without touching its target', async () => {
      await writeFile(path.join(fx.outside, 'keep.txt'), 'keep');
      await symlink(path.join(fx.outside, 'keep.txt'), path.join(fx.root, 'out-link'));
      await fx.call('fs', 'deletePath', { path: 'out-link' });
      assert.equal(existsSync(path.join(fx.root, 'out-link')), false);
      assert.equal(await readFile(path.join(fx.outside, 'keep.txt'), 'utf8'), 'keep');
    });

    it('refuses to delete through a symlinked folder that points outside', async () => {
      await writeFile(path.join(fx.outside, 'keep.txt'), 'keep');
      await symlink(fx.outside, path.join(fx.root, 'out-dir'));
      await assert.rejects(fx.call('fs', 'deletePath', { path: 'out-dir/keep.txt' }), (err: unknown) => isHookgateError(err, 'SANDBOX_ESCAPE'));
      assert.equal(existsSync(path.join(fx.outside, 'keep.txt')), true);
    });
  });

  describe('bad arguments', () => {
    it('names a missing path argument', async () => {
      await assert.rejects(fx.call('fs', 'readFile', {}), failsWith('TOOL_ARGS_INVALID', 'fs/readFile: argument "path" is required (a string)'));
    });

    it('names a path of the wrong type', async () => {
      await assert.rejects(fx.call('fs', 'readFile', { path: 42 }), failsWith('TOOL_ARGS_INVALID', 'fs/readFile: argument "path" must be a string, got number'));
    });

    it('refuses an empty path', async () => {
      await assert.rejects(fx.call('fs', 'writeFile', { path: '', content: 'x' }), failsWith('TOOL_ARGS_INVALID', 'fs/writeFile: argument "path" must not be empty'));
    });

    it('names missing content', async () => {
      await assert.rejects(fx.call('fs', 'writeFile', { path: 'a.txt' }), failsWith('TOOL_ARGS_INVALID', 'fs/writeFile: argument "content" is required (a string)'));
    });

    it('names an unknown argument and lists the expected ones', async () => {
      await assert.rejects(
        fx.call('fs', 'readFile', { file: 'a.txt' }),
        failsWith('TOOL_ARGS_INVALID', 'fs/readFile: unknown argument "file"; expected "path", "encoding"'),
      );
    });

    it('names an encoding that is not offered', async () => {
      await assert.rejects(
        fx.call('fs', 'readFile', { path: 'a.txt', encoding: 'ebcdic' }),
        failsWith('TOOL_ARGS_INVALID', /argument "encoding" must be one of "utf8", "base64", "hex", "latin1", got "ebcdic"/),
      );
    });

    it('names a recursive flag of the wrong type', async () => {
      await assert.rejects(fx.call('fs', 'deletePath', { path: 'a', recursive: 'yes' }), failsWith('TOOL_ARGS_INVALID', /argument "recursive" must be a boolean, got string/));
    });

    it('marks argument errors as invalid_args with the argument name', async () => {
      await assert.rejects(fx.call('fs', 'readFile', { path: 1 }), (err: unknown) => {
        assert.ok(isHookgateError(err));
        assert.deepEqual(err.details, { reason: 'invalid_args', tool: 'fs/readFile', argument: 'path' });
        return true;
      });
    });
  });

  describe('execution', () => {
    it('refuses a tool it does not have with TOOL_NOT_FOUND', async () => {
      await assert.rejects(fx.call('fs', 'chmod', { path: 'a' }), failsWith('TOOL_NOT_FOUND', 'the builtin tool source has no tool "fs/chmod"'));
    });

    it('does not start a call whose signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(fx.source.execute({ identifier: 'fs', apiName: 'writeFile', args: { path: 'late.txt', content: 'x' } }, toolContext(controller.signal)));
      assert.equal(existsSync(path.join(fx.root, 'late.txt')), false);
    });
  });
});

describe('tools-builtin time/now', () => {
  it('returns the current time as an ISO string', async () => {
    const fx = await createSandboxFixture({ now: () => new Date('2025-03-04T05:06:07.089Z') });
    try {
      const result = await fx.call('time', 'now', {});
      assert.equal(result.content, '2025-03-04T05:06:07.089Z');
      assert.deepEqual(result.data, { iso: '2025-03-04T05:06:07.089Z', epochMs: Date.parse('2025-03-04T05:06:07.089Z') });
    } finally {
      await fx.cleanup();
    }
  });

  it('refuses arguments it does not take', async () => {
    const fx = await createSandboxFixture();
    try {
      await assert.rejects(fx.call('time', 'now', { zone: 'UTC' }), failsWith('TOOL_ARGS_INVALID', 'time/now: unknown argument "zone"; it takes no arguments'));
    } finally {
      await fx.cleanup();
    }
  });
});
