/** The kernel's public surface: what plugins and embedding code import (re-exported by the package root). */
export { Kernel, type KernelOptions } from './kernel.js';
export type { OperationHandle } from './operation-handle.js';
export { definePlugin, PLUGIN_ID_PATTERN, type Plugin, type PluginContext, type PluginDefinition, type PluginState } from './plugin.js';
export type { PluginStatus } from './plugin-host.js';
export { createToken, type Token } from './token.js';
/** Every service token, as one namespace (`tokens.ToolSources`); each is also exported by name. */
export * as tokens from './tokens.js';
export { Config, Logger, Secrets, Environment, Store, ModelProviders, ToolSources, WebhookTransports, UserDirectory, ToolPolicies } from './tokens.js';
export { HookgateError, CriticalHookDeliveryError, isHookgateError, errorMessage } from './errors.js';
export { ERROR_CATALOG, type ErrorCode, type ErrorCategory } from './error-catalog.js';
export { createLogger, SecretScrubber, type LogLevel, type LogRecord } from './logger.js';
export { HookDispatcher, type WebhookSupport, type MockOutcome, type DeliveryMode } from './hooks/hook-dispatcher.js';
export { buildToolCallHookContext } from './hooks/tool-call-context.js';
export * from './hooks/hook-types.js';
export { createWebhookPayloadBuilder } from './hooks/webhook/webhook-payload.js';
export { signWebhook, verifyWebhookSignature, generateSigningSecret } from './hooks/webhook/signing.js';
export type { AgentDefinition } from './agent-definition.js';
export { AgentRegistry } from './runtime/agent-registry.js';
export type { ExecAgentOptions, HumanDecision } from './runtime/agent-runtime.js';
export { OperationEvents, type OperationEvent, type OperationEventOf } from './runtime/operation-events.js';
export type * from './store.js';
export { TERMINAL_STATUSES } from './store.js';
export type * from './model.js';
export type * from './tools.js';
export type * from './messages.js';
export type { ToolPolicy, ToolPolicyDecision } from './tool-policy.js';
export type { WebhookTransport, WebhookRequest, WebhookResponse } from './hooks/webhook-transport.js';
