import { definePlugin } from '../../kernel/plugin.js';
import { HookgateConfigToken } from '../../config/config-token.js';
import { Config, Environment, Secrets, WebhookTransports } from '../../kernel/tokens.js';
import { QStashWebhookTransport } from './qstash-transport.js';

/**
 * Webhook delivery through Upstash QStash (`delivery: 'qstash'`); base URL and
 * token env var from `config.webhooks.qstash`, the token itself from the
 * kernel's environment (`createKernel({ env })`), read at every send.
 */
export default definePlugin({
  id: 'transport-qstash',
  description: 'Publishes webhooks through QStash with the official @upstash/qstash client',
  requires: [Config, Secrets, Environment],
  provides: [WebhookTransports],
  drivers: [{ kind: 'webhook-transport', name: 'qstash' }],
  register(ctx) {
    ctx.bindFactory(WebhookTransports, (c) => {
      const { qstash } = c.resolve(HookgateConfigToken).webhooks;
      return new QStashWebhookTransport({ baseUrl: qstash.url, tokenEnv: qstash.tokenEnv, env: c.resolve(Environment), scrubber: c.resolve(Secrets) });
    });
  },
});

export { QStashWebhookTransport } from './qstash-transport.js';
