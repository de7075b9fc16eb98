import 'reflect-metadata';
import assert from 'node:assert/strict';
import { container as rootContainer } from 'tsyringe';
import { withDefaults } from '../../../config/defaults.js';
import { createLogger } from '../../../kernel/logger.js';
import type { ModelProvider } from '../../../kernel/model.js';
import type { PluginContext } from '../../../kernel/plugin.js';
import type { Token } from '../../../kernel/token.js';
import { Config, Logger, ModelProviders } from '../../../kernel/tokens.js';
import modelOpenai, { OpenAiChatModel } from '../../../plugins/model-openai/index.js';
import { FakeOpenAiServer, finishChunk, sse, textChunk } from '../../helpers/fake-openai-server.js';

/** Just enough of a PluginContext to run register() and read what it bound. */
function contextWith(values: Map<symbol, unknown>): PluginContext & { bound: Array<{ token: Token<unknown>; make: () => unknown }> } {
  const bound: Array<{ token: Token<unknown>; make: () => unknown }> = [];
  const ctx = {
    container: rootContainer.createChildContainer(),
    pluginId: 'model-openai',
    settings: undefined,
    bound,
    resolve<T>(token: Token<T>): T {
      if (!values.has(token.key)) throw new Error(`not bound: ${token.id}`);
      return values.get(token.key) as T;
    },
    resolveAll: () => [],
    has: (token: Token<unknown>) => values.has(token.key),
    bindValue<T>(token: Token<T>, value: T) {
      bound.push({ token, make: () => value });
    },
    bindFactory<T>(token: Token<T>, factory: (c: PluginContext) => T) {
      bound.push({ token, make: () => factory(ctx) });
    },
  };
  return ctx;
}

describe('plugins/model-openai plugin', () => {
  it('is declared as model-openai, requiring Config and Logger and providing ModelProviders', () => {
    assert.equal(modelOpenai.id, 'model-openai');
    assert.deepEqual(modelOpenai.requires, [Config, Logger]);
    assert.deepEqual(modelOpenai.provides, [ModelProviders]);
  });

  it('binds a provider named "openai" that talks to models.openai.baseUrl with the configured model', async () => {
    const server = await FakeOpenAiServer.start();
    process.env.HOOKGATE_SPEC_PLUGIN_KEY = 'sk-plugin-spec-key';
    try {
      const config = withDefaults({ models: { openai: { baseUrl: server.baseUrl, apiKeyEnv: 'HOOKGATE_SPEC_PLUGIN_KEY', model: 'gpt-configured' } } }, process.cwd());
      const ctx = contextWith(new Map<symbol, unknown>([[Config.key, config], [Logger.key, createLogger({ level: 'silent' })]]));
      modelOpenai.register(ctx);
      assert.equal(ctx.bound.length, 1);
      assert.equal(ctx.bound[0]!.token, ModelProviders);
      const provider = ctx.bound[0]!.make() as ModelProvider;
      assert.ok(provider instanceof OpenAiChatModel);
      assert.equal(provider.name, 'openai');

      server.enqueue(sse([textChunk('hi'), finishChunk('stop')]));
      const res = await provider.complete({
        model: '',
        purpose: 'turn',
        messages: [{ role: 'user', content: 'hello' }],
        tools: [],
        signal: new AbortController().signal,
        operationId: 'op',
        turnIndex: 0,
      });
      assert.equal(res.text, 'hi');
      assert.equal(server.lastRequest.body.model, 'gpt-configured');
    } finally {
      delete process.env.HOOKGATE_SPEC_PLUGIN_KEY;
      await server.close();
    }
  });
});
