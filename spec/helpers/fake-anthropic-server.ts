import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 that speaks the Anthropic Messages wire
 * protocol from a script: `POST /v1/messages` takes the next scripted answer
 * (an empty queue answers 500 `api_error`), a request without a key (`x-api-key`
 * or `Authorization: Bearer`) or `anthropic-version` gets the 401 / 400 the real API sends, and every request
 * is recorded with its headers and parsed body. Streams are SSE as the API
 * writes them: `event: <type>` then `data: <json>`, a blank line after each.
 *
 *   const server = await FakeAnthropicServer.start();
 *   server.enqueue(stream(textAnswer('Hello', { input: 12, output: 3 })));
 *   new AnthropicMessagesModel({ baseUrl: server.baseUrl, ... });
 */

export type ScriptedAnswer =
  | {
      kind: 'sse';
      /** One network write each: strings and bytes verbatim, an event object as `event: <type>\ndata: <json>\n\n`. */
      writes: Array<{ type: string } | string | Uint8Array>;
      /** Pause between writes, so they arrive as separate reads; default 5 ms. */
      delayMs?: number;
      /** Keep the connection open after the writes (for abort and timeout cases). */
      hold?: boolean;
    }
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'drop' };

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: any;
  receivedAt: number;
}

export class FakeAnthropicServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: ScriptedAnswer[] = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FakeAnthropicServer> {
    let self: FakeAnthropicServer | undefined;
    const server = http.createServer((req, res) => void self!.handle(req, res));
    self = new FakeAnthropicServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  /** `http://127.0.0.1:<port>`, to use as `baseUrl` (the SDK adds `/v1/messages`). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  enqueue(...answers: ScriptedAnswer[]): this {
    this.queue.push(...answers);
    return this;
  }

  get lastRequest(): RecordedRequest {
    const last = this.requests[this.requests.length - 1];
    if (!last) throw new Error('the fake Anthropic server received no request');
    return last;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    this.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawBody, body, receivedAt: performance.now() });

    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/messages') {
      return void sendJson(res, 404, errorBody('not_found_error', `fake server: no route ${req.method} ${req.url}`));
    }
    // The API takes the key as `x-api-key` or as `Authorization: Bearer` (what @anthropic-ai/sdk 1.x sends).
    if (!req.headers['x-api-key'] && !/^Bearer \S+$/.test(req.headers.authorization ?? '')) {
      return void sendJson(res, 401, errorBody('authentication_error', 'x-api-key header is required'));
    }
    if (!req.headers['anthropic-version']) return void sendJson(res, 400, errorBody('invalid_request_error', 'anthropic-version: header is required'));
    const next = this.queue.shift();
    if (!next) return void sendJson(res, 500, errorBody('api_error', 'fake server: no scripted answer left'));

    switch (next.kind) {
      case 'hang':
        return;
      case 'drop':
        return void req.socket.destroy();
      case 'json':
        return void sendJson(res, next.status ?? 200, next.body, next.headers);
      case 'sse': {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'request-id': 'req_fake' });
        res.flushHeaders();
        for (const w of next.writes) {
          if (res.destroyed) return;
          res.write(typeof w === 'string' || w instanceof Uint8Array ? w : `event: ${w.type}\ndata: ${JSON.stringify(w)}\n\n`);
          await new Promise((r) => setTimeout(r, next.delayMs ?? 5));
        }
        if (!next.hold) res.end();
        return;
      }
    }
  }
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'request-id': 'req_fake', ...headers });
  res.end(text);
}

// ---- builders for the real wire payloads ----

/** One stream event: its `type` names the SSE `event:` line. */
export type WireEvent = { type: string; [field: string]: unknown };

const MODEL = 'claude-fake';

/** An SSE answer. */
export function stream(writes: Array<{ type: string } | string | Uint8Array>, options: { delayMs?: number; hold?: boolean } = {}): ScriptedAnswer {
  return { kind: 'sse', writes, ...options };
}

/** A JSON answer (a whole Message or an error body), with extra headers such as `retry-after`. */
export function json(body: unknown, status = 200, headers?: Record<string, string>): ScriptedAnswer {
  return { kind: 'json', status, body, ...(headers ? { headers } : {}) };
}

/** An error body as the API sends it: `{ type: 'error', error: { type, message }, request_id }`. */
export function errorBody(type: string, message: string): object {
  return { type: 'error', error: { type, message }, request_id: 'req_fake' };
}

function usage(input: number, output: number, cache: { creation?: number; read?: number } = {}): object {
  return {
    input_tokens: input,
    cache_creation_input_tokens: cache.creation ?? 0,
    cache_read_input_tokens: cache.read ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    output_tokens: output,
    service_tier: 'standard',
  };
}

export function messageStart(inputTokens: number, cache: { creation?: number; read?: number } = {}): WireEvent {
  return {
    type: 'message_start',
    message: { id: 'msg_fake', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: usage(inputTokens, 1, cache) },
  };
}

export function ping(): WireEvent {
  return { type: 'ping' };
}

export function textStart(index: number): WireEvent {
  return { type: 'content_block_start', index, content_block: { type: 'text', text: '' } };
}

export function textDelta(index: number, text: string): WireEvent {
  return { type: 'content_block_delta', index, delta: { type: 'text_delta', text } };
}

export function toolUseStart(index: number, id: string, name: string): WireEvent {
  return { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } };
}

export function inputJsonDelta(index: number, partialJson: string): WireEvent {
  return { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partialJson } };
}

export function blockStop(index: number): WireEvent {
  return { type: 'content_block_stop', index };
}

export function messageDelta(stopReason: string, outputTokens: number): WireEvent {
  return { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } };
}

export function messageStop(): WireEvent {
  return { type: 'message_stop' };
}

/** An `event: error` inside a stream, as the API sends for an overload mid-answer. */
export function errorEvent(type: string, message: string): WireEvent {
  return { type: 'error', error: { type, message } };
}

/** The whole event sequence of a text answer. */
export function textAnswer(text: string, tokens = { input: 10, output: 5 }): WireEvent[] {
  return [messageStart(tokens.input), textStart(0), ping(), textDelta(0, text), blockStop(0), messageDelta('end_turn', tokens.output), messageStop()];
}

/** A whole non-streaming Message. */
export function message(content: object[], stopReason: string, tokens = { input: 10, output: 5 }): object {
  return { id: 'msg_fake', type: 'message', role: 'assistant', model: MODEL, content, stop_reason: stopReason, stop_sequence: null, usage: usage(tokens.input, tokens.output) };
}
