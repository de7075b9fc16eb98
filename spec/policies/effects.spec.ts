import assert from 'node:assert/strict';
import { engineWithPack, toolCall, toolResult } from './support/policy-fixtures.js';

describe('policy effects', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('allow: a matching allow policy allows and names itself', async () => {
    const t = await engineWithPack(`policies: [ { id: allow-time, match: '^time/now$', effect: allow } ]`, { defaultDecision: 'deny' });
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('time', 'now'));
    assert.deepEqual(d, { effect: 'allow', policyIds: ['allow-time'] });
  });

  it('deny: a matching deny policy denies with its reason', async () => {
    const t = await engineWithPack(`policies: [ { id: no-delete, match: '^fs/delete$', effect: deny, reason: deleting is off } ]`);
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('fs', 'delete', { path: 'a.txt' }));
    assert.deepEqual(d, { effect: 'deny', reason: 'deleting is off', policyIds: ['no-delete'] });
  });

  it('ask: a matching ask policy parks the call with the reason for the approver', async () => {
    const t = await engineWithPack(`policies: [ { id: ask-write, match: '^fs/write$', effect: ask, reason: writes need a human } ]`);
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('fs', 'write', { path: 'a.txt' }));
    assert.deepEqual(d, { effect: 'ask', reason: 'writes need a human', policyIds: ['ask-write'] });
  });

  it('redact: rewrites the result content and every string in result data', async () => {
    const t = await engineWithPack(`
policies:
  - id: hide-digits
    effect: redact
    redact: { pattern: '\\d+', replacement: '#' }
`);
    close = t.close;
    const event = toolResult(toolCall('db', 'query'), { content: 'id 42 and 7', data: { rows: [{ n: 'x1' }, 5], note: 'y22' } });
    const d = await t.engine.evaluateToolResult(event);
    assert.equal(d.effect, 'allow');
    assert.deepEqual(d.policyIds, ['hide-digits']);
    assert.equal(d.redactedResult?.content, 'id # and #');
    assert.deepEqual(d.redactedResult?.data, { rows: [{ n: 'x#' }, 5], note: 'y#' });
    assert.equal(event.result.content, 'id 42 and 7', 'the original result is not modified');
  });

  it('a when condition decides whether the policy applies (evaluated in a worker)', async () => {
    const t = await engineWithPack(`
policies:
  - { id: big-writes, match: '^fs/write$', when: '$length(args.content) > 10', effect: deny }
`);
    close = t.close;
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'write', { content: 'short' }))).effect, 'allow');
    const d = await t.engine.evaluateToolCall(toolCall('fs', 'write', { content: 'a much longer text' }));
    assert.deepEqual(d, { effect: 'deny', reason: 'denied by policy "big-writes"', policyIds: ['big-writes'] });
  });

  it('a when condition can use re2-backed regex functions', async () => {
    const t = await engineWithPack(`
policies:
  - { id: no-tmp, when: '$contains(args.path, /^\\/tmp\\//)', effect: deny }
`);
    close = t.close;
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'read', { path: '/tmp/x' }))).effect, 'deny');
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'read', { path: '/home/tmp/x' }))).effect, 'allow');
  });

  it('a reason expression is evaluated against the event', async () => {
    const t = await engineWithPack(`
policies:
  - { id: p, match: '^fs/', effect: deny, reason: { expr: '"no " & apiName & " of " & args.path' } }
`);
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('fs', 'read', { path: 'a.txt' }));
    assert.equal(d.reason, 'no read of a.txt');
  });

  it('args matchers select on argument values without a worker', async () => {
    const t = await engineWithPack(`
policies:
  - { id: p, args: { 'target.host': '^evil\\.' }, effect: deny }
`);
    close = t.close;
    const denied = await t.engine.evaluate('beforeToolCall', toolCall('net', 'get', { target: { host: 'evil.io' } }));
    assert.equal(denied.effect, 'deny');
    assert.equal((await t.engine.evaluateToolCall(toolCall('net', 'get', { target: { host: 'good.io' } }))).effect, 'allow');
  });

  it('code policies run only in a worker and return the same effects', async () => {
    const t = await engineWithPack(
      `policies: [ { module: ./big-args.mjs } ]`,
      {},
      {
        'big-args.mjs': `import { isMainThread } from 'node:worker_threads';
        export default {
          id: 'code.big-args', events: ['beforeToolCall'], match: '^fs/',
          evaluate(event) {
            const where = isMainThread ? 'main thread' : 'worker';
            return JSON.stringify(event.args).length > 20 ? { effect: 'ask', reason: 'large args from ' + event.tool + ' in a ' + where } : undefined;
          },
        };`,
      },
    );
    close = t.close;
    assert.equal((await t.engine.evaluateToolCall(toolCall('fs', 'read', { p: 'x' }))).effect, 'allow');
    assert.deepEqual(await t.engine.evaluateToolCall(toolCall('fs', 'read', { p: 'x'.repeat(50) })), {
      effect: 'ask',
      reason: 'large args from fs/read in a worker',
      policyIds: ['code.big-args'],
    });
    assert.equal((await t.engine.evaluateToolCall(toolCall('shell', 'exec', { p: 'x'.repeat(50) }))).effect, 'allow', 'match from definePolicy applies');
  });

  it('code policies can redact with re2 patterns', async () => {
    const t = await engineWithPack(
      `policies: [ { module: ./hide-user.mjs } ]`,
      {},
      {
        'hide-user.mjs': `export default {
          id: 'code.hide-user', events: ['afterToolCall'],
          evaluate(event) { return { effect: 'redact', redact: [{ pattern: event.userId, replacement: '[USER]' }] }; },
        };`,
      },
    );
    close = t.close;
    const d = await t.engine.evaluateToolResult(toolResult(toolCall('x', 'y', {}, { userId: 'alice' }), { content: 'hello alice' }));
    assert.equal(d.redactedResult?.content, 'hello [USER]');
  });

  it('onToolCallError policies apply to failed results', async () => {
    const t = await engineWithPack(`
policies:
  - { id: hide-paths, events: [onToolCallError], effect: redact, redact: { pattern: '/home/\\w+', replacement: '~' } }
`);
    close = t.close;
    const failed = await t.engine.evaluateToolResult(toolResult(toolCall('fs', 'read'), { content: 'ENOENT /home/bob/x', success: false }));
    assert.equal(failed.redactedResult?.content, 'ENOENT ~/x');
    const ok = await t.engine.evaluateToolResult(toolResult(toolCall('fs', 'read'), { content: '/home/bob/x' }));
    assert.equal(ok.redactedResult, undefined);
  });
});
