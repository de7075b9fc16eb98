import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createLogger, SecretScrubber, type Logger } from '../../../../kernel/logger.js';

/** What the receiver does with one request. */
export type Reply =
  | { status?: number; body?: string | Buffer; headers?: Record<string, string> }
  /** Read the request, never answer. */
  | { hang: true }
  /** Read the request, then destroy the socket (the client sees a reset). */
  | { reset: true };

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON body, or undefined. */
  body: any;
}

/**
 * A real webhook receiver on 127.0.0.1 (port 0). Records every request and
 * answers with `reply` (a fixed reply or a function of the request).
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  reply: Reply | ((req: ReceivedRequest) => Reply) = { status: 204 };
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = http.createServer();
    const receiver = new WebhookReceiver(server);
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

  url(path = '/hook'): string {
    return this.origin + path;
  }

  async close(): Promise<void> {
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
      const recorded: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawBody, body };
      this.requests.push(recorded);
      const reply = typeof this.reply === 'function' ? this.reply(recorded) : this.reply;
      if ('hang' in reply) return;
      if ('reset' in reply) {
        req.socket.resetAndDestroy();
        return;
      }
      res.writeHead(reply.status ?? 200, reply.headers ?? (reply.body === undefined ? {} : { 'content-type': 'application/json' }));
      res.end(reply.body);
    });
  }
}

/** JSON reply helper. */
export function json(value: unknown, status = 200): Reply {
  return { status, body: JSON.stringify(value) };
}

/** A logger that keeps every line (already scrubbed) for assertions. */
export function captureLogger(scrubber = new SecretScrubber()): { logger: Logger; lines: string[]; scrubber: SecretScrubber } {
  const lines: string[] = [];
  return { logger: createLogger({ level: 'debug', scrubber, sink: (line) => lines.push(line) }), lines, scrubber };
}
