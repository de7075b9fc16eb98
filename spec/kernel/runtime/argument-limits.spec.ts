import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../../../kernel/model.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ModelProviders } from '../../../kernel/tokens.js';
import { MAX_ARGUMENT_DEPTH } from '../../../kernel/runtime/tool-call-identity.js';

/** Nested `levels` deep: { a: { a: ... { a: 'leaf' } } }, built without recursion. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 'leaf' };
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

/** A model that asks once for fs/writeFile with the given arguments, then answers. */
function oneCallModel(args: () => Record<string, unknown>): ModelProvider {
  return {
    name: 'one-call',
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
      if (request.turnIndex > 0) return { text: 'done', toolCalls: [], usage, finishReason: 'stop' };
      return { text: '', toolCalls: [{ id: 'x', identifier: 'fs', apiName: 'writeFile', args: args() }], usage, finishReason: 'tool_calls' };
    },
  };
}

/** Issue 9, item 14: arguments nested past the documented limit are refused before anything is stored. */
describe('runtime: tool-call argument limits', function () {
  this.timeout(20000);
  let dir: string;
  let kernel: Kernel | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-args-')));
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: () => Record<string, unknown>) {
    const model = oneCallModel(args);
    const plugin = definePlugin({ id: 'one-call-model', provides: [ModelProviders], register: (ctx) => ctx.bindValue(ModelProviders, model) });
    kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), plugins: [plugin], env: {} });
    await kernel.start();
    kernel.agents.define({ id: 'deep', model: { provider: 'one-call' }, tools: ['fs/*'] });
    const handle = await kernel.execAgent({ agentId: 'deep', prompt: 'go' });
    const final = await handle.completed();
    return { final, messages: await kernel.listMessages(handle.operationId) };
  }

  for (const levels of [MAX_ARGUMENT_DEPTH + 1, 100_000]) {
    it(`${levels} levels: the call is a tool error the model sees; the run goes on and what is stored reads back (SQLite)`, async () => {
      const { final, messages } = await run(() => ({ path: 'x.txt', content: 'x', extra: nested(levels) }));
      assert.equal(final.status, 'done');
      const call = messages.find((m) => m.toolCalls)!.toolCalls![0]!;
      assert.deepEqual(call.args, {}, 'the refused arguments are not stored');
      assert.match(call.argumentError!, new RegExp(`nest deeper than ${MAX_ARGUMENT_DEPTH} levels`));
      const tool = messages.find((m) => m.role === 'tool')!;
      assert.equal(tool.toolResult?.error, 'invalid_arguments');
      assert.match(tool.content, /nest deeper than/);
    });
  }

  it(`${MAX_ARGUMENT_DEPTH} levels are accepted (the limit is inclusive) and checked against the schema as usual`, async () => {
    const { messages } = await run(() => ({ path: 'ok.txt', content: 'fine', extra: nested(MAX_ARGUMENT_DEPTH - 1) }));
    const call = messages.find((m) => m.toolCalls)!.toolCalls![0]!;
    // Past the depth check, the schema decides (fs/writeFile takes no extra arguments).
    assert.equal(call.args.path, 'ok.txt');
    assert.match(call.argumentError!, /input schema of fs\/writeFile: args must NOT have additional properties/);
  });

  it('arguments that are not an object (an array) are refused the same way', async () => {
    const { messages } = await run(() => ['not', 'an', 'object'] as unknown as Record<string, unknown>);
    assert.equal(messages.find((m) => m.role === 'tool')!.toolResult?.error, 'invalid_arguments');
  });
});
