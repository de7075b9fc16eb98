import assert from 'node:assert/strict';
import { copyFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { engineWithPack, SHIPPED_PACKS, toolCall, toolResult } from './support/policy-fixtures.js';

const DEADLINE_MS = 250;
const RUN = 'a'.repeat(100_000) + '!';

/** Decides and returns the outcome with the wall time the caller waited. */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

describe('adversarial policy inputs stay within the deadline', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('a ReDoS-shaped match pattern (a+)+$ against 100k a’s is linear with re2', async () => {
    const t = await engineWithPack(`policies: [ { id: redos-match, match: '(a+)+$', effect: deny } ]`, { deadlineMs: DEADLINE_MS });
    close = t.close;
    const { value, ms } = await timed(() => t.engine.evaluateToolCall(toolCall(RUN, 'x')));
    assert.equal(value.effect, 'allow');
    assert.ok(ms < DEADLINE_MS, `took ${ms}ms`);
  });

  it('a ReDoS-shaped args matcher against 100k a’s is linear with re2', async () => {
    const t = await engineWithPack(`policies: [ { id: redos-args, args: { text: '^(a+)+$' }, effect: deny } ]`, { deadlineMs: DEADLINE_MS });
    close = t.close;
    const { value, ms } = await timed(() => t.engine.evaluateToolCall(toolCall('t', 'x', { text: RUN })));
    assert.equal(value.effect, 'allow');
    assert.ok(ms < DEADLINE_MS, `took ${ms}ms`);
  });

  it('a ReDoS-shaped regex inside JSONata runs on re2 in the worker', async () => {
    const t = await engineWithPack(`policies: [ { id: redos-when, when: '$contains(args.text, /^(a+)+$/)', effect: deny } ]`, { deadlineMs: DEADLINE_MS });
    close = t.close;
    const { value, ms } = await timed(() => t.engine.evaluateToolCall(toolCall('t', 'x', { text: RUN })));
    assert.equal(value.effect, 'allow', value.reason);
    assert.ok(ms < DEADLINE_MS, `took ${ms}ms`);
    const matching = await t.engine.evaluateToolCall(toolCall('t', 'x', { text: 'a'.repeat(100_000) }));
    assert.equal(matching.effect, 'deny');
  });

  describe('against the shipped packs plus a worker policy', () => {
    let t: Awaited<ReturnType<typeof engineWithPack>>;
    before(async () => {
      t = await engineWithPack(`policies: [ { id: worker-check, when: '$contains($string(args), "never-present-marker")', effect: deny } ]`, { deadlineMs: DEADLINE_MS });
      for (const f of await readdir(SHIPPED_PACKS)) await copyFile(path.join(SHIPPED_PACKS, f), path.join(t.dir, f));
      assert.equal((await t.engine.reload()).changed, true);
    });
    after(() => t.close());

    afterEach(() => t.engine.flush());

    it('huge args (2 MB string, 1000 paths) are decided within the deadline', async () => {
      const huge = { command: 'echo ' + 'x'.repeat(2 * 1024 * 1024), files: Array.from({ length: 1000 }, (_, i) => `src/file-${i}.ts`) };
      const { value, ms } = await timed(() => t.engine.evaluateToolCall(toolCall('shell', 'exec', huge)));
      assert.equal(value.effect, 'allow', value.reason);
      assert.ok(ms < DEADLINE_MS, `took ${ms}ms`);
    });

    it('a huge result (1 MB) is redacted within the deadline', async () => {
      const content = ('user a@b.io card 4111 1111 1111 1111 ' + 'y'.repeat(1000) + '\n').repeat(1024);
      const { value, ms } = await timed(() => t.engine.evaluateToolResult(toolResult(toolCall('db', 'dump'), { content })));
      assert.ok(value.redactedResult && !value.redactedResult.content.includes('a@b.io'));
      assert.ok(ms < DEADLINE_MS, `took ${ms}ms`);
    });

    it('deeply nested args (100k levels) fail closed for worker policies and return within the deadline', async () => {
      let deep: Record<string, unknown> = { path: 'notes.txt' };
      for (let i = 0; i < 100_000; i++) deep = { inner: deep };
      const { value, ms } = await timed(() => t.engine.evaluateToolCall(toolCall('fs', 'read', deep)));
      assert.equal(value.effect, 'deny');
      assert.match(value.reason ?? '', /policy "worker-check" failed closed: input is nested deeper than 64 levels/);
      assert.ok(ms < DEADLINE_MS, `took ${ms}ms`);
    });

    it('a secret path buried deep in args is still found by the main-thread matchers', async () => {
      let deep: Record<string, unknown> = { path: '/etc/shadow' };
      for (let i = 0; i < 10_000; i++) deep = { inner: deep };
      const d = await t.engine.evaluateToolCall(toolCall('fs', 'read', deep));
      assert.ok(d.policyIds.includes('secrets.deny-system-credentials'));
    });
  });
});
