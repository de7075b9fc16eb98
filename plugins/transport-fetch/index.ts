import { definePlugin } from '../../kernel/plugin.js';
import { WebhookTransports } from '../../kernel/tokens.js';
import { FetchWebhookTransport } from './fetch-transport.js';

/** Webhook delivery with Node's built-in fetch (`delivery: 'fetch'`, also the QStash fallback). */
export default definePlugin({
  id: 'transport-fetch',
  description: 'Delivers webhooks as one JSON POST with fetch: no redirects, no retries',
  provides: [WebhookTransports],
  drivers: [{ kind: 'webhook-transport', name: 'fetch' }],
  register(ctx) {
    ctx.bindValue(WebhookTransports, new FetchWebhookTransport());
  },
});

export { FetchWebhookTransport } from './fetch-transport.js';
