import assert from 'node:assert/strict';
import { fsTurn, PolicyWorld } from './harness.js';

const PACK = `
name: log-pack
policies:
  - id: no-secret-writes
    match: '^fs/writeFile$'
    args: { path: '^secret' }
    effect: deny
    reason: secrets are read-only
  - id: reads-ok
    match: '^fs/readFile$'
    effect: allow
    reason: reads are fine
`;

const SECRET_CONTENT = 'hunter2-plaintext-marker';

/** The decision log as written by a running kernel (real SQLite store) and read through kernel.listDecisions. */
describe('integration: the policy decision log through the kernel', function () {
  this.timeout(20_000);
  let world: PolicyWorld;

  describe('after two runs', () => {
    let first: string;
    let second: string;
    before(async () => {
      world = await PolicyWorld.create({ 'log.yaml': PACK });
      await world.boot();
      await world.writeSandboxFile('in.txt', 'input');
      world.defineAgent('mixed', [
        fsTurn(['writeFile', { path: 'secret.txt', content: SECRET_CONTENT }], ['readFile', { path: 'in.txt' }], ['writeFile', { path: 'plain.txt', content: 'p' }]),
        { text: 'done' },
      ]);
      world.defineAgent('reader', [fsTurn(['readFile', { path: 'in.txt' }]), { text: 'done' }]);
      first = (await world.run('mixed')).operationId;
      second = (await world.run('reader')).operationId;
    });
    after(() => world.cleanup());

    it('every tool call is logged, allow included (before and after events)', async () => {
      const records = await world.decisions({ operationId: first });
      const summary = records.map((r) => `${r.event} ${r.apiName} ${r.decision}`).sort();
      // The denied write never ran, so it has no afterToolCall decision.
      assert.deepEqual(summary, [
        'afterToolCall readFile allow',
        'afterToolCall writeFile allow',
        'beforeToolCall readFile allow',
        'beforeToolCall writeFile allow',
        'beforeToolCall writeFile deny',
      ]);
    });

    it('the operationId filter returns only that operation, with its tool call ids', async () => {
      const records = await world.decisions({ operationId: second });
      assert.equal(records.length, 2);
      assert.ok(records.every((r) => r.operationId === second));
      const [tool] = await world.toolMessages(second);
      assert.ok(records.every((r) => r.toolCallId === tool?.toolCallId));
      assert.ok(records.every((r) => r.agentId === 'reader'));
    });

    it('the policyId filter returns the decisions that policy took part in, across operations', async () => {
      const records = await world.decisions({ policyId: 'reads-ok' });
      assert.equal(records.length, 2);
      assert.deepEqual(new Set(records.map((r) => r.operationId)), new Set([first, second]));
      assert.ok(records.every((r) => r.event === 'beforeToolCall' && r.apiName === 'readFile' && r.reason === 'reads are fine'));
    });

    it('the decision filter returns only denies, with the policy, its effect and the reason', async () => {
      const records = await world.decisions({ decision: 'deny' });
      assert.equal(records.length, 1);
      assert.equal(records[0]!.operationId, first);
      assert.equal(records[0]!.reason, 'secrets are read-only');
      assert.equal(records[0]!.defaulted, false);
      assert.deepEqual(records[0]!.policies, [{ id: 'no-secret-writes', effect: 'deny', mode: 'enforce', reason: 'secrets are read-only' }]);
    });

    it('filters combine', async () => {
      assert.equal((await world.decisions({ operationId: second, decision: 'deny' })).length, 0);
      assert.equal((await world.decisions({ operationId: first, policyId: 'no-secret-writes', decision: 'deny' })).length, 1);
    });

    it('records carry a sha256 input digest and a latency, never the raw args', async () => {
      const records = await world.decisions({ operationId: first });
      for (const r of records) {
        assert.match(r.inputDigest, /^[0-9a-f]{64}$/);
        assert.equal(typeof r.latencyMicros, 'number');
        assert.ok(r.latencyMicros >= 0);
        assert.equal(r.rawInput, undefined);
      }
      assert.ok(!JSON.stringify(records).includes(SECRET_CONTENT));
      // Different inputs, different digests.
      assert.equal(new Set(records.map((r) => r.inputDigest)).size, records.length);
    });
  });

  describe('with policies.logRawArgs on', () => {
    before(async () => {
      world = await PolicyWorld.create({ 'log.yaml': PACK }, { HOOKGATE_POLICIES__LOG_RAW_ARGS: 'true' });
      await world.boot();
      world.defineAgent('writer', [fsTurn(['writeFile', { path: 'secret.txt', content: SECRET_CONTENT }]), { text: 'done' }]);
    });
    after(() => world.cleanup());

    it('the raw input (args included) is stored next to the digest', async () => {
      const { operationId } = await world.run('writer');
      const [record] = await world.decisions({ operationId, decision: 'deny' });
      assert.match(record!.inputDigest, /^[0-9a-f]{64}$/);
      const raw = record!.rawInput as { args?: unknown; identifier?: string; apiName?: string };
      assert.deepEqual(raw.args, { path: 'secret.txt', content: SECRET_CONTENT });
      assert.equal(raw.identifier, 'fs');
      assert.equal(raw.apiName, 'writeFile');
    });
  });
});
