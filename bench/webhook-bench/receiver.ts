import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * The loopback receiver both contenders talk to: node:http on 127.0.0.1,
 * port 0, keep-alive. It reads the whole body, counts the request and answers
 * with one fixed reply (a control decision or 204). No recording, so the
 * receiver costs the same for every request.
 */
export class BenchReceiver {
  requests = 0;
  /** The last body seen (the bare-fetch contender replays hookgate's exact payload). */
  lastBody = '';
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: http.Server) {}

  static async start(reply: { status: number; body?: string }): Promise<BenchReceiver> {
    const server = http.createServer();
    const receiver = new BenchReceiver(server);
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket) => {
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    const headers = reply.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(reply.body)) };
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver.requests += 1;
        receiver.lastBody = Buffer.concat(chunks).toString('utf8');
        res.writeHead(reply.status, headers);
        res.end(reply.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
