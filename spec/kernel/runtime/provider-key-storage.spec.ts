import assert from 'node:assert/strict';
import { readdir, readFile, mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { createLogger } from '../../../kernel/logger.js';
import * as anthropic from '../../helpers/fake-anthropic-server.js';
import * as openai from '../../helpers/fake-openai-server.js';

const KEY_ENV = 'HOOKGATE_SPEC_KEY_STORAGE';
const KEY = 'sk-spec-never-stored-7f3a9c2e51';

/**
 * A hosted API that echoes the key back in its error: the failed operation is
 * stored (SQLite file), logged and reported, and the key is in none of them.
 */
describe('runtime: a model provider\'s API key reaches no log, error or stored row', () => {
  let dir: string;
  let kernel: Kernel | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-key-storage-')));
    process.env[KEY_ENV] = KEY;
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    delete process.env[KEY_ENV];
    await rm(dir, { recursive: true, force: true });
  });

  async function runFailing(provider: string, env: Record<string, string>): Promise<{ logs: string; error: string }> {
    const lines: string[] = [];
    const config = loadConfig({ cwd: dir, env });
    kernel = createKernel({ config, logger: createLogger({ level: 'debug', sink: (line) => lines.push(line) }), env: {} });
    await kernel.start();
    kernel.agents.define({ id: 'a', model: { provider, name: 'spec-model' } });
    const final = await (await kernel.execAgent({ agentId: 'a', prompt: 'hi' })).completed();
    assert.equal(final.status, 'error');
    const stored = JSON.stringify({ op: await kernel.store.getOperation(final.id), steps: await kernel.listSteps(final.id), messages: await kernel.listMessages(final.id) });
    await kernel.stop();
    kernel = undefined;
    return { logs: lines.join('\n') + stored, error: JSON.stringify(final.error) };
  }

  async function filesHolding(text: string): Promise<string[]> {
    const found: string[] = [];
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    assert.ok(entries.some((e) => e.isFile() && e.name.endsWith('.db')), 'the operation went to a SQLite file');
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name);
      if ((await readFile(file)).includes(Buffer.from(text))) found.push(file);
    }
    return found;
  }

  it('openai: a 401 that echoes the key', async () => {
    const server = await openai.FakeOpenAiServer.start();
    try {
      server.enqueue(openai.json(openai.errorBody(`Incorrect API key provided: ${KEY}`, 'invalid_request_error', 'invalid_api_key'), 401));
      const { logs, error } = await runFailing('openai', { HOOKGATE_MODELS__OPENAI__BASE_URL: server.baseUrl, HOOKGATE_MODELS__OPENAI__API_KEY_ENV: KEY_ENV });
      assert.match(error, /401/);
      assert.equal(error.includes(KEY), false, 'error');
      assert.equal(logs.includes(KEY), false, 'logs and stored records');
      assert.deepEqual(await filesHolding(KEY), [], 'the SQLite files');
      assert.equal(server.lastRequest.headers.authorization, `Bearer ${KEY}`, 'the key did go to the endpoint');
    } finally {
      await server.close();
    }
  });

  it('anthropic: a 401 that echoes the key', async () => {
    const server = await anthropic.FakeAnthropicServer.start();
    try {
      server.enqueue(anthropic.json(anthropic.errorBody('authentication_error', `invalid x-api-key: ${KEY}`), 401));
      const { logs, error } = await runFailing('anthropic', { HOOKGATE_MODELS__ANTHROPIC__BASE_URL: server.baseUrl, HOOKGATE_MODELS__ANTHROPIC__API_KEY_ENV: KEY_ENV });
      assert.match(error, /401/);
      assert.equal(error.includes(KEY), false, 'error');
      assert.equal(logs.includes(KEY), false, 'logs and stored records');
      assert.deepEqual(await filesHolding(KEY), [], 'the SQLite files');
    } finally {
      await server.close();
    }
  });
});
