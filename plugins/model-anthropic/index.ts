import { definePlugin } from '../../kernel/plugin.js';
import { HookgateConfigToken } from '../../config/config-token.js';
import { Config, Logger, ModelProviders, Secrets } from '../../kernel/tokens.js';
import { AnthropicMessagesModel } from './anthropic-messages-model.js';

export { AnthropicMessagesModel, type AnthropicMessagesModelOptions } from './anthropic-messages-model.js';
export { mapStopReason } from './message-assembler.js';

/**
 * Provides the `anthropic` model provider: the Anthropic Messages API on the
 * official `@anthropic-ai/sdk`, configured by `models.anthropic` (baseUrl,
 * apiKeyEnv, model, maxOutputTokens, timeoutSeconds, maxRetries). Binding
 * does no I/O and reads no key; the key is read from the environment on each
 * call, so a missing key fails that call only.
 */
export default definePlugin({
  id: 'model-anthropic',
  description: 'Anthropic Messages API on @anthropic-ai/sdk (streaming, tool use, retries, usage)',
  requires: [Config, Logger],
  optional: [Secrets],
  provides: [ModelProviders],
  drivers: [{ kind: 'model-provider', name: 'anthropic' }],
  register(ctx) {
    ctx.bindFactory(ModelProviders, (c) => {
      const { baseUrl, apiKeyEnv, model, maxOutputTokens, timeoutSeconds, maxRetries } = c.resolve(HookgateConfigToken).models.anthropic;
      return new AnthropicMessagesModel({
        baseUrl,
        apiKeyEnv,
        model,
        maxOutputTokens,
        timeoutSeconds,
        maxRetries,
        logger: c.resolve(Logger).child({ plugin: 'model-anthropic' }),
        secrets: c.has(Secrets) ? c.resolve(Secrets) : undefined,
      });
    });
  },
});
