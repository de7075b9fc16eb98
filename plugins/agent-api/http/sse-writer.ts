import type { ServerResponse } from 'node:http';
import { once } from 'node:events';

/** How often an idle event stream gets a `: heartbeat` comment (keeps proxies from closing it). */
export const DEFAULT_HEARTBEAT_MS = 15_000;

/**
 * One Server-Sent Events response: frames written with backpressure (a
 * reader that does not read holds the writer at `send`, so the server keeps
 * at most one read's worth for it), heartbeats while idle, and an end when
 * the client goes away or the server closes it.
 */
export class SseWriter {
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;
  /** Aborts when the client disconnected or `close()` was called. */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();

  constructor(private readonly res: ServerResponse, heartbeatMs = DEFAULT_HEARTBEAT_MS) {
    this.signal = this.controller.signal;
    res.on('close', () => this.close());
    this.heartbeat = setInterval(() => {
      // A reader that is behind gets no heartbeat: it has frames to read.
      if (!this.closed && !res.writableNeedDrain) res.write(': heartbeat\n\n');
    }, heartbeatMs);
    this.heartbeat.unref();
  }

  /** Writes one event (`id`, `event`, JSON `data`) and resolves once the socket took it (or the stream closed). */
  async send(event: string, data: unknown, id?: string): Promise<void> {
    if (this.closed) return;
    const frame = `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    if (!this.res.write(frame)) {
      await Promise.race([once(this.res, 'drain'), once(this.controller.signal, 'abort')]).catch(() => undefined);
    }
  }

  /** Ends the response (idempotent). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.controller.abort();
    if (!this.res.writableEnded) this.res.end();
  }
}
