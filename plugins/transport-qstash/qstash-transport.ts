import { Client, QstashError } from '@upstash/qstash';
import type { SecretScrubber } from '../../kernel/logger.js';
import type { WebhookRequest, WebhookResponse, WebhookTransport } from '../../kernel/hooks/webhook-transport.js';

export interface QStashTransportOptions {
  /** QStash API base (`config.webhooks.qstash.url`). */
  baseUrl: string;
  /** Name of the env var holding the token (`config.webhooks.qstash.tokenEnv`); read at every send. */
  tokenEnv: string;
  /** Where the token is read from at every send: the kernel's environment (the plugin passes it). */
  env: Readonly<Record<string, string | undefined>>;
  /** The token is registered here so no log line can show it. */
  scrubber?: SecretScrubber;
}

/** The status QStash's publish API answers when a message was accepted for delivery. */
export const QSTASH_ACCEPTED_STATUS = 201;

function errorCode(err: unknown): string | undefined {
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/**
 * Publishes webhooks through QStash with the official `@upstash/qstash` client
 * (`delivery: 'qstash'`). QStash then POSTs the JSON body to the hook's URL,
 * with the resolved headers (the client sends them as `Upstash-Forward-*`) and
 * the hook's timeout (`Upstash-Timeout`, whole seconds).
 *
 * `send` never rejects and reports the publish call only: `{ ok: true, status: 201 }`
 * means QStash accepted the message, not that the receiver got it. Failures:
 * `configuration` (the token env var is unset or blank), `http_error` with
 * QStash's status, `network_error`, `timeout` (the publish call took longer than
 * `timeoutMs`), `cancelled`. No SDK text, token or header reaches a message.
 * The client is created per send with retries off, telemetry off and dev mode
 * off, so a rotated token is used by the next send. An abort or timeout stops
 * waiting; a publish already on the wire may still be accepted by QStash.
 */
export class QStashWebhookTransport implements WebhookTransport {
  readonly delivery = 'qstash' as const;

  constructor(private readonly options: QStashTransportOptions) {}

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    const { signal } = request;
    if (signal?.aborted) return { ok: false, kind: 'cancelled', message: 'cancelled before publishing' };
    const token = this.options.env[this.options.tokenEnv];
    if (token === undefined || token.trim() === '') {
      return { ok: false, kind: 'configuration', message: `QStash token env var ${this.options.tokenEnv} is not set` };
    }
    this.options.scrubber?.add(token);

    const client = new Client({ baseUrl: this.options.baseUrl, token, retry: false, enableTelemetry: false, devMode: false });
    const publish = client
      .publish({
        url: request.url,
        body: request.body,
        headers: { ...request.headers, 'Content-Type': 'application/json' },
        method: 'POST',
        timeout: Math.max(1, Math.ceil(request.timeoutMs / 1000)),
      })
      .then(
        (): WebhookResponse => ({ ok: true, status: QSTASH_ACCEPTED_STATUS }),
        (err: unknown): WebhookResponse => {
          if (err instanceof QstashError && typeof err.status === 'number') {
            return { ok: false, kind: 'http_error', status: err.status, message: `QStash publish failed with HTTP ${err.status}` };
          }
          const code = errorCode(err);
          return { ok: false, kind: 'network_error', message: `QStash publish failed${code ? ` (${code})` : ''}` };
        },
      );

    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<WebhookResponse>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, kind: 'timeout', message: `QStash publish timed out after ${request.timeoutMs} ms` }), request.timeoutMs);
      if (signal) {
        onAbort = () => resolve({ ok: false, kind: 'cancelled', message: 'cancelled while publishing' });
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    try {
      return await Promise.race([publish, stop]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }
}
