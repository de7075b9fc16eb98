import { definePlugin } from '../../kernel/plugin.js';
import { HookgateConfigToken } from '../../config/config-token.js';
import { Config, Logger, ModelProviders, Secrets } from '../../kernel/tokens.js';
import { OpenAiChatModel } from './openai-chat-model.js';

export { OpenAiChatModel, type OpenAiChatModelOptions } from './openai-chat-model.js';
export { toFunctionName, ToolNameMap } from '../../kernel/model-tool-names.js';

/**
 * Provides the `openai` model provider: any OpenAI-compatible Chat Completions
 * endpoint, on the official `openai` SDK, configured by `models.openai`
 * (baseUrl, apiKeyEnv, model, timeoutSeconds, maxRetries). Binding does no
 * I/O and reads no key; the key is read from the environment on each call, so
 * a missing key fails that call only.
 */
export default definePlugin({
  id: 'model-openai',
  description: 'OpenAI-compatible chat completions on the openai SDK (streaming, tool calls, retries, usage)',
  requires: [Config, Logger],
  optional: [Secrets],
  provides: [ModelProviders],
  drivers: [{ kind: 'model-provider', name: 'openai' }],
  register(ctx) {
    ctx.bindFactory(ModelProviders, (c) => {
      const { baseUrl, apiKeyEnv, model, timeoutSeconds, maxRetries } = c.resolve(HookgateConfigToken).models.openai;
      return new OpenAiChatModel({
        baseUrl,
        apiKeyEnv,
        model,
        timeoutSeconds,
        maxRetries,
        logger: c.resolve(Logger).child({ plugin: 'model-openai' }),
        secrets: c.has(Secrets) ? c.resolve(Secrets) : undefined,
      });
    });
  },
});
