/**
 * Sends one webhook request. Transports are plugins (`transport-fetch`,
 * `transport-qstash`); the dispatcher picks one by the hook's `delivery`.
 */
export interface WebhookRequest {
  url: string;
  /** Resolved headers (secrets included): never log or store them. */
  headers: Record<string, string>;
  body: string;
  /** Milliseconds. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** A control reads the response; a notification does not need it. */
  readResponse: boolean;
  /** Cap for the response body read (controls: 65,536 bytes). */
  maxResponseBytes: number;
}

export type WebhookFailureKind = 'http_error' | 'timeout' | 'network_error' | 'configuration' | 'too_large' | 'cancelled';

/** What a transport got back: a status and body (or that it was too large), or why it failed. */
export type WebhookResponse =
  | { ok: true; status: number; body?: Buffer; tooLarge?: false }
  | { ok: true; status: number; tooLarge: true }
  | { ok: false; kind: WebhookFailureKind; status?: number; message: string };

/** Delivers signed webhook requests (bound to `WebhookTransports`). */
export interface WebhookTransport {
  /** `fetch` or `qstash`: the hook's `delivery` value this transport serves. */
  readonly delivery: 'fetch' | 'qstash';
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
