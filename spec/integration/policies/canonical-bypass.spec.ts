import assert from 'node:assert/strict';
import { mkdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { SHIPPED_PACKS } from '../../policies/support/policy-fixtures.js';
import { fsTurn, PolicyWorld, toolMessagesSeenByModel } from './harness.js';

const ENV_MARKER = 'hunter2-env-marker';
const KEY_MARKER = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC';
const PEM = `-----BEGIN PRIVATE KEY-----\n${KEY_MARKER}\n-----END PRIVATE KEY-----\n`;

/** Issue 9, items 7 and 8, through a running kernel: the gate hands the builtin source's canonical paths to the shipped packs. */
describe('integration: shipped packs decide on the path the sandbox really reads', function () {
  this.timeout(20_000);
  let world: PolicyWorld;
  let operationId: string;
  const spellings = ['app/.env/', 'app/.env/.', 'app//.env//', 'server.pem/', 'notes.txt'];

  before(async () => {
    world = await PolicyWorld.create({ 'sandbox-secrets.yaml': await readFile(path.join(SHIPPED_PACKS, 'sandbox-secrets.yaml'), 'utf8') });
    await world.boot();
    await mkdir(path.join(world.sandbox, 'app'), { recursive: true });
    await world.writeSandboxFile(path.join('app', '.env'), `PASSWORD=${ENV_MARKER}\n`);
    await world.writeSandboxFile('server.pem', PEM);
    await world.writeSandboxFile('readme.txt', 'hello');
    // A symlink whose own name says nothing: only the resolved path reveals the secret.
    await symlink(path.join('app', '.env'), path.join(world.sandbox, 'notes.txt'));
    world.defineAgent('reader', [
      fsTurn(...spellings.map((p): [string, Record<string, unknown>] => ['readFile', { path: p }]), ['readFile', { path: 'readme.txt//' }]),
      fsTurn(['readFile', { path: 'key.b64', encoding: 'base64' }]),
      { text: 'done' },
    ]);
    // The key under an innocent name, read as base64 (item 8): allowed, but redacted.
    await world.writeSandboxFile('key.b64', PEM);
    ({ operationId } = await world.run('reader'));
  });
  after(() => world.cleanup());

  it('every bypass spelling is denied by secrets.deny-secret-paths before the tool runs', async () => {
    const messages = await world.toolMessages(operationId);
    const byCall = messages.slice(0, spellings.length);
    assert.equal(byCall.length, spellings.length);
    for (const m of byCall) {
      assert.equal(m.toolResult?.success, false, m.content);
      assert.match(m.content, /access to secret files/);
    }
    const denies = (await world.decisions({ operationId, decision: 'deny' })).filter((r) => r.event === 'beforeToolCall');
    assert.equal(denies.length, spellings.length);
    assert.ok(denies.every((r) => r.policies.some((p) => p.id === 'secrets.deny-secret-paths' && p.effect === 'deny')));
  });

  it('an ordinary file with a spelling of the same kind is read', async () => {
    const messages = await world.toolMessages(operationId);
    assert.equal(messages[spellings.length]?.content, 'hello');
  });

  it('a key read as base64 reaches the model only as the base64 of the redacted text', async () => {
    const messages = await world.toolMessages(operationId);
    const b64 = messages.at(-1)!;
    assert.equal(b64.toolResult?.success, true);
    assert.equal(Buffer.from(b64.content, 'base64').toString('utf8'), '[REDACTED PRIVATE KEY]\n');
  });

  it('no secret reached the model or the store, in any encoding', async () => {
    const seen = [...toolMessagesSeenByModel(world.model).map((m) => m.content), ...(await world.toolMessages(operationId)).map((m) => JSON.stringify(m))];
    assert.ok(seen.length > 0);
    for (const text of seen) {
      for (const view of [text, Buffer.from(text, 'base64').toString('latin1')]) {
        assert.ok(!view.includes(ENV_MARKER), 'the .env content leaked');
        assert.ok(!view.includes(KEY_MARKER), 'the key leaked');
      }
    }
  });
});
