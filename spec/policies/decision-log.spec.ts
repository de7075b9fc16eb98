import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { canonicalDigest, canonicalJson } from '../../policies/canonical-json.js';
import { engineWithPack, toolCall, toolResult } from './support/policy-fixtures.js';

const PACK = `
policies:
  - { id: deny-rm, match: '^shell/exec$', args: { command: '^rm ' }, effect: deny, reason: no rm }
  - { id: shadow-ask-shell, match: '^shell/', effect: ask, mode: shadow, reason: would ask }
  - { id: redact-x, events: [afterToolCall], effect: redact, redact: { pattern: x } }
`;

describe('policy decision log', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('records a deny with tool call, policies, effects, modes, reason, latency and digest', async () => {
    const t = await engineWithPack(PACK);
    close = t.close;
    const event = toolCall('shell', 'exec', { command: 'rm -r build' }, { operationId: 'op-9', toolCallId: 'tc-1', agentId: 'ag' });
    await t.engine.evaluateToolCall(event);
    await t.engine.flush();
    const [r] = t.log.records;
    assert.ok(r);
    assert.match(r.id, /^[0-9a-f-]{36}$/);
    assert.ok(!Number.isNaN(Date.parse(r.createdAt)));
    assert.deepEqual(
      { operationId: r.operationId, toolCallId: r.toolCallId, agentId: r.agentId, event: r.event, identifier: r.identifier, apiName: r.apiName },
      { operationId: 'op-9', toolCallId: 'tc-1', agentId: 'ag', event: 'beforeToolCall', identifier: 'shell', apiName: 'exec' },
    );
    assert.deepEqual(r.policies, [
      { id: 'deny-rm', effect: 'deny', mode: 'enforce', reason: 'no rm' },
      { id: 'shadow-ask-shell', effect: 'ask', mode: 'shadow', reason: 'would ask' },
    ]);
    assert.equal(r.decision, 'deny');
    assert.equal(r.reason, 'no rm');
    assert.equal(r.defaulted, false);
    assert.ok(r.latencyMicros > 0 && r.latencyMicros < 250_000);
    assert.match(r.inputDigest, /^[0-9a-f]{64}$/);
    assert.equal(r.rawInput, undefined, 'raw args are not logged by default');
    assert.ok(!JSON.stringify(r).includes('rm -r build'), 'the args do not appear anywhere in the record');
  });

  it('records allows too, including defaulted ones', async () => {
    const t = await engineWithPack(PACK);
    close = t.close;
    await t.engine.evaluateToolCall(toolCall('web', 'search', { q: 'x' }));
    await t.engine.flush();
    assert.equal(t.log.records.length, 1);
    assert.deepEqual([t.log.records[0]!.decision, t.log.records[0]!.defaulted, t.log.records[0]!.policies], ['allow', true, []]);
  });

  it('records redactions as decision redact', async () => {
    const t = await engineWithPack(PACK);
    close = t.close;
    await t.engine.evaluateToolResult(toolResult(toolCall('fs', 'read'), { content: 'xyz' }));
    await t.engine.flush();
    assert.equal(t.log.records[0]!.decision, 'redact');
    assert.equal(t.log.records[0]!.event, 'afterToolCall');
  });

  it('the digest is the sha256 of the canonical JSON of the input and ignores key order', async () => {
    const t = await engineWithPack(PACK);
    close = t.close;
    const a = toolCall('web', 'search', { q: 'x', n: 1 }, { toolCallId: 'same' });
    const b = { ...toolCall('web', 'search', { n: 1, q: 'x' }, { toolCallId: 'same' }) };
    await t.engine.evaluateToolCall(a);
    await t.engine.evaluateToolCall(b);
    await t.engine.flush();
    assert.equal(t.log.records[0]!.inputDigest, t.log.records[1]!.inputDigest);
    const expected = createHash('sha256').update(canonicalJson({ ...a, type: 'beforeToolCall', tool: 'web/search' })).digest('hex');
    assert.equal(t.log.records[0]!.inputDigest, expected);
  });

  it('logs the raw input only when logRawArgs is on', async () => {
    const t = await engineWithPack(PACK, { logRawArgs: true });
    close = t.close;
    await t.engine.evaluateToolCall(toolCall('web', 'search', { q: 'visible' }));
    await t.engine.flush();
    assert.deepEqual((t.log.records[0]!.rawInput as { args: unknown }).args, { q: 'visible' });
  });

  it('a failing store does not change the decision', async () => {
    const t = await engineWithPack(PACK, {
      store: { recordDecision: async () => Promise.reject(new Error('disk full')), listDecisions: async () => [] },
    });
    close = t.close;
    assert.equal((await t.engine.evaluateToolCall(toolCall('shell', 'exec', { command: 'rm x' }))).effect, 'deny');
    await t.engine.flush();
  });

  it('canonical JSON sorts keys and survives deep nesting', () => {
    assert.equal(canonicalJson({ b: 1, a: [true, null, { d: 'x', c: undefined }] }), '{"a":[true,null,{"d":"x"}],"b":1}');
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = { n: deep };
    assert.match(canonicalDigest(deep), /^[0-9a-f]{64}$/);
  });
});
