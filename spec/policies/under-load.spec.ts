import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import type { ToolPolicyDecision } from '../../kernel/tool-policy.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { engineWithPack, toolCall } from './support/policy-fixtures.js';

/**
 * Issue 12, item 3: decisions under load, on real piscina workers. Every
 * wave is started in one turn of the event loop, so how many decisions are
 * in flight is exact (none can finish before the wave is queued: answers come
 * back as messages, on later turns); the assertions are about decisions,
 * never about time.
 */

/** 100 tool rules ("deny tool-i under /secret-i/") and two rules on every tool that never hold: three conditions per decision. */
function loadPack(): string {
  const lines = ['policies:'];
  for (let i = 0; i < 100; i++) {
    lines.push(`  - id: rule-${i}`, `    match: '^tool-${i}/run$'`, '    effect: deny', `    when: '$contains(args.path, /^\\/secret-${i}\\//)'`);
  }
  lines.push('  - id: any-too-long', '    effect: deny', "    when: '$length(args.path) > 4096'");
  lines.push('  - id: any-traversal', '    effect: deny', "    when: '$contains(args.path, \"/../\")'");
  return lines.join('\n') + '\n';
}

/** Event `i` of a wave and whether the right answer is deny (a quarter name a secret path of their own tool). */
function loadEvent(i: number): { event: ReturnType<typeof toolCall>; deny: boolean } {
  const tool = i % 100;
  const deny = i % 4 === 0;
  return { event: toolCall(`tool-${tool}`, 'run', { path: deny ? `/secret-${tool}/key-${i}.txt` : `/work/file-${i}.txt` }), deny };
}

describe('policies under load', function () {
  this.timeout(120_000);
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  describe('below capacity (the defaults: maxInFlight 1,024, one worker per core, 250 ms deadline)', () => {
    for (const inFlight of [256, 1024]) {
      it(`${inFlight.toLocaleString('en-US')} decisions in flight: every one is the policies' answer (no wrong deny, no refusal), every one logged`, async () => {
        const t = await engineWithPack(loadPack(), { maxWorkers: undefined });
        close = t.close;
        assert.equal(t.engine.stats().maxInFlight, 1024);
        const wave = Array.from({ length: inFlight }, (_, i) => loadEvent(i));
        const decisions = await Promise.all(wave.map(({ event }) => t.engine.evaluateToolCall(event)));
        const wrong = decisions.filter((d, i) => (d.effect === 'deny') !== wave[i]!.deny);
        assert.deepEqual(wrong.map((d) => d.reason), []);
        assert.equal(decisions.filter((d) => d.classification !== undefined).length, 0);
        decisions.forEach((d, i) => {
          if (wave[i]!.deny) assert.deepEqual(d.policyIds, [`rule-${i % 100}`]);
        });
        assert.equal(t.engine.stats().overloaded, 0);
        assert.equal(t.engine.stats().inFlight, 0);
        await t.engine.flush();
        assert.equal(t.log.records.length, inFlight);
        assert.equal(t.log.records.filter((r) => r.decision === 'deny').length, inFlight / 4);
      });
    }
  });

  describe('above capacity', () => {
    const OVERLOADED = /^policy_overloaded: the policy engine is at capacity \(4 decisions in flight\), so no policy evaluated this tool call and it did not run\./;

    it('refuses with its own reason and classification: no policy decided, nothing in the decision log, counted and logged', async () => {
      const { logger, lines } = captureLogger();
      const t = await engineWithPack(loadPack(), { maxInFlight: 4, maxWorkers: 1, logger });
      close = t.close;
      const wave = Array.from({ length: 10 }, (_, i) => loadEvent(i));
      const decisions = await Promise.all(wave.map(({ event }) => t.engine.evaluateToolCall(event)));

      // The first four were admitted and decided by the policies; the other six were refused.
      decisions.slice(0, 4).forEach((d, i) => {
        assert.equal(d.classification, undefined);
        assert.equal(d.effect, wave[i]!.deny ? 'deny' : 'allow');
      });
      for (const d of decisions.slice(4)) {
        assert.deepEqual({ ...d, reason: undefined }, { effect: 'deny', policyIds: [], classification: 'policy_overloaded', reason: undefined } satisfies ToolPolicyDecision);
        assert.match(d.reason ?? '', OVERLOADED);
      }
      assert.equal(t.engine.stats().overloaded, 6);

      await t.engine.flush();
      assert.deepEqual(
        t.log.records.map((r) => r.toolCallId),
        wave.slice(0, 4).map((w) => w.event.toolCallId),
      );
      assert.ok(t.log.records.every((r) => !/policy_overloaded/.test(JSON.stringify(r))));

      const warned = lines.filter((l) => l.includes('policy_overloaded'));
      assert.ok(warned.length >= 1, 'the refusal was logged');
      assert.match(warned[0]!, /"level":"warn"/);
      assert.match(warned[0]!, new RegExp(`"toolCallId":"${wave[4]!.event.toolCallId}"`));
      assert.match(warned[0]!, /"maxInFlight":4/);

      // Capacity frees as decisions finish: the next one is decided again.
      const again = loadEvent(0);
      assert.deepEqual(await t.engine.evaluateToolCall(again.event), { effect: 'deny', policyIds: ['rule-0'], reason: 'denied by policy "rule-0"' });
    });

    it('a result refused for overload is withheld (fail closed), with a reason saying the tool did run', async () => {
      const t = await engineWithPack(`policies: [ { id: scan, events: [afterToolCall], when: '$contains(result.content, "secret")', effect: deny } ]`, { maxInFlight: 1, maxWorkers: 1 });
      close = t.close;
      const results = await Promise.all([1, 2].map(() => t.engine.evaluateToolResult({ ...toolCall('a', 'b'), result: { success: true, content: 'fine' } })));
      assert.deepEqual(results[0], { effect: 'allow', policyIds: [] });
      assert.equal(results[1]!.effect, 'deny');
      assert.equal(results[1]!.classification, 'policy_overloaded');
      assert.match(results[1]!.reason ?? '', /^policy_overloaded: .*no policy checked this tool result and it is withheld\. The tool did run\.$/);
      await t.engine.flush();
      assert.equal(t.log.records.length, 1);
    });

    it('a decision that needs no worker is never refused: capacity counts only decisions waiting for or in a worker', async () => {
      const pack = `policies:
  - { id: slow, match: '^slow/', when: '$contains(args.path, "x")', effect: deny }
  - { id: local, match: '^local/', args: { path: '^/secret/' }, effect: deny }
`;
      const t = await engineWithPack(pack, { maxInFlight: 1, maxWorkers: 1 });
      close = t.close;
      const [first, refused, local] = await Promise.all([
        t.engine.evaluateToolCall(toolCall('slow', 'run', { path: 'a' })),
        t.engine.evaluateToolCall(toolCall('slow', 'run', { path: 'b' })),
        t.engine.evaluateToolCall(toolCall('local', 'run', { path: '/secret/k' })),
      ]);
      assert.deepEqual(first, { effect: 'allow', policyIds: [] });
      assert.equal(refused!.classification, 'policy_overloaded');
      assert.deepEqual(local, { effect: 'deny', policyIds: ['local'], reason: 'denied by policy "local"' });
    });
  });

  describe('the deadline counts evaluation, not queueing', () => {
    const SPIN = `export default { id: 'code.spin', events: ['beforeToolCall'], evaluate(event) { if (event.args.spin) for (;;) {} return { effect: "allow" }; } };`;

    it('a condition that overruns fails closed alone: the decisions sharing its worker hop are evaluated again and decided', async () => {
      // One worker: all 21 decisions go out in one hop; the spinning one is the sixth.
      const t = await engineWithPack(`policies: [ { module: ./spin.mjs } ]`, { deadlineMs: 200, maxWorkers: 1 }, { 'spin.mjs': SPIN });
      close = t.close;
      const events = Array.from({ length: 21 }, (_, i) => toolCall('a', 'b', { spin: i === 5 }));
      const decisions = await Promise.all(events.map((e) => t.engine.evaluateToolCall(e)));
      assert.equal(decisions[5]!.effect, 'deny');
      assert.match(decisions[5]!.reason ?? '', /policy "code.spin" failed closed: timed out after the 200ms deadline \(worker terminated\)/);
      decisions.forEach((d, i) => {
        if (i !== 5) assert.deepEqual(d, { effect: 'allow', policyIds: ['code.spin'] }, `decision ${i}`);
      });
    });

    it('decisions queued behind a long one are not timed out by their wait', async () => {
      // One worker, a 300 ms deadline, a condition that takes a little less than the deadline each time: queued
      // behind each other, the later ones wait several deadlines before their turn, and none is denied for it.
      const SLOW = `export default { id: 'code.slow', events: ['beforeToolCall'], async evaluate() { await new Promise((r) => setTimeout(r, 100)); return { effect: "allow" }; } };`;
      const t = await engineWithPack(`policies: [ { module: ./slow.mjs } ]`, { deadlineMs: 300, maxWorkers: 1, maxBatch: 1 }, { 'slow.mjs': SLOW });
      close = t.close;
      const decisions = await Promise.all(Array.from({ length: 8 }, () => t.engine.evaluateToolCall(toolCall('a', 'b'))));
      assert.deepEqual(
        decisions.map((d) => d.effect),
        Array.from({ length: 8 }, () => 'allow'),
      );
    });
  });

  it('the pool is sized from the machine unless configured', async () => {
    const t = await engineWithPack(`policies: []`, { maxWorkers: undefined });
    close = t.close;
    assert.equal(t.engine.stats().workers, Math.min(availableParallelism(), 8));
    await t.close();
    const two = await engineWithPack(`policies: []`, { maxWorkers: 3, maxInFlight: 7 });
    close = two.close;
    assert.deepEqual({ ...two.engine.stats() }, { overloaded: 0, inFlight: 0, maxInFlight: 7, workers: 3 });
  });
});
