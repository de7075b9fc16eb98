import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runHookgate } from '../../helpers/cli-process.js';

/**
 * Attack (review): the config check refuses a password written into
 * queue.redis.url, but its pattern stopped at the first "/" or "@", so a
 * password holding a "/" slipped through, and the URL parser later failed
 * with a bare "Invalid URL" whose error carries the whole URL, password
 * included. Every URL with user info holding a ":" must be refused at load,
 * naming the key and never echoing the value; a URL the parser cannot read
 * must be refused at load too, with what was wrong.
 */
describe('execution-queue attack: a password hidden in queue.redis.url', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-url-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  for (const [what, url, secret] of [
    ['a "/" in the password, no user', 'redis://:pa/ss-Xq7-hidden@127.0.0.1:6379', 'ss-Xq7-hidden'],
    ['a "/" in the password after a user name', 'rediss://app:k3y/Zr9-hidden@127.0.0.1:6379/0', 'Zr9-hidden'],
    ['a "?" in the password', 'redis://app:k3y?Zr9-hidden@127.0.0.1:6379/0', 'Zr9-hidden'],
    ['a "#" in the password', 'redis://app:k3y#Zr9-hidden@127.0.0.1:6379/0', 'Zr9-hidden'],
    ['a space in the password', 'redis://app:k3y Zr9-hidden@127.0.0.1:6379/0', 'Zr9-hidden'],
  ] as const) {
    it(`${what}: refused at load (exit 2) naming queue.redis.url, the password in no output`, async () => {
      await writeFile(path.join(dir, 'hookgate.config.yaml'), `execution: queue\nqueue:\n  redis: { url: "${url}" }\n`);
      const run = await runHookgate(dir, ['worker']);
      assert.equal(run.code, 2, `exit ${run.code}: ${run.stderr}`);
      assert.match(run.stderr, /queue\.redis\.url: /);
      assert.ok(!(run.stderr + run.stdout).includes(secret), `the password reached the output: ${run.stderr}`);
    });
  }

  it('a URL the parser cannot read is refused at load naming the key, not a bare "Invalid URL" at start', async () => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'execution: queue\nqueue:\n  redis: { url: "redis://host:port-is-words/0" }\n');
    const run = await runHookgate(dir, ['worker']);
    assert.equal(run.code, 2, `exit ${run.code}: ${run.stderr}`);
    assert.match(run.stderr, /queue\.redis\.url: /);
  });
});
