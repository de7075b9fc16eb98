import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI Chat Completions wire
 * format from a script. Each request to `POST .../chat/completions` takes the
 * next scripted response from the queue (an empty queue answers 500 with an
 * OpenAI-style error body) and is recorded with its headers and parsed body.
 *
 * Usage:
 *   const server = await FakeOpenAiServer.start();
 *   server.enqueue(sse([textChunk('Hel'), textChunk('lo'), finishChunk('stop'), usageChunk(3, 2)]));
 *   new OpenAiChatModel({ baseUrl: server.baseUrl, ... });
 *   await server.close();
 */

/** What one request gets back. */
export type ScriptedResponse =
  | {
      kind: 'sse';
      /**
       * Each item is one network write: a string or bytes are written verbatim
       * (bytes can cut a UTF-8 character in half), any other object becomes
       * `data: <json>\n\n`.
       */
      writes: Array<object | string | Uint8Array>;
      /** Append `data: [DONE]\n\n` after the writes; default true. */
      done?: boolean;
      /** Pause between writes, so they arrive as separate reads; default 5 ms. */
      delayMs?: number;
      /** Keep the connection open after the writes (for abort and timeout cases). */
      hold?: boolean;
      contentType?: string;
    }
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  /** Accept the request and never answer. */
  | { kind: 'hang' }
  /** Read the request, then cut the connection without a response (a network error for the client). */
  | { kind: 'drop' };

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body (undefined when it did not parse). */
  body: any;
  /** `performance.now()` when the request's body was read (for lower bounds on backoff pauses). */
  receivedAt: number;
}

export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: ScriptedResponse[] = [];

  private constructor(private readonly server: http.Server) {}

  /** Listens on 127.0.0.1 on a free port. */
  static async start(): Promise<FakeOpenAiServer> {
    let self: FakeOpenAiServer | undefined;
    const server = http.createServer((req, res) => void self!.handle(req, res));
    self = new FakeOpenAiServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  /** `http://127.0.0.1:<port>/v1`, to use as `baseUrl`. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  enqueue(...responses: ScriptedResponse[]): this {
    this.queue.push(...responses);
    return this;
  }

  /** The last recorded request; throws if none came. */
  get lastRequest(): RecordedRequest {
    const last = this.requests[this.requests.length - 1];
    if (!last) throw new Error('the fake OpenAI server received no request');
    return last;
  }

  /** Closes the server, cutting held and hanging connections. */
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

    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      return void sendJson(res, 404, { error: { message: `fake server: no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
    }
    const next = this.queue.shift();
    if (!next) return void sendJson(res, 500, { error: { message: 'fake server: no scripted response left', type: 'server_error' } });

    switch (next.kind) {
      case 'hang':
        return;
      case 'drop':
        return void req.socket.destroy();
      case 'json':
        return void sendJson(res, next.status ?? 200, next.body, next.headers);
      case 'sse': {
        res.writeHead(200, { 'content-type': next.contentType ?? 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
        res.flushHeaders();
        const writes = next.done === false ? next.writes : [...next.writes, 'data: [DONE]\n\n'];
        for (const w of writes) {
          if (res.destroyed) return;
          res.write(typeof w === 'string' || w instanceof Uint8Array ? w : `data: ${JSON.stringify(w)}\n\n`);
          await sleep(next.delayMs ?? 5);
        }
        if (!next.hold) res.end();
        return;
      }
    }
  }
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---- builders for realistic wire payloads ----

const COMPLETION_ID = 'chatcmpl-fake';
const CREATED = 1_700_000_000;
const MODEL = 'gpt-fake';

/** An SSE response from `chat.completion.chunk` objects (or raw strings). */
export function sse(writes: Array<object | string | Uint8Array>, options: Omit<Extract<ScriptedResponse, { kind: 'sse' }>, 'kind' | 'writes'> = {}): ScriptedResponse {
  return { kind: 'sse', writes, ...options };
}

/** A plain JSON response (success or error body), with extra headers such as `retry-after`. */
export function json(body: unknown, status = 200, headers?: Record<string, string>): ScriptedResponse {
  return { kind: 'json', status, body, ...(headers ? { headers } : {}) };
}

/** An OpenAI error body as the real API sends it. */
export function errorBody(message: string, type = 'invalid_request_error', code: string | null = null): object {
  return { error: { message, type, param: null, code } };
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): object {
  return {
    id: COMPLETION_ID,
    object: 'chat.completion.chunk',
    created: CREATED,
    model: MODEL,
    system_fingerprint: 'fp_fake',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The first chunk of a real stream: the role, empty content. */
export function roleChunk(): object {
  return chunk({ role: 'assistant', content: '', refusal: null });
}

export function textChunk(content: string): object {
  return chunk({ content });
}

/** A tool-call delta; pass `id` and `name` for a call's first fragment only, as OpenAI does. */
export function toolCallChunk(index: number, part: { id?: string; name?: string; arguments: string }): object {
  const call: Record<string, unknown> = { index };
  if (part.id !== undefined) call.id = part.id;
  if (part.id !== undefined) call.type = 'function';
  call.function = part.name !== undefined ? { name: part.name, arguments: part.arguments } : { arguments: part.arguments };
  return chunk({ tool_calls: [call] });
}

export function finishChunk(reason: 'stop' | 'tool_calls' | 'length' | 'content_filter'): object {
  return chunk({}, reason);
}

/** The last chunk with `stream_options.include_usage`: no choices, only usage. */
export function usageChunk(promptTokens: number, completionTokens: number): object {
  return {
    id: COMPLETION_ID,
    object: 'chat.completion.chunk',
    created: CREATED,
    model: MODEL,
    system_fingerprint: 'fp_fake',
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}

/** A whole non-streaming `chat.completion`. */
export function completion(message: { content: string | null; tool_calls?: Array<{ id: string; name: string; arguments: string }> }, finishReason: string, usage = { prompt: 10, completion: 5 }): object {
  return {
    id: COMPLETION_ID,
    object: 'chat.completion',
    created: CREATED,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: message.content,
          refusal: null,
          ...(message.tool_calls
            ? { tool_calls: message.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
            : {}),
        },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion },
  };
}
