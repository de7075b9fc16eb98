import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/load-config.js';
import { isHookgateError } from '../../kernel/errors.js';

/** models.openai / models.anthropic: careless values are refused with the key and the range; a key never fits in the file. */
describe('config: the model provider sections', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-model-config-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const withFile = (yaml: string) => writeFile(path.join(dir, 'hookgate.config.yaml'), yaml);
  const load = (env: NodeJS.ProcessEnv = {}) => loadConfig({ cwd: dir, env });
  function refused(message: RegExp, env: NodeJS.ProcessEnv = {}): void {
    assert.throws(
      () => load(env),
      (err: unknown) => isHookgateError(err, 'CONFIG_INVALID') && message.test(err.message),
    );
  }

  for (const provider of ['openai', 'anthropic']) {
    for (const bad of ['-1', '11', '1.5', 'many']) {
      it(`refuses models.${provider}.maxRetries: ${bad}, naming the key and the range`, async () => {
        await withFile(`models:\n  ${provider}:\n    maxRetries: ${bad}\n`);
        refused(new RegExp(`models\\.${provider}\\.maxRetries: expected (a whole number from 0 to 10 \\(retries\\)|a number)`));
      });
    }

    it(`takes models.${provider}.maxRetries from its environment variable`, () => {
      const env = { [`HOOKGATE_MODELS__${provider.toUpperCase()}__MAX_RETRIES`]: '0' };
      assert.equal(load(env).models[provider as 'openai' | 'anthropic'].maxRetries, 0);
    });

    it(`refuses an API key written into models.${provider} (only the name of its variable goes in the file)`, async () => {
      await withFile(`models:\n  ${provider}:\n    apiKey: sk-do-not-store-me-0123\n`);
      assert.throws(
        () => load(),
        (err: unknown) => isHookgateError(err, 'CONFIG_INVALID') && /apiKey/.test(err.message) && !err.message.includes('sk-do-not-store-me-0123'),
      );
    });
  }

  it('refuses models.anthropic.maxOutputTokens outside 1 to 1,000,000', async () => {
    await withFile('models:\n  anthropic:\n    maxOutputTokens: 0\n');
    refused(/models\.anthropic\.maxOutputTokens: expected a whole number from 1 to 1,000,000 \(tokens\)/);
  });

  it('reads the whole models.anthropic section from the file', async () => {
    await withFile('models:\n  anthropic:\n    baseUrl: http://127.0.0.1:9/\n    apiKeyEnv: MY_KEY\n    model: claude-x\n    timeoutSeconds: 0\n    maxRetries: 5\n    maxOutputTokens: 8192\n');
    assert.deepEqual(load().models.anthropic, { baseUrl: 'http://127.0.0.1:9/', apiKeyEnv: 'MY_KEY', model: 'claude-x', timeoutSeconds: 0, maxRetries: 5, maxOutputTokens: 8192 });
  });
});
