import assert from 'node:assert/strict';
import { copyFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { DecisionRecord } from '../../kernel/store.js';
import { engineWithPack, SHIPPED_PACKS, toolCall, toolResult } from './support/policy-fixtures.js';

/**
 * Adversarial inputs must be decided on their merits, never by running out of
 * time. No wall-clock assertions here (shared, noisy machines): every engine
 * gets a generous deadline, and a decision that is the policy's own effect,
 * with no failed (fail-closed) verdict in the log, is one that finished before
 * it. The deadline itself is shown to cut an evaluation that is really stuck.
 */
const GENEROUS_DEADLINE_MS = 2000;
const RUN = 'a'.repeat(100_000) + '!';

/** Fails unless no verdict of the decision failed (timeout, crash, error) and the reason is not a fail-closed one. */
function assertDecidedOnMerits(records: readonly DecisionRecord[], reason: string | undefined): void {
  assert.doesNotMatch(reason ?? '', /failed closed/);
  const record = records.at(-1);
  assert.ok(record, 'the decision was logged');
  assert.deepEqual(
    record.policies.filter((p) => p.error !== undefined),
    [],
  );
}

describe('adversarial policy inputs are decided on their merits', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('a ReDoS-shaped match pattern (a+)+$ against 100k a’s does not match (re2) and the call is allowed', async () => {
    const t = await engineWithPack(`policies: [ { id: redos-match, match: '(a+)+$', effect: deny } ]`, { deadlineMs: GENEROUS_DEADLINE_MS });
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall(RUN, 'x'));
    await t.engine.flush();
    assert.equal(d.effect, 'allow');
    assertDecidedOnMerits(t.log.records, d.reason);
  });

  it('the same ReDoS-shaped match pattern still matches a long run that ends in a’s (deny by the policy itself)', async () => {
    const t = await engineWithPack(`policies: [ { id: redos-match, match: '(a+)+$', effect: deny } ]`, { deadlineMs: GENEROUS_DEADLINE_MS });
    close = t.close;
    const d = await t.engine.evaluateToolCall(toolCall('t', 'a'.repeat(100_000)));
    await t.engine.flush();
    assert.equal(d.effect, 'deny');
    assert.equal(d.reason, 'denied by policy "redos-match"');
    assertDecidedOnMerits(t.log.records, d.reason);
  });

  it('a ReDoS-shaped args matcher ^(a+)+$ against 100k a’s and a bang is allowed; without the bang it denies', async () => {
    const t = await engineWithPack(`policies: [ { id: redos-args, args: { text: '^(a+)+$' }, effect: deny } ]`, { deadlineMs: GENEROUS_DEADLINE_MS });
    close = t.close;
    const safe = await t.engine.evaluateToolCall(toolCall('t', 'x', { text: RUN }));
    const hit = await t.engine.evaluateToolCall(toolCall('t', 'x', { text: 'a'.repeat(100_000) }));
    await t.engine.flush();
    assert.equal(safe.effect, 'allow');
    assert.equal(hit.effect, 'deny');
    assert.equal(hit.reason, 'denied by policy "redos-args"');
    assertDecidedOnMerits(t.log.records, hit.reason);
  });

  it('a ReDoS-shaped regex inside JSONata runs on re2 in the worker: evaluated, not timed out', async () => {
    const t = await engineWithPack(`policies: [ { id: redos-when, when: '$contains(args.text, /^(a+)+$/)', effect: deny, reason: long run of a } ]`, {
      deadlineMs: GENEROUS_DEADLINE_MS,
    });
    close = t.close;
    const safe = await t.engine.evaluateToolCall(toolCall('t', 'x', { text: RUN }));
    await t.engine.flush();
    assert.equal(safe.effect, 'allow', safe.reason);
    assertDecidedOnMerits(t.log.records, safe.reason);
    assert.deepEqual(t.log.records.at(-1)!.policies, [{ id: 'redos-when', effect: 'not_applicable', mode: 'enforce' }]);

    const matching = await t.engine.evaluateToolCall(toolCall('t', 'x', { text: 'a'.repeat(100_000) }));
    await t.engine.flush();
    assert.equal(matching.effect, 'deny');
    assert.equal(matching.reason, 'long run of a');
    assertDecidedOnMerits(t.log.records, matching.reason);
  });

  it('a genuinely stuck evaluation (native backtracking regex in a code policy) is cut by the deadline and denies naming the policy', async () => {
    const module = `export default {
      id: 'native-redos',
      events: ['beforeToolCall'],
      evaluate(event) { return /^(a+)+$/.test(event.args.text) ? { effect: 'deny' } : { effect: 'allow' }; },
    };`;
    const t = await engineWithPack(`policies: [ { module: ./native-redos.mjs } ]`, { deadlineMs: 500 }, { 'native-redos.mjs': module });
    close = t.close;
    // 2^40 backtracking steps for native RegExp: this never finishes on its own.
    const d = await t.engine.evaluateToolCall(toolCall('t', 'x', { text: 'a'.repeat(40) + '!' }));
    assert.equal(d.effect, 'deny');
    assert.deepEqual(d.policyIds, ['native-redos']);
    assert.equal(d.reason, 'policy "native-redos" failed closed: timed out after the 500ms deadline (worker terminated)');

    // The terminated worker was replaced: a harmless input is decided on its merits afterwards.
    const next = await t.engine.evaluateToolCall(toolCall('t', 'x', { text: 'b' }));
    assert.equal(next.effect, 'allow');
  });

  describe('against the shipped packs plus a worker policy', () => {
    let t: Awaited<ReturnType<typeof engineWithPack>>;
    before(async () => {
      t = await engineWithPack(`policies: [ { id: worker-check, when: '$contains($string(args), "never-present-marker")', effect: deny } ]`, {
        deadlineMs: GENEROUS_DEADLINE_MS,
      });
      for (const f of await readdir(SHIPPED_PACKS)) await copyFile(path.join(SHIPPED_PACKS, f), path.join(t.dir, f));
      assert.equal((await t.engine.reload()).changed, true);
    });
    after(() => t.close());

    afterEach(() => t.engine.flush());

    it('huge args (2 MB string, 1000 paths) are evaluated by the worker policy and allowed', async () => {
      const huge = { command: 'echo ' + 'x'.repeat(2 * 1024 * 1024), files: Array.from({ length: 1000 }, (_, i) => `src/file-${i}.ts`) };
      const d = await t.engine.evaluateToolCall(toolCall('shell', 'exec', huge));
      await t.engine.flush();
      assert.equal(d.effect, 'allow', d.reason);
      assertDecidedOnMerits(t.log.records, d.reason);
      assert.ok(t.log.records.at(-1)!.policies.some((p) => p.id === 'worker-check'));
    });

    it('huge args carrying a dangerous command are still denied by the shipped pack, not by a timeout', async () => {
      const huge = { command: 'rm -rf / ' + 'x'.repeat(2 * 1024 * 1024) };
      const d = await t.engine.evaluateToolCall(toolCall('shell', 'exec', huge));
      await t.engine.flush();
      assert.equal(d.effect, 'deny');
      assert.ok(d.policyIds.some((id) => id.startsWith('shell.')), d.policyIds.join(','));
      assertDecidedOnMerits(t.log.records, d.reason);
    });

    it('a huge result (1 MB) is fully redacted', async () => {
      const content = ('user a@b.io card 4111 1111 1111 1111 ' + 'y'.repeat(1000) + '\n').repeat(1024);
      const d = await t.engine.evaluateToolResult(toolResult(toolCall('db', 'dump'), { content }));
      await t.engine.flush();
      assert.equal(d.effect, 'allow');
      assert.ok(d.redactedResult);
      assert.ok(!d.redactedResult.content.includes('a@b.io'));
      assert.ok(!d.redactedResult.content.includes('4111 1111 1111 1111'));
      assertDecidedOnMerits(t.log.records, d.reason);
    });

    it('deeply nested args (100k levels) fail closed for worker policies, by the depth guard and not the deadline', async () => {
      let deep: Record<string, unknown> = { path: 'notes.txt' };
      for (let i = 0; i < 100_000; i++) deep = { inner: deep };
      const d = await t.engine.evaluateToolCall(toolCall('fs', 'read', deep));
      assert.equal(d.effect, 'deny');
      assert.match(d.reason ?? '', /policy "worker-check" failed closed: input is nested deeper than 64 levels/);
      assert.doesNotMatch(d.reason ?? '', /deadline/);
    });

    it('a secret path buried deep in args is still found by the main-thread matchers', async () => {
      let deep: Record<string, unknown> = { path: '/etc/shadow' };
      for (let i = 0; i < 10_000; i++) deep = { inner: deep };
      const d = await t.engine.evaluateToolCall(toolCall('fs', 'read', deep));
      assert.ok(d.policyIds.includes('secrets.deny-system-credentials'));
    });
  });
});
