import http from 'node:http';
import Koa from 'koa';
import { verifyWebhookSignature } from '../../kernel/hooks/webhook/signing.js';

export interface ReceiverOptions {
  /** The `whsec_` secret shared with hookgate (`webhooks.signing.secretEnv`). */
  secret: string;
  /** What control hooks get back: allow, deny, or nothing (a notification answer). */
  decision: 'allow' | 'deny' | 'none';
  reason?: string;
  toleranceSeconds?: number;
  /** Called with every verified payload. */
  onPayload?: (payload: unknown, headers: http.IncomingHttpHeaders) => void;
  /** Called for every refused request, with why. */
  onRefused?: (why: string) => void;
  /** Largest body accepted, in bytes. */
  maxBodyBytes?: number;
}

/**
 * An example webhook receiver (Koa): it checks the Standard Webhooks
 * signature on the raw body, refuses bad or replayed requests with 401, and
 * answers a fixed decision. `hookgate webhook verify` serves it.
 */
export function createWebhookReceiver(options: ReceiverOptions): Koa {
  const app = new Koa();
  const max = options.maxBodyBytes ?? 1_048_576;
  app.use(async (ctx) => {
    if (ctx.method !== 'POST') {
      ctx.status = 405;
      ctx.set('Allow', 'POST');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req) {
      size += (chunk as Buffer).length;
      if (size > max) {
        ctx.status = 413;
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks);
    const check = verifyWebhookSignature(options.secret, ctx.req.headers, body, options.toleranceSeconds);
    if (!check.ok) {
      options.onRefused?.(check.reason);
      ctx.status = 401;
      ctx.body = { error: check.reason };
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      ctx.status = 400;
      ctx.body = { error: 'invalid_json' };
      return;
    }
    options.onPayload?.(payload, ctx.req.headers);
    if (options.decision === 'none') {
      ctx.status = 204;
      return;
    }
    ctx.body = options.decision === 'allow' ? { decision: 'allow' } : { decision: 'deny', ...(options.reason ? { reason: options.reason } : {}) };
  });
  return app;
}

/** Serves the receiver on 127.0.0.1 (or host) and resolves the listening server. */
export function serveWebhookReceiver(options: ReceiverOptions & { port: number; host?: string }): Promise<http.Server> {
  const server = http.createServer(createWebhookReceiver(options).callback());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve(server));
  });
}
