import type { WebhookRequest, WebhookResponse, WebhookTransport } from '../../kernel/hooks/webhook-transport.js';

/** Builds request headers; a bad name or value fails without echoing it (Node's own message would). */
function buildHeaders(headers: Record<string, string>): Headers | undefined {
  try {
    const out = new Headers();
    for (const [name, value] of Object.entries(headers)) out.set(name, value);
    out.set('content-type', 'application/json');
    return out;
  } catch {
    return undefined;
  }
}

function errorCode(err: unknown): string | undefined {
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/**
 * Reads at most `max + 1` bytes of a response body, then stops reading and
 * cancels the stream, so a huge or endless body costs no more than the cap.
 */
async function readCapped(body: ReadableStream<Uint8Array> | null, max: number): Promise<{ body: Buffer } | { tooLarge: true }> {
  if (body === null) return { body: Buffer.alloc(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
      if (total > max) {
        await reader.cancel().catch(() => undefined);
        return { tooLarge: true };
      }
    }
  } finally {
    reader.releaseLock();
  }
  return { body: Buffer.concat(chunks, total) };
}

/**
 * Delivers webhooks with Node's built-in `fetch`: one POST with a JSON body,
 * no retry, redirects never followed (a 3xx is an `http_error`, so headers with
 * credentials never reach a redirect target).
 *
 * `send` never rejects. The request's `timeoutMs` and its `signal` are merged
 * (`AbortSignal.any`) and cover both the request and the body read. Failures
 * are classified: `cancelled` (the caller's signal), `timeout`, `http_error`
 * (non-2xx; the body is not read), `network_error` (connection refused, reset,
 * DNS), `configuration` (an invalid header). Messages never contain header
 * values or the request body. With `readResponse`, the body is read up to
 * `maxResponseBytes + 1` bytes; more gives `{ ok: true, tooLarge: true }`.
 */
export class FetchWebhookTransport implements WebhookTransport {
  readonly delivery = 'fetch' as const;

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    const caller = request.signal;
    if (caller?.aborted) return { ok: false, kind: 'cancelled', message: 'cancelled before sending' };
    const headers = buildHeaders(request.headers);
    if (!headers) return { ok: false, kind: 'configuration', message: 'a webhook header name or value is not valid HTTP' };

    const timeout = AbortSignal.timeout(request.timeoutMs);
    const signal = caller ? AbortSignal.any([caller, timeout]) : timeout;
    const classify = (err: unknown, during: string): WebhookResponse => {
      if (caller?.aborted) return { ok: false, kind: 'cancelled', message: `cancelled ${during}` };
      if (timeout.aborted) return { ok: false, kind: 'timeout', message: `timed out after ${request.timeoutMs} ms ${during}` };
      const code = errorCode(err);
      return { ok: false, kind: 'network_error', message: `network error ${during}${code ? ` (${code})` : ''}` };
    };

    let response: Response;
    try {
      response = await fetch(request.url, { method: 'POST', headers, body: request.body, redirect: 'manual', signal });
    } catch (err) {
      return classify(err, 'while sending');
    }

    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel().catch(() => undefined);
      const redirect = response.status >= 300 && response.status <= 399 ? ' (redirects are not followed)' : '';
      return { ok: false, kind: 'http_error', status: response.status, message: `receiver answered HTTP ${response.status}${redirect}` };
    }
    if (!request.readResponse) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: true, status: response.status };
    }
    try {
      const read = await readCapped(response.body, request.maxResponseBytes);
      if ('tooLarge' in read) return { ok: true, status: response.status, tooLarge: true };
      return { ok: true, status: response.status, body: read.body };
    } catch (err) {
      return classify(err, 'while reading the response');
    }
  }
}
