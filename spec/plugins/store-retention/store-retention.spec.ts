import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig, type Kernel } from '../../../index.js';
import { emptyPruneCounts, type PruneCounts, type PruneOptions, type RetentionPolicy } from '../../../kernel/retention.js';
import storeRetention, { RetentionTimer } from '../../../plugins/store-retention/index.js';
import { captureLogger } from '../../helpers/capture-logger.js';

/** A store whose prune resolves when the spec says so, recording each call. */
function controlledStore() {
  const calls: Array<{ policy: RetentionPolicy; options?: PruneOptions }> = [];
  let release: ((counts: PruneCounts) => void) | undefined;
  let fail: ((err: Error) => void) | undefined;
  return {
    calls,
    store: {
      prune: (policy: RetentionPolicy, options?: PruneOptions) => {
        calls.push({ policy, options });
        return new Promise<PruneCounts>((resolve, reject) => {
          release = resolve;
          fail = reject;
        });
      },
    },
    finish: (counts: PruneCounts) => release!(counts),
    fail: (err: Error) => fail!(err),
  };
}

const records = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('store-retention', () => {
  describe('RetentionTimer', () => {
    it('runs one pass at a time with the policy, and logs what it removed', async () => {
      const { logger, lines } = captureLogger();
      const c = controlledStore();
      const timer = new RetentionTimer(c.store, { maxOperations: 5 }, 60_000, logger);
      const first = timer.tick();
      const second = timer.tick();
      assert.equal(first, second, 'a tick while a pass runs joins it');
      assert.equal(c.calls.length, 1);
      assert.deepEqual(c.calls[0]!.policy, { maxOperations: 5 });
      c.finish({ ...emptyPruneCounts(), threads: 2, operations: 3, messages: 9 });
      await first;
      const pruned = records(lines).find((r) => r.msg === 'storage pruned');
      assert.ok(pruned, lines.join('\n'));
      assert.deepEqual([pruned.threads, pruned.operations, pruned.messages], [2, 3, 9]);
      await timer.stop();
    });

    it('logs a failed pass instead of throwing, and the next tick tries again', async () => {
      const { logger, lines } = captureLogger();
      const c = controlledStore();
      const timer = new RetentionTimer(c.store, { maxOperations: 5 }, 60_000, logger);
      const pass = timer.tick();
      c.fail(new Error('disk on fire'));
      await pass;
      const failed = records(lines).find((r) => r.msg === 'storage prune failed; the next pass tries again');
      assert.ok(failed && failed.level === 'error' && failed.error === 'disk on fire', lines.join('\n'));
      const next = timer.tick();
      assert.equal(c.calls.length, 2);
      c.finish(emptyPruneCounts());
      await next;
      assert.ok(!records(lines).some((r) => r.msg === 'storage pruned'), 'a pass that removed nothing is not logged');
      await timer.stop();
    });

    it('stop asks a running pass to end (its signal) and waits for it; its timer never keeps the process alive', async () => {
      const c = controlledStore();
      const timer = new RetentionTimer(c.store, { maxAgeMs: 1000 }, 60_000, captureLogger().logger);
      timer.start();
      assert.equal((timer as unknown as { timer: NodeJS.Timeout }).timer.hasRef(), false);
      void timer.tick();
      const signal = c.calls[0]!.options!.signal!;
      let stopped = false;
      const stopping = timer.stop().then(() => (stopped = true));
      assert.equal(signal.aborted, true);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(stopped, false, 'stop waits for the pass');
      c.finish(emptyPruneCounts());
      await stopping;
      assert.equal(stopped, true);
      await timer.tick();
      assert.equal(c.calls.length, 1, 'no pass after stop');
    });
  });

  describe('plugin', () => {
    let dir: string;
    let kernel: Kernel | undefined;
    beforeEach(async () => {
      dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-retention-')));
    });
    afterEach(async () => {
      await kernel?.stop();
      kernel = undefined;
      await rm(dir, { recursive: true, force: true });
    });

    it('ships with hookgate and requires the store (so it stops before it)', () => {
      assert.equal(storeRetention.id, 'store-retention');
      assert.deepEqual(storeRetention.requires?.map((t) => t.id), ['kernel.config', 'kernel.logger', 'store']);
    });

    it('prunes in the background by the config once the kernel is ready', async function () {
      this.timeout(60_000);
      const env = { HOOKGATE_STORE__DRIVER: 'memory', HOOKGATE_RETENTION__MAX_OPERATIONS: '1', HOOKGATE_RETENTION__INTERVAL: '1s', HOOKGATE_LOG__LEVEL: 'silent' };
      kernel = createKernel({ config: loadConfig({ cwd: dir, env }), env: {} });
      await kernel.start();
      assert.equal(kernel.plugins().find((p) => p.id === 'store-retention')?.state, 'started');
      const agent = { id: 'quick', model: { provider: 'scripted', turns: [{ text: 'done' }] } };
      for (let i = 0; i < 3; i++) await (await kernel.execAgent({ agent: agent as never, prompt: `run ${i}` })).completed();
      assert.equal((await kernel.listOperations()).length, 3);
      // Waits for a pass (every second), however long the machine takes; the spec asserts what it did, not when.
      while ((await kernel.listOperations()).length > 1) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal((await kernel.listOperations()).length, 1);
    });
  });
});
