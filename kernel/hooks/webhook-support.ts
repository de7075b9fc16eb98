import type { HookgateConfig } from '../../config/defaults.js';
import type { Logger, SecretScrubber } from '../logger.js';
import type { Store } from '../store.js';
import type { UserDirectory } from '../user-directory.js';
import type { WebhookSupport } from './hook-dispatcher.js';
import type { WebhookTransport } from './webhook-transport.js';
import { readEnvironmentHooks } from './webhook/environment-hooks.js';
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
  config: HookgateConfig;
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
  return {
    validate: validateWebhookConfig,
    sendNotification: (hook, event, signal) => sender.sendNotification(hook, event, signal),
    evaluateControl: (hook, event, signal) => sender.evaluateControl(hook, event, signal),
    environmentHooks: () => readEnvironmentHooks(env),
  };
}
