import { errorMessage, isHookgateError } from '../../errors.js';
import type { Logger, SecretScrubber } from '../../logger.js';
import type { HookType, WebhookConfig } from '../hook-types.js';
import type { WebhookFailureKind, WebhookRequest, WebhookResponse, WebhookTransport } from '../webhook-transport.js';
import { MAX_CONTROL_RESPONSE_BYTES, parseControlResponse } from './control-response.js';
import { resolveHeaders, type TemplateEnvironment } from './header-templates.js';
import { resolveWebhookUrl, type WebhookUrlBases } from './resolve-webhook-url.js';
import { signWebhook } from './signing.js';
import type { WebhookPayloadBuilder } from './webhook-payload.js';

/** Default webhook timeout in seconds. */
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 30;

/** The parts of a hook the sender needs (a `SerializedHook` or an `AgentHook` with a webhook). */
export interface SendableHook {
  id: string;
  type: HookType;
  webhook: WebhookConfig;
}

/** How a notification went. `critical` is true only for `fallback: 'none'` failures (never for a cancellation). */
export type NotificationResult = { ok: true } | { ok: false; kind: WebhookFailureKind; critical: boolean; status?: number; message: string };

/**
 * What one control webhook decided. `error` follows the hook's `onError`;
 * `notification` means "no decision, check the next control"; `cancelled`
 * is never permission.
 */
export type ControlOutcome =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string }
  | { kind: 'notification' }
  | { kind: 'error'; reason: string }
  | { kind: 'cancelled' };

export interface WebhookSenderOptions {
  /** Every bound transport; picked by `delivery`. `fetch` is needed for controls and the QStash fallback. */
  transports: readonly WebhookTransport[];
  payloadBuilder: WebhookPayloadBuilder;
  logger: Logger;
  /** Resolved header values and the signing secret are registered here. */
  scrubber: SecretScrubber;
  /** Read at every send (templates resolve from its current values); default `process.env`. */
  env?: TemplateEnvironment;
  /** `config.webhooks` bases for app-relative URLs. */
  urlBases: WebhookUrlBases;
  /** A `whsec_` secret, or a function read at every send; when set, requests carry Standard Webhooks signature headers. */
  signingSecret?: string | (() => string | undefined);
}

type Prepared = { ok: true; request: Omit<WebhookRequest, 'readResponse' | 'maxResponseBytes'> } | { ok: false; kind: 'configuration' | 'cancelled'; message: string };

/**
 * Sends one hook's webhook: builds the payload, resolves the URL and header
 * templates at send time, signs when configured, and hands the request to the
 * transport named by `delivery`. The HookDispatcher decides which hooks run
 * and in what order; this class handles one hook at a time.
 *
 * Neither method rejects: every failure comes back as a value and is logged
 * here (hook id, type, failure kind and status only: never headers, secrets or
 * the payload).
 */
export class WebhookSender {
  private readonly env: TemplateEnvironment;

  constructor(private readonly options: WebhookSenderOptions) {
    this.env = options.env ?? process.env;
  }

  /**
   * Delivers a notification (response content ignored; any 2xx is success).
   * Awaits the delivery, bounded by the hook's timeout (default 30 s).
   *
   * `delivery: 'qstash'` publishes through the QStash transport; if that
   * fails and `fallback` is not `'none'` (the default for QStash is
   * `'fetch'`), the same request is sent once with fetch and the fallback is
   * logged. A failure with `fallback: 'none'` is returned with
   * `critical: true`, so the dispatcher can raise `CriticalHookDeliveryError`
   * after the sibling hooks ran. An aborted `signal` gives `kind: 'cancelled'`.
   */
  async sendNotification(hook: SendableHook, event: object, signal?: AbortSignal): Promise<NotificationResult> {
    const critical = hook.webhook.fallback === 'none';
    const prepared = await this.prepare(hook, event, 'notification', signal);
    if (!prepared.ok) return this.notificationFailure(hook, { ok: false, kind: prepared.kind, message: prepared.message }, critical);
    const request: WebhookRequest = { ...prepared.request, readResponse: false, maxResponseBytes: 0 };

    const delivery = hook.webhook.delivery ?? 'fetch';
    let response = await this.transmit(delivery, request);
    if (!response.ok && delivery === 'qstash' && response.kind !== 'cancelled' && !critical) {
      this.options.logger.warn('QStash delivery failed; falling back to fetch once', {
        hookId: hook.id,
        hookType: hook.type,
        kind: response.kind,
        ...(response.status === undefined ? {} : { status: response.status }),
      });
      response = await this.transmit('fetch', request);
    }
    if (response.ok) return { ok: true };
    return this.notificationFailure(hook, response, critical);
  }

  /**
   * Asks a control webhook (`responseHandling: 'toolCall'`) about a tool call
   * or its result. Always fetch; the payload is the whole event (afterToolCall:
   * the untrimmed result) plus `hookId`, `hookType` and the looked-up
   * `userEmail`. The response body is read up to 65,536 bytes and parsed by
   * `parseControlResponse`.
   *
   * Already aborted, aborted while the email was looked up, or aborted after
   * the response arrived: `cancelled` (the tool must not run). A deny's
   * reason comes back with every registered secret (resolved header values,
   * the signing secret, the environment hook token) and its common encodings
   * replaced with `[redacted]`. A bad URL,
   * header template or missing transport is an `error`, like a non-2xx,
   * timeout or network failure; the caller applies `onError`.
   */
  async evaluateControl(hook: SendableHook, event: object, signal?: AbortSignal): Promise<ControlOutcome> {
    if (signal?.aborted) return { kind: 'cancelled' };
    const prepared = await this.prepare(hook, event, 'control', signal);
    if (!prepared.ok) {
      if (prepared.kind === 'cancelled') return { kind: 'cancelled' };
      return this.controlError(hook, `configuration: ${prepared.message}`);
    }
    const response = await this.transmit('fetch', { ...prepared.request, readResponse: true, maxResponseBytes: MAX_CONTROL_RESPONSE_BYTES });
    if (signal?.aborted || (!response.ok && response.kind === 'cancelled')) return { kind: 'cancelled' };
    const outcome = parseControlResponse(response, hook.type);
    if (outcome.kind === 'error') return this.controlError(hook, outcome.reason);
    // The reason becomes the tool result (stored, shown, read by the model): a receiver that
    // echoes the credentials it was sent must not get them recorded.
    if (outcome.kind === 'deny') return { kind: 'deny', reason: this.options.scrubber.scrub(outcome.reason) };
    return outcome;
  }

  private async prepare(hook: SendableHook, event: object, mode: 'notification' | 'control', signal?: AbortSignal): Promise<Prepared> {
    if (signal?.aborted) return { ok: false, kind: 'cancelled', message: 'cancelled before sending' };
    let url: string;
    let headers: Record<string, string>;
    try {
      url = resolveWebhookUrl(hook.webhook.url, this.options.urlBases);
      headers = resolveHeaders(hook.webhook, this.env, this.options.scrubber);
    } catch (err) {
      if (isHookgateError(err, 'WEBHOOK_CONFIG_INVALID')) return { ok: false, kind: 'configuration', message: err.message };
      throw err;
    }
    const payload = await this.options.payloadBuilder.build(hook, event, mode, { signal });
    if (payload === undefined) return { ok: false, kind: 'cancelled', message: 'cancelled while building the payload' };
    const body = JSON.stringify(payload);
    const secret = typeof this.options.signingSecret === 'function' ? this.options.signingSecret() : this.options.signingSecret;
    if (secret) {
      this.options.scrubber.add(secret);
      try {
        headers = { ...headers, ...signWebhook(secret, body) };
      } catch (err) {
        return { ok: false, kind: 'configuration', message: errorMessage(err) };
      }
    }
    const timeoutMs = Math.round((hook.webhook.timeout ?? DEFAULT_WEBHOOK_TIMEOUT_SECONDS) * 1000);
    return { ok: true, request: { url, headers, body, timeoutMs, signal } };
  }

  private async transmit(delivery: 'fetch' | 'qstash', request: WebhookRequest): Promise<WebhookResponse> {
    const transport = this.options.transports.find((t) => t.delivery === delivery);
    if (!transport) return { ok: false, kind: 'configuration', message: `no ${delivery} webhook transport is installed` };
    try {
      return await transport.send(request);
    } catch {
      // Transports report failures as values; a throw is a transport bug, and its text may not be safe to show.
      return { ok: false, kind: 'network_error', message: `the ${delivery} transport failed unexpectedly` };
    }
  }

  private notificationFailure(hook: SendableHook, response: WebhookResponse & { ok: false }, critical: boolean): NotificationResult {
    const isCritical = critical && response.kind !== 'cancelled';
    if (response.kind !== 'cancelled') {
      this.options.logger.warn('webhook delivery failed', {
        hookId: hook.id,
        hookType: hook.type,
        kind: response.kind,
        ...(response.status === undefined ? {} : { status: response.status }),
        reason: response.message,
        critical: isCritical,
      });
    }
    return {
      ok: false,
      kind: response.kind,
      critical: isCritical,
      ...(response.status === undefined ? {} : { status: response.status }),
      message: response.message,
    };
  }

  private controlError(hook: SendableHook, reason: string): ControlOutcome {
    this.options.logger.warn('webhook control failed', { hookId: hook.id, hookType: hook.type, reason, onError: hook.webhook.onError ?? 'continue' });
    return { kind: 'error', reason };
  }
}
