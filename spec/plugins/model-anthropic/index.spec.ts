import 'reflect-metadata';
import assert from 'node:assert/strict';
import { container as rootContainer } from 'tsyringe';
import { withDefaults } from '../../../config/defaults.js';
import { createLogger } from '../../../kernel/logger.js';
import type { ModelProvider } from '../../../kernel/model.js';
import type { PluginContext } from '../../../kernel/plugin.js';
import type { Token } from '../../../kernel/token.js';
import { Config, Logger, ModelProviders } from '../../../kernel/tokens.js';
import { BUNDLED_PLUGINS } from '../../../plugins/catalog.js';
import modelAnthropic, { AnthropicMessagesModel } from '../../../plugins/model-anthropic/index.js';
import { FakeAnthropicServer, stream, textAnswer } from '../../helpers/fake-anthropic-server.js';

function contextWith(values: Map<symbol, unknown>): PluginContext & { bound: Array<{ token: Token<unknown>; make: () => unknown }> } {
  const bound: Array<{ token: Token<unknown>; make: () => unknown }> = [];
  const ctx = {
    container: rootContainer.createChildContainer(),
    pluginId: 'model-anthropic',
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

describe('plugins/model-anthropic plugin', () => {
  it('is declared as model-anthropic, requiring Config and Logger, providing ModelProviders, and ships in the catalog', () => {
    assert.equal(modelAnthropic.id, 'model-anthropic');
    assert.deepEqual(modelAnthropic.requires, [Config, Logger]);
    assert.deepEqual(modelAnthropic.provides, [ModelProviders]);
    assert.ok(BUNDLED_PLUGINS.includes(modelAnthropic));
  });

  it('defaults models.anthropic to api.anthropic.com, ANTHROPIC_API_KEY, 4096 max tokens, 120 s and 2 retries', () => {
    const config = withDefaults({}, process.cwd());
    assert.deepEqual(config.models.anthropic, { baseUrl: 'https://api.anthropic.com', apiKeyEnv: 'ANTHROPIC_API_KEY', model: undefined, timeoutSeconds: 120, maxRetries: 2, maxOutputTokens: 4096 });
  });

  it('binds a provider named "anthropic" that talks to models.anthropic.baseUrl with the configured model and max tokens', async () => {
    const server = await FakeAnthropicServer.start();
    process.env.HOOKGATE_SPEC_ANTHROPIC_PLUGIN_KEY = 'sk-ant-plugin-spec-key';
    try {
      const config = withDefaults(
        { models: { anthropic: { baseUrl: server.baseUrl, apiKeyEnv: 'HOOKGATE_SPEC_ANTHROPIC_PLUGIN_KEY', model: 'claude-configured', maxOutputTokens: 321 } } },
        process.cwd(),
      );
      const ctx = contextWith(new Map<symbol, unknown>([[Config.key, config], [Logger.key, createLogger({ level: 'silent' })]]));
      modelAnthropic.register(ctx);
      assert.equal(ctx.bound.length, 1);
      const provider = ctx.bound[0]!.make() as ModelProvider;
      assert.ok(provider instanceof AnthropicMessagesModel);
      assert.equal(provider.name, 'anthropic');

      server.enqueue(stream(textAnswer('hi')));
      const res = await provider.complete({ model: '', purpose: 'turn', messages: [{ role: 'user', content: 'hello' }], tools: [], signal: new AbortController().signal, operationId: 'op', turnIndex: 0 });
      assert.equal(res.text, 'hi');
      assert.equal(server.lastRequest.body.model, 'claude-configured');
      assert.equal(server.lastRequest.body.max_tokens, 321);
    } finally {
      delete process.env.HOOKGATE_SPEC_ANTHROPIC_PLUGIN_KEY;
      await server.close();
    }
  });
});
