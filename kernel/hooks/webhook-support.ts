import type { KernelConfig } from '../kernel-config.js';
import type { Logger, SecretScrubber } from '../logger.js';
import type { Store } from '../store.js';
import type { UserDirectory } from '../user-directory.js';
import type { WebhookSupport } from './hook-dispatcher.js';
import type { WebhookTransport } from './webhook-transport.js';
import { ENV_HOOK_TOKEN_VARIABLE, readEnvironmentHooks } from './webhook/environment-hooks.js';
import type { SerializedHook } from './hook-types.js';

/** The variables environment hooks are made from (the token only matters as set or blank: its value is resolved at send time). */
const ENV_HOOK_VARIABLES = ['AGENT_HOOK_WEBHOOK_URL', 'AGENT_HOOK_WEBHOOK_TOKEN', 'AGENT_HOOK_WEBHOOK_EVENTS', 'AGENT_HOOK_WEBHOOK_RESPONSE_HANDLING', 'AGENT_HOOK_WEBHOOK_ON_ERROR'];
import { validateWebhookConfig } from './webhook/webhook-config.js';
import { createWebhookPayloadBuilder } from './webhook/webhook-payload.js';
import { WebhookSender } from './webhook/webhook-sender.js';

/** A user directory over the store's users table (the embedded default). */
export function storeUserDirectory(store: Store): UserDirectory {
  return { getEmail: async (userId) => (await store.getUser(userId))?.email };
}

/**
 * Assembles webhook delivery for one dispatcher: strict config validation,
 * a payload builder with its own email cache, the sender over the bound
 * transports, and environment hooks read from the current environment at
 * every evaluation.
 */
export function createWebhookSupport(options: {
  config: Pick<KernelConfig, 'webhooks'>;
  transports: readonly WebhookTransport[];
  userDirectory?: UserDirectory;
  logger: Logger;
  scrubber: SecretScrubber;
  env?: NodeJS.ProcessEnv;
}): WebhookSupport {
  const env = options.env ?? process.env;
  const payloadBuilder = createWebhookPayloadBuilder({ userDirectory: options.userDirectory, logger: options.logger });
  const signingEnv = options.config.webhooks.signing.secretEnv;
  const sender = new WebhookSender({
    transports: options.transports,
    payloadBuilder,
    logger: options.logger,
    scrubber: options.scrubber,
    env,
    urlBases: { internalBaseUrl: options.config.webhooks.internalBaseUrl, publicBaseUrl: options.config.webhooks.publicBaseUrl },
    signingSecret: signingEnv ? () => env[signingEnv] : undefined,
  });
  // Read at every evaluation (never frozen), parsed again only when the variables change.
  let cachedKey: string | undefined;
  let cached: SerializedHook[] = [];
  const environmentHooks = (e: NodeJS.ProcessEnv): SerializedHook[] => {
    if (!e.AGENT_HOOK_WEBHOOK_URL) return [];
    // Registered before any send, so a caller control echoing the environment token is scrubbed too.
    const token = e[ENV_HOOK_TOKEN_VARIABLE];
    if (token) options.scrubber.add(token);
    const key = ENV_HOOK_VARIABLES.map((name) => (name === 'AGENT_HOOK_WEBHOOK_TOKEN' ? String(Boolean(e[name]?.trim())) : (e[name] ?? ''))).join('\u0000');
    if (key !== cachedKey) {
      cached = readEnvironmentHooks(e);
      cachedKey = key;
    }
    return cached;
  };
  return {
    validate: validateWebhookConfig,
    sendNotification: (hook, event, signal) => sender.sendNotification(hook, event, signal),
    evaluateControl: (hook, event, signal) => sender.evaluateControl(hook, event, signal),
    environmentHooks: () => environmentHooks(env),
  };
}
