import type { HookgateConfig } from '../config/defaults.js';
import type { Logger as LoggerContract, SecretScrubber } from './logger.js';
import type { Store as StoreContract } from './store.js';
import type { ModelProvider } from './model.js';
import type { ToolSource } from './tools.js';
import { createToken } from './token.js';
import type { WebhookTransport } from './hooks/webhook-transport.js';
import type { UserDirectory as UserDirectoryContract } from './user-directory.js';
import type { ToolPolicy } from './tool-policy.js';

/** Bound by the kernel itself. */
export const Config = createToken<HookgateConfig>('kernel.config');
export const Logger = createToken<LoggerContract>('kernel.logger');
export const Secrets = createToken<SecretScrubber>('kernel.secrets');
/** The kernel's environment (`createKernel({ env })`, default `process.env`): plugins read variables here, read at use time. */
export const Environment = createToken<Readonly<Record<string, string | undefined>>>('kernel.env');

/** Provided by plugins. */
export const Store = createToken<StoreContract>('store');
export const ModelProviders = createToken<ModelProvider>('model-provider', { multi: true });
export const ToolSources = createToken<ToolSource>('tool-source', { multi: true });
export const WebhookTransports = createToken<WebhookTransport>('webhook-transport', { multi: true });
export const UserDirectory = createToken<UserDirectoryContract>('user-directory');
/** In-process tool policies (the policy engine), asked before webhook controls. */
export const ToolPolicies = createToken<ToolPolicy>('tool-policy', { multi: true });
