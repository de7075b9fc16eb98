import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createLogger, type LogRecord } from '../../kernel/logger.js';
import { engineWithPack, toolCall } from './support/policy-fixtures.js';

const DENY_READS = `policies: [ { id: no-reads, match: '^fs/read$', effect: deny } ]`;
const DENY_WRITES = `policies: [ { id: no-writes, match: '^fs/write$', effect: deny } ]`;

describe('policy hot reload', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('a good edit is checked and swapped in', async () => {
    const t = await engineWithPack(DENY_READS);
    close = t.close;
    await writeFile(path.join(t.dir, 'pack.yaml'), DENY_WRITES);
    const result = await t.engine.reload();
    assert.deepEqual(result, { ok: true, changed: true, errors: [] });
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'read'))).effect, 'allow');
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'write'))).effect, 'deny');
  });

  it('reloading unchanged packs keeps the same set', async () => {
    const t = await engineWithPack(DENY_READS);
    close = t.close;
    const before = t.engine.policySet;
    assert.deepEqual(await t.engine.reload(), { ok: true, changed: false, errors: [] });
    assert.equal(t.engine.policySet, before);
  });

  it('a broken edit keeps the last good set and reports why', async () => {
    const lines: LogRecord[] = [];
    const logger = createLogger({ level: 'warn', sink: (_l, r) => lines.push(r) });
    const t = await engineWithPack(DENY_READS, { logger });
    close = t.close;
    await writeFile(path.join(t.dir, 'pack.yaml'), `policies: [ { id: no-reads, match: '(?<=x)read', effect: deny } ]`);
    const result = await t.engine.reload();
    assert.equal(result.ok, false);
    assert.equal(result.changed, false);
    assert.equal(result.errors[0]!.policyId, 'no-reads');
    assert.equal(result.errors[0]!.field, 'match');
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'read'))).effect, 'deny', 'old set still enforced');
    assert.ok(lines.some((l) => l.msg.includes('keeping the last good policy set')));
  });

  it('in-flight decisions finish on the set they started with', async () => {
    const slow = `export default { id: 'slow-deny', events: ['beforeToolCall'], async evaluate() {
      await new Promise((r) => setTimeout(r, 300)); return { effect: 'deny', reason: 'old set' }; } };`;
    const t = await engineWithPack(`policies: [ { module: ./slow.mjs } ]`, { deadlineMs: 3000 }, { 'slow.mjs': slow });
    close = t.close;
    const inFlight = t.engine.evaluateToolCall(toolCall('fs', 'read'));
    await new Promise((r) => setTimeout(r, 50));
    await writeFile(path.join(t.dir, 'pack.yaml'), 'policies: []');
    assert.equal((await t.engine.reload()).changed, true);
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'read'))).effect, 'allow', 'new decisions use the new set');
    assert.deepEqual(await inFlight, { effect: 'deny', reason: 'old set', policyIds: ['slow-deny'] });
  });

  it('an edited code policy module is reloaded in the workers', async () => {
    const mod = (effect: string) => `export default { id: 'code.flip', events: ['beforeToolCall'], evaluate() { return { effect: '${effect}' }; } };`;
    const t = await engineWithPack(`policies: [ { module: ./flip.mjs } ]`, {}, { 'flip.mjs': mod('deny') });
    close = t.close;
    assert.equal((await t.engine.evaluateToolCall(toolCall('a', 'b'))).effect, 'deny');
    await writeFile(path.join(t.dir, 'flip.mjs'), mod('allow'));
    assert.equal((await t.engine.reload()).changed, true);
    assert.equal((await t.engine.evaluateToolCall(toolCall('a', 'b'))).effect, 'allow');
  });

  it('with hotReload on, a changed file is picked up without calling reload', async () => {
    const t = await engineWithPack(DENY_READS, { hotReload: true });
    close = t.close;
    const before = t.engine.policySet;
    await writeFile(path.join(t.dir, 'pack.yaml'), DENY_WRITES);
    const deadline = Date.now() + 5000;
    while (t.engine.policySet === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'write'))).effect, 'deny');
  });
});
