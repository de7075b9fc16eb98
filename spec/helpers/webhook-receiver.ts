import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the receiver does with one request. */
export type ReceiverReply =
  /** Answer (default HTTP 200); a string or raw bytes body is sent as JSON unless `headers` say otherwise. */
  | { status?: number; body?: string | Buffer; headers?: Record<string, string> }
  /** Read the request, never answer (the client times out or aborts). */
  | { hang: true }
  /** Read the request, then reset the connection (the client sees a network error). */
  | { reset: true };

/** One request as the receiver saw it. */
export interface RecordedWebhook {
  method: string;
  /** Path and query, e.g. `/deny`. */
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON body (undefined when the body is not JSON). */
  body: any;
  /** Milliseconds since the receiver started (arrival order across receivers). */
  at: number;
  /**
   * Set once the client closed the connection of an unanswered (`hang`)
   * request, e.g. because its timeout fired or it aborted. Never set by the
   * receiver's own `close()`.
   */
  abandoned: boolean;
}

type Responder = ReceiverReply | ((req: RecordedWebhook) => ReceiverReply);

/**
 * A recording webhook receiver: a real node:http server on 127.0.0.1, port 0.
 *
 * Every request is recorded (in arrival order) before it is answered. Replies
 * are chosen per path (`route('/deny', json({ decision: 'deny' }))`), falling
 * back to `reply` (default HTTP 204, a notification answer; a fixed reply or a
 * function of the request). A reply can also hang (never answer) or reset the
 * connection. `close()` destroys open sockets, so hanging requests never keep
 * a test alive.
 */
export class RecordingReceiver {
  readonly requests: RecordedWebhook[] = [];
  /** The reply for paths without a route. */
  reply: Responder = { status: 204 };
  private readonly routes = new Map<string, Responder>();
  private readonly sockets = new Set<Socket>();
  private readonly waiters: Array<() => void> = [];
  private readonly startedAt = performance.now();
  private closing = false;

  private constructor(private readonly server: http.Server) {}

  /** Starts listening on 127.0.0.1 with an ephemeral port. */
  static async start(): Promise<RecordingReceiver> {
    const server = http.createServer();
    const receiver = new RecordingReceiver(server);
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket) => {
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    server.on('request', (req, res) => receiver.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The absolute URL of a path on this receiver. */
  url(path = '/hook'): string {
    return this.origin + path;
  }

  /** Sets the reply for one path (exact match, query excluded). */
  route(path: string, reply: Responder): this {
    this.routes.set(path, reply);
    return this;
  }

  /** Requests to one path, in arrival order. */
  to(path: string): RecordedWebhook[] {
    return this.requests.filter((r) => r.path.split('?')[0] === path);
  }

  /** Resolves once `predicate` holds for the recorded requests; rejects after `timeoutMs`. */
  async waitFor(predicate: (requests: readonly RecordedWebhook[]) => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.requests)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${this.requests.length} requests seen)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const path = req.url ?? '';
      const recorded: RecordedWebhook = { method: req.method ?? '', path, headers: req.headers, rawBody, body, at: performance.now() - this.startedAt, abandoned: false };
      this.requests.push(recorded);
      const responder = this.routes.get(path.split('?')[0]!) ?? this.reply;
      const reply = typeof responder === 'function' ? responder(recorded) : responder;
      if ('hang' in reply) {
        res.on('close', () => {
          if (this.closing) return;
          recorded.abandoned = true;
          this.wake();
        });
        this.wake();
        return;
      }
      this.wake();
      if ('reset' in reply) {
        req.socket.resetAndDestroy();
        return;
      }
      const headers = reply.headers ?? (reply.body === undefined ? {} : { 'content-type': 'application/json' });
      res.writeHead(reply.status ?? 200, headers);
      res.end(reply.body);
    });
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}

/** A JSON reply (default HTTP 200). */
export function json(value: unknown, status = 200): ReceiverReply {
  return { status, body: JSON.stringify(value) };
}

/** The control answers as replies. */
export const allow = (): ReceiverReply => json({ decision: 'allow' });
export const deny = (reason?: string): ReceiverReply => json(reason === undefined ? { decision: 'deny' } : { decision: 'deny', reason });
