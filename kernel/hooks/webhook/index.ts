/**
 * The webhook delivery layer the HookDispatcher calls: strict config
 * validation, send-time header templates and URLs, payloads with email
 * enrichment, control response parsing, environment hooks, optional signing,
 * and the sender that ties them to the bound transports.
 */
export { validateWebhookConfig, isForbiddenHeaderName, isAppRelativeUrl, MAX_WEBHOOK_TIMEOUT_SECONDS } from './webhook-config.js';
export { resolveHeaders, findTemplateVariables, type TemplateEnvironment } from './header-templates.js';
export { resolveWebhookUrl, type WebhookUrlBases } from './resolve-webhook-url.js';
export { parseControlResponse, defaultDenyReason, MAX_CONTROL_RESPONSE_BYTES, type ControlResponse } from './control-response.js';
export { controlStep, HOOK_CONTROL_ERROR, type ControlStep } from './control-step.js';
export {
  createWebhookPayloadBuilder,
  trimResultForNotification,
  type WebhookPayloadBuilder,
  type WebhookPayloadBuilderOptions,
  type PayloadHook,
  type PayloadMode,
  type WebhookPayload,
} from './webhook-payload.js';
export { createEmailLookup, EMAIL_CACHE_SIZE, EMAIL_CACHE_TTL_MS, type EmailLookup } from './email-cache.js';
export { readEnvironmentHooks, isReservedEnvHookId, RESERVED_ENV_HOOK_PREFIX, ENV_HOOK_TOKEN_VARIABLE } from './environment-hooks.js';
export { signWebhook, verifyWebhookSignature, generateSigningSecret, decodeSigningSecret, DEFAULT_SIGNATURE_TOLERANCE_SECONDS, type SignatureCheck } from './signing.js';
export {
  WebhookSender,
  DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
  type WebhookSenderOptions,
  type SendableHook,
  type NotificationResult,
  type ControlOutcome,
} from './webhook-sender.js';
