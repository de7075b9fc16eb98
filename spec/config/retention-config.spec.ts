import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/load-config.js';
import { durationMs } from '../../config/retention-schema.js';
import { isHookgateError } from '../../kernel/errors.js';

describe('config: retention', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-retention-config-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const load = async (yaml: string, env: NodeJS.ProcessEnv = {}) => {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), yaml);
    return loadConfig({ cwd: dir, env });
  };
  async function refused(yaml: string, message: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
    await assert.rejects(load(yaml, env), (err: unknown) => {
      assert.ok(isHookgateError(err, 'CONFIG_INVALID'), String(err));
      assert.equal(err.message, message);
      return true;
    });
  }

  it('prunes nothing by default: an empty policy, a pass every hour', async () => {
    assert.deepEqual((await load('{}\n')).retention, { policy: {}, intervalMs: 3_600_000 });
  });

  it('reads durations and counts; an agent entry replaces the defaults key by key, `unlimited` lifts one', async () => {
    const config = await load(`retention:
  maxAge: 30d
  maxOperations: 10000
  agents:
    support: { maxAge: 7d }
    archive: { maxAge: unlimited, maxOperations: unlimited }
  decisionLog: { maxAge: 2w, maxEntries: 1000000 }
  interval: 15m
`);
    assert.deepEqual(config.retention, {
      policy: {
        maxAgeMs: 30 * 86_400_000,
        maxOperations: 10_000,
        agents: { support: { maxAgeMs: 7 * 86_400_000, maxOperations: 10_000 }, archive: {} },
        decisionLog: { maxAgeMs: 14 * 86_400_000, maxEntries: 1_000_000 },
      },
      intervalMs: 15 * 60_000,
    });
  });

  it('takes the keys from HOOKGATE_RETENTION__* variables', async () => {
    const config = await load('{}\n', { HOOKGATE_RETENTION__MAX_AGE: '12h', HOOKGATE_RETENTION__DECISION_LOG__MAX_ENTRIES: '500' });
    assert.deepEqual(config.retention.policy, { maxAgeMs: 12 * 3_600_000, decisionLog: { maxEntries: 500 } });
  });

  it('knows the units s, m, h, d and w, and nothing else', () => {
    assert.deepEqual(['90s', '15m', '12h', '30d', '2w'].map(durationMs), [90_000, 900_000, 43_200_000, 2_592_000_000, 1_209_600_000]);
    for (const bad of ['30', '1.5d', '30 d', '-1d', '1y', 'd', '']) assert.equal(durationMs(bad), undefined, bad);
  });

  const AGE = 'expected a duration such as 30d, 12h, 15m or 90s (1 second to 100 years), or unlimited';
  const COUNT = 'expected a whole number from 1 to 1,000,000,000 (operations), or unlimited';

  it('refuses a bad value naming the key, the range and what it got', async () => {
    await refused('retention: { maxAge: 30 }\n', `hookgate.config.yaml: retention.maxAge: ${AGE}, got 30`);
    await refused('retention: { maxAge: 0s }\n', `hookgate.config.yaml: retention.maxAge: ${AGE}, got "0s"`);
    await refused('retention: { maxAge: 200000w }\n', `hookgate.config.yaml: retention.maxAge: ${AGE}, got "200000w"`);
    await refused('retention: { maxOperations: 0 }\n', `hookgate.config.yaml: retention.maxOperations: ${COUNT}, got 0`);
    await refused('retention: { maxOperations: 2.5 }\n', `hookgate.config.yaml: retention.maxOperations: ${COUNT}, got 2.5`);
    await refused('retention: { agents: { bot: { maxOperations: -1 } } }\n', `hookgate.config.yaml: retention.agents.bot.maxOperations: ${COUNT}, got -1`);
    await refused('retention: { decisionLog: { maxEntries: lots } }\n',
      'hookgate.config.yaml: retention.decisionLog.maxEntries: expected a whole number from 1 to 1,000,000,000 (decisions), or unlimited, got "lots"');
    await refused('retention: { interval: 0s }\n', 'hookgate.config.yaml: retention.interval: expected a duration such as 30d, 12h, 15m or 90s (1 second to 7 days), got "0s"');
    await refused('retention: { maxAge: 30d, keep: forever }\n', 'hookgate.config.yaml: retention.keep: unknown key');
    await refused('retention: { agents: { bot: { maxEntries: 5 } } }\n', 'hookgate.config.yaml: retention.agents.bot.maxEntries: unknown key');
  });

  it('names the environment variable that held the bad value', async () => {
    await refused('{}\n', `HOOKGATE_RETENTION__MAX_OPERATIONS: retention.maxOperations: ${COUNT}, got "none"`, { HOOKGATE_RETENTION__MAX_OPERATIONS: 'none' });
  });
});
