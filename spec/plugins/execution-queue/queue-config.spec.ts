import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel } from '../../../index.js';
import { loadConfig } from '../../../config/load-config.js';
import { isHookgateError } from '../../../kernel/errors.js';
import { runHookgate } from '../../helpers/cli-process.js';
import { redisAddress } from '../../../plugins/execution-queue/redis-address.js';
import { queueConfig } from '../../../config/queue-schema.js';

const PASSWORD = 'redis-pass-Xq7-never-shown';

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Issue 16 item 2: queue mode's config and its failures, with clear errors and no password anywhere. */
describe('execution-queue: config and an unreachable Redis', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-config-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function config(yaml: string) {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), yaml);
  }

  it('Redis down: hookgate worker exits 1 naming the Redis URL and never the password; createKernel().start() rejects QUEUE_UNAVAILABLE', async () => {
    const port = await closedPort();
    await config(`execution: queue\nqueue:\n  redis: { url: redis://127.0.0.1:${port}/2, passwordEnv: HG_SPEC_REDIS_PASSWORD }\n`);
    const env = { HG_SPEC_REDIS_PASSWORD: PASSWORD };
    const worker = await runHookgate(dir, ['worker'], env);
    assert.equal(worker.code, 1, worker.stderr);
    assert.match(worker.stderr, new RegExp(`cannot reach Redis at redis://127\\.0\\.0\\.1:${port}/2 \\(queue\\.redis\\)`));
    assert.ok(!(worker.stderr + worker.stdout).includes(PASSWORD), 'the password is in no output');

    const kernel = createKernel({ config: loadConfig({ cwd: dir, env }), env });
    await assert.rejects(kernel.start(), (err: unknown) => {
      assert.ok(isHookgateError(err));
      const text = `${err.message} ${String((err as { cause?: unknown }).cause ?? '')} ${JSON.stringify(err.details)}`;
      assert.match(text, /QUEUE_UNAVAILABLE|cannot reach Redis/);
      assert.match(text, new RegExp(`redis://127\\.0\\.0\\.1:${port}/2`));
      assert.ok(!text.includes(PASSWORD));
      return true;
    });
  });

  it('a password in queue.redis.url is refused at load (it belongs in passwordEnv), naming the key', async () => {
    await config('execution: queue\nqueue:\n  redis: { url: "redis://:hunter2secret@127.0.0.1:6379" }\n');
    const run = await runHookgate(dir, ['worker']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /queue\.redis\.url: put the password in an environment variable and name it with queue\.redis\.passwordEnv/);
    assert.ok(!run.stderr.includes('hunter2secret'), 'the refused value is not echoed');
  });

  it('bad values are refused with the key and what was expected: execution, concurrency, prefix', async () => {
    for (const [yaml, message] of [
      ['execution: distributed\n', /execution: expected one of in-process, queue/],
      ['execution: queue\nqueue: { concurrency: 0 }\n', /queue\.concurrency: expected a whole number from 1 to 1,000/],
      ['execution: queue\nqueue: { prefix: "a:b" }\n', /queue\.prefix: expected a key prefix/],
      ['execution: queue\nqueue: { redis: { port: 70000 } }\n', /queue\.redis\.port: expected a whole number from 1 to 65,535/],
    ] as const) {
      await config(yaml);
      const run = await runHookgate(dir, ['worker']);
      assert.equal(run.code, 2, `${yaml}: ${run.stderr}`);
      assert.match(run.stderr, message);
    }
  });

  it('hookgate worker without execution: queue exits 2 and says what to set', async () => {
    const run = await runHookgate(dir, ['worker']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /set execution: queue/);
  });

  it('the shown address keeps the user name and database and drops the password; an unset passwordEnv is named, its value never', () => {
    const withUser = redisAddress(queueConfig({ redis: { url: 'rediss://app@redis.internal:6380/3', passwordEnv: 'PW' } }).redis, { PW: PASSWORD });
    assert.equal(withUser.shown, 'rediss://app@redis.internal:6380/3');
    assert.deepEqual({ ...withUser.options }, { host: 'redis.internal', port: 6380, username: 'app', db: 3, tls: {}, password: PASSWORD });
    const byHost = redisAddress(queueConfig({ redis: { host: '10.0.0.5', port: 6390 } }).redis, {});
    assert.equal(byHost.shown, 'redis://10.0.0.5:6390');
    assert.throws(() => redisAddress(queueConfig({ redis: { passwordEnv: 'HG_UNSET_PW' } }).redis, {}), /queue\.redis\.passwordEnv: the environment variable HG_UNSET_PW is not set/);
  });
});
