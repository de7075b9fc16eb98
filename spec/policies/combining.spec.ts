import assert from 'node:assert/strict';
import { engineWithPack, toolCall, toolResult } from './support/policy-fixtures.js';

const PACK = `
policies:
  - { id: allow-all-fs, match: '^fs/', effect: allow }
  - { id: ask-writes, match: '^fs/write$', effect: ask, reason: check writes }
  - { id: deny-etc, match: '^fs/', args: { path: '^/etc/' }, effect: deny, reason: no /etc }
  - { id: shadow-deny-reads, match: '^fs/read$', effect: deny, mode: shadow, reason: would deny reads }
  - { id: first-redact, events: [afterToolCall], effect: redact, redact: { pattern: 'secret', replacement: 'token' } }
  - { id: second-redact, events: [afterToolCall], effect: redact, redact: { pattern: 'token', replacement: '***' } }
`;

describe('combining policy decisions', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('deny wins over ask and allow', async () => {
    const t = await engineWithPack(PACK);
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('fs', 'write', { path: '/etc/passwd' }));
    assert.deepEqual(d, { effect: 'deny', reason: 'no /etc', policyIds: ['deny-etc'] });
  });

  it('ask wins over allow', async () => {
    const t = await engineWithPack(PACK);
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('fs', 'write', { path: 'notes.txt' }));
    assert.deepEqual(d, { effect: 'ask', reason: 'check writes', policyIds: ['ask-writes'] });
  });

  it('shadow policies are evaluated and logged but never change the outcome', async () => {
    const t = await engineWithPack(PACK);
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('fs', 'read', { path: 'notes.txt' }));
    assert.deepEqual(d, { effect: 'allow', policyIds: ['allow-all-fs'] });
    await t.engine.flush();
    const shadow = t.log.records[0]!.policies.find((p) => p.id === 'shadow-deny-reads');
    assert.deepEqual(shadow, { id: 'shadow-deny-reads', effect: 'deny', mode: 'shadow', reason: 'would deny reads' });
  });

  it('redactions compose in pack order', async () => {
    const t = await engineWithPack(PACK);
    close = t.close;
    const d = await t.engine.evaluateToolResult(toolResult(toolCall('x', 'y'), { content: 'a secret and a token' }));
    assert.equal(d.redactedResult?.content, 'a *** and a ***');
    assert.deepEqual(d.policyIds, ['first-redact', 'second-redact']);
  });

  it('unmatched tool calls get the configured default: allow', async () => {
    const t = await engineWithPack(PACK, { defaultDecision: 'allow' });
    close = t.close;
    assert.deepEqual(await t.engine.evaluateToolCall(toolCall('web', 'search')), { effect: 'allow', policyIds: [] });
    await t.engine.flush();
    assert.equal(t.log.records[0]!.defaulted, true);
  });

  it('unmatched tool calls get the configured default: deny, for allow-list installs', async () => {
    const t = await engineWithPack(PACK, { defaultDecision: 'deny' });
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('web', 'search'));
    assert.equal(d.effect, 'deny');
    assert.match(d.reason ?? '', /default deny/);
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'read', { path: 'a' }))).effect, 'allow', 'an allow policy opens the list');
    await t.engine.flush();
    assert.deepEqual(
      t.log.records.map((r) => [r.decision, r.defaulted]),
      [
        ['deny', true],
        ['allow', false],
      ],
    );
  });

  it('only shadow matches still leave the decision to the default', async () => {
    const t = await engineWithPack(`policies: [ { id: s, effect: allow, mode: shadow } ]`, { defaultDecision: 'deny' });
    close = t.close;
    assert.equal((await t.engine.evaluateToolCall(toolCall('a', 'b'))).effect, 'deny');
  });

  it('the default deny applies to tool calls, not to their results', async () => {
    const t = await engineWithPack(PACK, { defaultDecision: 'deny' });
    close = t.close;
    const d = await t.engine.evaluateToolResult(toolResult(toolCall('web', 'search'), { content: 'nothing to hide' }));
    assert.equal(d.effect, 'allow');
  });
});
