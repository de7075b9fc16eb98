import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CanonicalArgs } from '../../../kernel/tools.js';
import { PolicyEngine } from '../../../policies/policy-engine.js';
import { MemoryDecisionLog, SHIPPED_PACKS, toolCall, toolResult } from '../../policies/support/policy-fixtures.js';
import { createSandboxFixture, type SandboxFixture } from './sandbox-fixture.js';

const ENV_TEXT = 'DATABASE_PASSWORD=hunter2-env-marker\n';
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC-key-marker\n-----END PRIVATE KEY-----\n';

/** The spellings issue 9 (item 7) found passing sandbox-secrets while the sandbox reads the file. */
const ENV_SPELLINGS = ['app/.env/', 'app/.env/.', 'app//.env//', './app/./.env', 'app/x/../.env'];

describe('tools-builtin canonicalArgs: the path as the sandbox resolves it', () => {
  let fx: SandboxFixture;

  beforeEach(async () => {
    fx = await createSandboxFixture();
    await mkdir(path.join(fx.root, 'app', 'x'), { recursive: true });
    await writeFile(path.join(fx.root, 'app', '.env'), ENV_TEXT);
    await writeFile(path.join(fx.root, 'server.pem'), PEM);
    await writeFile(path.join(fx.outside, 'secret.txt'), 'outside');
  });
  afterEach(() => fx.cleanup());

  const canonical = (apiName: string, args: Record<string, unknown>) => fx.source.canonicalArgs({ identifier: 'fs', apiName, args });

  for (const spelling of ENV_SPELLINGS) {
    it(`${JSON.stringify(spelling)} is app/.env, and readFile really reads that file`, async () => {
      assert.deepEqual(await canonical('readFile', { path: spelling }), {
        path: { kind: 'path', raw: spelling, path: 'app/.env', absolute: path.join(fx.root, 'app', '.env') },
      });
      // The bypass is real: the sandbox reads the secret under this spelling.
      assert.equal((await fx.call('fs', 'readFile', { path: spelling })).content, ENV_TEXT);
    });
  }

  it('server.pem/ is server.pem, and readFile reads it', async () => {
    assert.equal((await canonical('readFile', { path: 'server.pem/' })).path?.path, 'server.pem');
    assert.equal((await fx.call('fs', 'readFile', { path: 'server.pem/' })).content, PEM);
  });

  it('an absolute path inside the sandbox is given relative to the root', async () => {
    const abs = path.join(fx.root, 'app', '.env');
    assert.equal((await canonical('readFile', { path: abs })).path?.path, 'app/.env');
  });

  it('a symlink is resolved to what it points to (notes.txt -> app/.env)', async () => {
    await symlink(path.join('app', '.env'), path.join(fx.root, 'notes.txt'));
    await symlink('app', path.join(fx.root, 'linked-dir'));
    assert.equal((await canonical('readFile', { path: 'notes.txt' })).path?.path, 'app/.env');
    assert.equal((await canonical('writeFile', { path: 'notes.txt', content: 'x' })).path?.path, 'app/.env');
    assert.equal((await canonical('stat', { path: 'notes.txt' })).path?.path, 'app/.env');
    assert.equal((await canonical('readFile', { path: 'linked-dir/.env' })).path?.path, 'app/.env');
  });

  it('deletePath names the link itself (what it deletes), through resolved parent folders', async () => {
    await symlink(path.join('app', '.env'), path.join(fx.root, 'notes.txt'));
    await symlink('app', path.join(fx.root, 'linked-dir'));
    assert.equal((await canonical('deletePath', { path: 'notes.txt' })).path?.path, 'notes.txt');
    assert.equal((await canonical('deletePath', { path: 'linked-dir/.env' })).path?.path, 'app/.env');
  });

  it('a file that does not exist yet is normalized against its existing parent', async () => {
    assert.equal((await canonical('writeFile', { path: 'app//new/./file.txt/', content: '' })).path?.path, 'app/new/file.txt');
  });

  it('listDir without a path (or with an empty one) is the root, as the tool uses it', async () => {
    assert.deepEqual(await canonical('listDir', {}), { path: { kind: 'path', raw: undefined, path: '.', absolute: fx.root } });
    assert.equal((await canonical('listDir', { path: '' })).path?.path, '.');
  });

  it('a path outside the sandbox (lexically or through a symlink) gets only its raw value', async () => {
    await symlink(fx.outside, path.join(fx.root, 'escape'));
    assert.deepEqual(await canonical('readFile', { path: '../outside/secret.txt' }), { path: { kind: 'path', raw: '../outside/secret.txt' } });
    assert.deepEqual(await canonical('readFile', { path: 'escape/secret.txt' }), { path: { kind: 'path', raw: 'escape/secret.txt' } });
    assert.deepEqual(await canonical('readFile', { path: '/etc/passwd' }), { path: { kind: 'path', raw: '/etc/passwd' } });
  });

  it('a non-string path is given back raw, and tools without paths have no canonical arguments', async () => {
    assert.deepEqual(await canonical('readFile', { path: 5 }), { path: { kind: 'path', raw: 5 } });
    assert.deepEqual(await fx.source.canonicalArgs({ identifier: 'time', apiName: 'now', args: {} }), {});
    assert.deepEqual(await fx.source.canonicalArgs({ identifier: 'fs', apiName: 'nope', args: { path: 'a' } }), {});
  });

  describe('with the shipped packs in the real policy engine', () => {
    let engine: PolicyEngine;
    before(async () => {
      engine = new PolicyEngine({ paths: [SHIPPED_PACKS], store: new MemoryDecisionLog(), maxWorkers: 1 });
      await engine.start();
    });
    after(() => engine.stop());

    const decide = async (apiName: string, args: Record<string, unknown>) => {
      const c: CanonicalArgs = await canonical(apiName, args);
      return engine.evaluateToolCall({ ...toolCall('fs', apiName, args), canonical: c });
    };

    for (const spelling of [...ENV_SPELLINGS, 'server.pem/']) {
      it(`denies fs/readFile ${JSON.stringify(spelling)} (sandbox-secrets)`, async () => {
        const d = await decide('readFile', { path: spelling });
        assert.equal(d.effect, 'deny');
        assert.deepEqual(d.policyIds, ['secrets.deny-secret-paths']);
      });
    }

    it('denies a symlink to .env that the raw spelling does not reveal (notes.txt)', async () => {
      await symlink(path.join('app', '.env'), path.join(fx.root, 'notes.txt'));
      // Without the canonical form the raw name alone passes: the source's resolution is what denies.
      assert.equal((await engine.evaluateToolCall(toolCall('fs', 'readFile', { path: 'notes.txt' }))).effect, 'allow');
      const d = await decide('readFile', { path: 'notes.txt' });
      assert.equal(d.effect, 'deny');
      assert.deepEqual(d.policyIds, ['secrets.deny-secret-paths']);
    });

    it('allows ordinary files, however spelled', async () => {
      await writeFile(path.join(fx.root, 'app', 'notes.txt'), 'n');
      assert.equal((await decide('readFile', { path: 'app//notes.txt/' })).effect, 'allow');
      assert.equal((await decide('listDir', {})).effect, 'allow');
    });

    describe('redaction of encoded reads (item 8)', () => {
      const readResult = async (file: string, encoding: string) => {
        const args = { path: file, encoding };
        const out = await fx.call('fs', 'readFile', args);
        return engine.evaluateToolResult(toolResult(toolCall('fs', 'readFile', args), out));
      };

      for (const encoding of ['base64', 'hex'] as const) {
        it(`a PEM key read as ${encoding} comes back as the ${encoding} of the redacted text`, async () => {
          const d = await readResult('server.pem', encoding);
          assert.equal(d.effect, 'allow');
          assert.ok(d.redactedResult, 'the result was redacted');
          const text = Buffer.from(d.redactedResult.content, encoding).toString('utf8');
          assert.equal(text, '[REDACTED PRIVATE KEY]\n');
          assert.doesNotMatch(text, /key-marker/);
          assert.deepEqual(d.redactedResult.data, { path: 'server.pem', size: PEM.length, bytesRead: PEM.length, truncated: false, encoding });
        });
      }

      it('a PEM key inside a binary (not UTF-8) file read as latin1 is redacted byte for byte', async () => {
        const bytes = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x80]), Buffer.from(PEM), Buffer.from([0xc3, 0x28])]);
        await writeFile(path.join(fx.root, 'blob.bin'), bytes);
        const d = await readResult('blob.bin', 'latin1');
        assert.ok(d.redactedResult);
        const back = Buffer.from(d.redactedResult.content, 'latin1');
        assert.deepEqual(back, Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x80]), Buffer.from('[REDACTED PRIVATE KEY]\n'), Buffer.from([0xc3, 0x28])]));
      });

      it('a PEM key inside a binary file read as base64 is redacted, the other bytes kept', async () => {
        const bytes = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff]), Buffer.from(PEM)]);
        await writeFile(path.join(fx.root, 'image.png'), bytes);
        const d = await readResult('image.png', 'base64');
        assert.ok(d.redactedResult);
        assert.deepEqual(Buffer.from(d.redactedResult.content, 'base64'), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff]), Buffer.from('[REDACTED PRIVATE KEY]\n')]));
      });

      it('a truncated base64 read is redacted and keeps its truncation note', async () => {
        const small = await createSandboxFixture({ readLimitBytes: PEM.length });
        try {
          await writeFile(path.join(small.root, 'big.pem'), PEM + 'x'.repeat(100));
          const args = { path: 'big.pem', encoding: 'base64' };
          const out = await small.call('fs', 'readFile', args);
          assert.match(out.content, /\n\n\[truncated: /);
          const d = await engine.evaluateToolResult(toolResult(toolCall('fs', 'readFile', args), out));
          assert.ok(d.redactedResult);
          const [body, note] = d.redactedResult.content.split('\n\n');
          assert.equal(Buffer.from(body!, 'base64').toString('utf8'), '[REDACTED PRIVATE KEY]\n');
          assert.equal(note, `[truncated: the file has ${PEM.length + 100} bytes; only the first ${PEM.length} are shown]`);
        } finally {
          await small.cleanup();
        }
      });

      it('an ordinary file read as base64 is left exactly as read (allow, no rewrite)', async () => {
        await writeFile(path.join(fx.root, 'plain.txt'), 'just text, no secrets');
        const d = await readResult('plain.txt', 'base64');
        assert.equal(d.effect, 'allow');
        assert.equal(d.redactedResult, undefined);
      });
    });
  });
});
