import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PublishedMessage {
  messageId: string;
  destination: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** `Upstash-Forward-*` headers with the prefix removed (lower-case names). */
  forwarded: Record<string, string>;
}

/**
 * A loopback server implementing the part of the QStash API hookgate uses:
 * `POST /v2/publish/<destination URL>` with `Authorization: Bearer <token>`,
 * answering `201 { messageId }`. After answering it delivers the message like
 * QStash does: a request to the destination with the body, `Content-Type`,
 * the `Upstash-Forward-*` headers without their prefix, and `Upstash-Method`.
 */
export class FakeQStashServer {
  readonly published: PublishedMessage[] = [];
  /** Answer every publish with this status instead (and an error text). */
  failWith: number | undefined;
  private deliveries: Promise<void>[] = [];
  private counter = 0;

  private constructor(
    private readonly server: http.Server,
    private readonly token: string,
  ) {}

  static async start(token: string): Promise<FakeQStashServer> {
    const server = http.createServer();
    const fake = new FakeQStashServer(server, token);
    server.on('request', (req, res) => fake.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves when every accepted message was delivered to its destination. */
  async delivered(): Promise<void> {
    await Promise.all(this.deliveries);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const prefix = '/v2/publish/';
      if (req.method !== 'POST' || !req.url?.startsWith(prefix)) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
        return;
      }
      if (req.headers.authorization !== `Bearer ${this.token}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `invalid token for ${this.token.slice(0, 3)}` }));
        return;
      }
      if (this.failWith !== undefined) {
        res.writeHead(this.failWith, { 'content-type': 'text/plain' }).end(`upstream exploded, token=${req.headers.authorization}`);
        return;
      }
      const destination = decodeURIComponent(req.url.slice(prefix.length));
      const forwarded: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (name.startsWith('upstash-forward-') && typeof value === 'string') forwarded[name.slice('upstash-forward-'.length)] = value;
      }
      const message: PublishedMessage = { messageId: `msg_${++this.counter}`, destination, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), forwarded };
      this.published.push(message);
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: message.messageId }));
      this.deliveries.push(this.deliver(message));
    });
  }

  private async deliver(message: PublishedMessage): Promise<void> {
    const headers: Record<string, string> = { ...message.forwarded };
    const contentType = message.headers['content-type'];
    if (typeof contentType === 'string') headers['content-type'] = contentType;
    const method = String(message.headers['upstash-method'] ?? 'POST');
    const timeout = Number(String(message.headers['upstash-timeout'] ?? '30s').replace(/s$/, ''));
    try {
      const res = await fetch(message.destination, { method, headers, body: message.body, redirect: 'manual', signal: AbortSignal.timeout(timeout * 1000) });
      await res.body?.cancel();
    } catch {
      // QStash would retry; the fake only records.
    }
  }
}
