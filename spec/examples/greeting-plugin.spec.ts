import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import greetingPlugin from '../../examples/plugins/greeting-tools/index.js';
import { createKernel, loadConfig, type Kernel } from '../../index.js';

describe('README plugin example: greeting-tools', () => {
  let dir: string;
  let kernel: Kernel;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hookgate-greeting-'));
    kernel = createKernel({ config: loadConfig({ cwd: dir, env: { HOOKGATE_STORE__DRIVER: 'memory' } }), plugins: [greetingPlugin] });
    await kernel.start();
  });
  afterEach(async () => {
    await kernel.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('starts next to the plugins the config selects', () => {
    assert.equal(kernel.plugins().find((p) => p.id === 'greeting-tools')?.state, 'started');
  });

  it('gives an agent the greet/hello tool, whose result is stored with the run', async () => {
    kernel.agents.define({
      id: 'greeter',
      model: {
        provider: 'scripted',
        turns: [{ toolCalls: [{ identifier: 'greet', apiName: 'hello', args: { name: 'Ada' } }] }, { text: 'I greeted Ada.' }],
      },
      tools: ['greet/*'],
    });
    const handle = await kernel.execAgent({ agentId: 'greeter', prompt: 'Say hello to Ada.' });
    const op = await handle.completed();
    assert.equal(op.reason, 'done');

    const messages = await kernel.listMessages(handle.operationId);
    const result = messages.find((m) => m.role === 'tool');
    assert.equal(result?.content, 'Hello, Ada!');
    assert.equal(result?.toolResult?.success, true);
    assert.equal(messages.at(-1)?.content, 'I greeted Ada.');
  });
});
