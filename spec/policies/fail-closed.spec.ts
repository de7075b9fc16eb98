import assert from 'node:assert/strict';
import { engineWithPack, toolCall } from './support/policy-fixtures.js';

const CODE = (body: string) => `export default { id: 'code.p', events: ['beforeToolCall'], evaluate(event) { ${body} } };`;

describe('policy evaluation fails closed', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('an expression that loops (tail recursion) is stopped and denies, naming the policy', async () => {
    const t = await engineWithPack(`policies: [ { id: looper, when: '($f := function($n){ $f($n + 1) }; $f(0))', effect: allow } ]`, { deadlineMs: 200 });
    close = t.close;
    // The loop never ends on its own: a decision at all means the deadline stopped it.
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b'));
    assert.equal(d.effect, 'deny');
    assert.deepEqual(d.policyIds, ['looper']);
    assert.match(d.reason ?? '', /^policy "looper" failed closed: .*(timeout|timed out)/i);
  });

  it('an expression that recurses without bound hits the stack limit and denies', async () => {
    const t = await engineWithPack(`policies: [ { id: deep, when: '($f := function($n){ 1 + $f($n + 1) }; $f(0)) > 0', effect: allow } ]`);
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b'));
    assert.equal(d.effect, 'deny');
    assert.match(d.reason ?? '', /policy "deep" failed closed: evaluation error: .*(stack|recursi)/i);
  });

  it('a code policy stuck in a loop is terminated at the deadline and denies; the pool keeps working', async () => {
    const t = await engineWithPack(`policies: [ { module: ./spin.mjs } ]`, { deadlineMs: 200 }, { 'spin.mjs': CODE('if (event.args.spin) for (;;) {} return { effect: "allow" };') });
    close = t.close;
    // `for (;;) {}` never yields: a decision at all means the deadline terminated the worker.
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b', { spin: true }));
    assert.equal(d.effect, 'deny');
    assert.match(d.reason ?? '', /policy "code.p" failed closed: timed out after the 200ms deadline \(worker terminated\)/);
    assert.equal((await t.engine.evaluateToolCall(toolCall('a', 'b', { spin: false }))).effect, 'allow');
  });

  it('a worker crash denies with a reason naming the policy and the crash', async () => {
    const t = await engineWithPack(`policies: [ { module: ./crash.mjs } ]`, {}, { 'crash.mjs': CODE('if (event.args.crash) process.exit(7); return { effect: "allow" };') });
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b', { crash: true }));
    assert.equal(d.effect, 'deny');
    assert.match(d.reason ?? '', /policy "code.p" failed closed: worker crashed .*code: 7/);
    assert.equal((await t.engine.evaluateToolCall(toolCall('a', 'b', { crash: false }))).effect, 'allow');
  });

  it('a worker reaching its memory limit denies with an out-of-memory reason', async () => {
    const t = await engineWithPack(
      `policies: [ { module: ./hog.mjs } ]`,
      { deadlineMs: 5000, resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 }, maxWorkers: 1 },
      { 'hog.mjs': CODE('const keep = []; for (;;) keep.push(new Array(100000).fill(keep.length));') },
    );
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b'));
    assert.equal(d.effect, 'deny');
    assert.match(d.reason ?? '', /policy "code.p" failed closed: worker ran out of memory/);
  });

  it('an expression that fails at run time denies', async () => {
    const t = await engineWithPack(`policies: [ { id: bad-math, when: '$number(args.n) > 1', effect: allow } ]`);
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b', { n: 'not a number' }));
    assert.equal(d.effect, 'deny');
    assert.match(d.reason ?? '', /policy "bad-math" failed closed: evaluation error:/);
  });

  it('a when that does not return a boolean denies', async () => {
    const t = await engineWithPack(`policies: [ { id: stringy, when: 'args.path', effect: allow } ]`);
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b', { path: 'x' }));
    assert.equal(d.effect, 'deny');
    assert.match(d.reason ?? '', /when must return a boolean, got string/);
  });

  it('a code policy that throws denies', async () => {
    const t = await engineWithPack(`policies: [ { module: ./throws.mjs } ]`, {}, { 'throws.mjs': CODE('throw new Error("boom");') });
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b'));
    assert.equal(d.reason, 'policy "code.p" failed closed: evaluation error: boom');
  });

  it('a failing shadow policy is logged with its error but does not deny', async () => {
    const t = await engineWithPack(`policies: [ { id: s, when: '$number("x") > 1', effect: allow, mode: shadow } ]`);
    close = t.close;
    assert.equal((await t.engine.evaluateToolCall(toolCall('a', 'b'))).effect, 'allow');
    await t.engine.flush();
    assert.match(t.log.records[0]!.policies[0]!.error ?? '', /evaluation error/);
  });

  it('an engine that is not started or is stopped denies', async () => {
    const t = await engineWithPack(`policies: []`);
    await t.close();
    close = async () => undefined;
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b'));
    assert.deepEqual(d, { effect: 'deny', reason: 'policy engine is stopped', policyIds: [] });
  });

  it('a caller abort cancels the evaluation and denies', async () => {
    const t = await engineWithPack(`policies: [ { module: ./slow.mjs } ]`, { deadlineMs: 5000 }, { 'slow.mjs': CODE('for (;;) {}') });
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('a', 'b'), AbortSignal.timeout(50));
    assert.match(d.reason ?? '', /cancelled by the caller/);
  });
});
