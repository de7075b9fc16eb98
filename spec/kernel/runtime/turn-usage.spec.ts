import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { createLogger } from '../../../kernel/logger.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ToolSources } from '../../../kernel/tokens.js';
import * as anthropic from '../../helpers/fake-anthropic-server.js';
import * as openai from '../../helpers/fake-openai-server.js';
import { recordHooks, TestTools } from '../../helpers/runtime-fixtures.js';

const KEY_ENV = 'HOOKGATE_SPEC_TURN_USAGE_KEY';
const PRICING = { inputPerMillion: 3, outputPerMillion: 15 };
const costOf = (input: number, output: number) => (input * PRICING.inputPerMillion + output * PRICING.outputPerMillion) / 1_000_000;

/**
 * Every model turn's usage and cost, per turn, through the real providers on
 * loopback: the afterStep event of each call_llm step, its stored step
 * record, and the operation's total.
 */
describe('runtime: usage and cost per model turn (openai and anthropic over loopback)', () => {
  let dir: string;
  let kernel: Kernel | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-turn-usage-')));
    process.env[KEY_ENV] = 'sk-spec-turn-usage-0123456789';
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    delete process.env[KEY_ENV];
    await rm(dir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string>): Promise<Kernel> {
    const config = loadConfig({ cwd: dir, env: { HOOKGATE_STORE__DRIVER: 'memory', ...env } });
    const tools = new TestTools();
    const plugin = definePlugin({ id: 'turn-usage-tools', provides: [ToolSources], register: (ctx) => ctx.bindValue(ToolSources, tools) });
    kernel = createKernel({ config, plugins: [plugin], logger: createLogger({ level: 'silent' }), env: {} });
    await kernel.start();
    return kernel;
  }

  async function expectPerTurn(k: Kernel, provider: string, turns: Array<{ input: number; output: number }>): Promise<void> {
    k.agents.define({ id: 'priced', tools: ['test/*'], model: { provider, name: 'spec-model', pricing: PRICING } });
    const rec = recordHooks(['afterStep', 'onComplete']);
    const final = await (await k.execAgent({ agentId: 'priced', prompt: 'hi', hooks: rec.hooks })).completed();
    assert.equal(final.status, 'done', final.error?.message);

    const modelSteps = rec.of('afterStep').filter((e) => e.stepType === 'call_llm');
    assert.deepEqual(
      modelSteps.map((e) => e.usage),
      turns.map((t) => ({ promptTokens: t.input, completionTokens: t.output, totalTokens: t.input + t.output, cost: costOf(t.input, t.output) })),
    );
    const stored = (await k.listSteps(final.id)).filter((s) => s.kind === 'call_llm');
    assert.deepEqual(stored.map((s) => s.usage), modelSteps.map((e) => e.usage));
    const total = turns.reduce((sum, t) => sum + costOf(t.input, t.output), 0);
    assert.ok(Math.abs(rec.of('onComplete')[0]!.totalUsage.cost - total) < 1e-12);
    assert.equal(rec.of('onComplete')[0]!.totalUsage.promptTokens, turns.reduce((sum, t) => sum + t.input, 0));
  }

  it('openai: each turn carries its own tokens and cost from model.pricing', async () => {
    const server = await openai.FakeOpenAiServer.start();
    try {
      server.enqueue(
        openai.sse([openai.toolCallChunk(0, { id: 'call_1', name: 'test__echo', arguments: '{"x":1}' }), openai.finishChunk('tool_calls'), openai.usageChunk(1200, 40)]),
        openai.sse([openai.textChunk('done'), openai.finishChunk('stop'), openai.usageChunk(1300, 7)]),
      );
      const k = await start({ HOOKGATE_MODELS__OPENAI__BASE_URL: server.baseUrl, HOOKGATE_MODELS__OPENAI__API_KEY_ENV: KEY_ENV });
      await expectPerTurn(k, 'openai', [{ input: 1200, output: 40 }, { input: 1300, output: 7 }]);
    } finally {
      await server.close();
    }
  });

  it('anthropic: each turn carries its own tokens (cache reads included) and cost from model.pricing', async () => {
    const server = await anthropic.FakeAnthropicServer.start();
    try {
      server.enqueue(
        anthropic.stream([
          anthropic.messageStart(200, { read: 1000 }),
          anthropic.toolUseStart(0, 'toolu_1', 'test__echo'),
          anthropic.inputJsonDelta(0, '{"x":1}'),
          anthropic.blockStop(0),
          anthropic.messageDelta('tool_use', 40),
          anthropic.messageStop(),
        ]),
        anthropic.stream(anthropic.textAnswer('done', { input: 1300, output: 7 })),
      );
      const k = await start({ HOOKGATE_MODELS__ANTHROPIC__BASE_URL: server.baseUrl, HOOKGATE_MODELS__ANTHROPIC__API_KEY_ENV: KEY_ENV });
      await expectPerTurn(k, 'anthropic', [{ input: 1200, output: 40 }, { input: 1300, output: 7 }]);
    } finally {
      await server.close();
    }
  });
});
