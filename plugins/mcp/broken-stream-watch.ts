/**
 * Notices an event stream that breaks under a request (the server died, the
 * connection was cut). The SDK's streamable HTTP client only reports such a
 * break to `onerror` and leaves the request waiting for its timeout, and its
 * legacy SSE client keeps waiting on a stream that will never answer: a call
 * to a server SIGKILLed mid-call would hang for `timeoutMs` (a minute by
 * default). This fetch wrapper passes every response through unchanged and,
 * when the body of an event stream fails while being read (not when hookgate
 * aborts it), tells `onBroken` which stream it was: a POST carrying requests
 * (their JSON-RPC ids) or a GET listening stream.
 */

/** Which stream broke: the POST of these request ids, or a GET (listening) stream. */
export type BrokenStream = { kind: 'post'; requestIds: Array<string | number> } | { kind: 'get' };

/** `fetch` wrapped so that `onBroken` hears of event streams whose body fails mid-read. */
export function watchBrokenStreams(inner: typeof fetch | undefined, onBroken: (stream: BrokenStream, error: unknown) => void): typeof fetch {
  return async (input, init) => {
    const response = await (inner ?? globalThis.fetch)(input, init);
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || !response.body || !/^\s*text\/event-stream\b/i.test(type)) return response;
    const method = (init?.method ?? 'GET').toUpperCase();
    const stream: BrokenStream = method === 'POST' ? { kind: 'post', requestIds: requestIdsOf(init?.body) } : { kind: 'get' };
    const signal = init?.signal ?? undefined;
    return new Response(watchedBody(response.body, (error) => {
      if (signal?.aborted) return;
      // After the SDK's reader sees the error, so a response it already parsed settles its request first.
      setImmediate(() => onBroken(stream, error));
    }), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function watchedBody(body: ReadableStream<Uint8Array>, onError: (error: unknown) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        controller.error(error);
        onError(error);
        return;
      }
      if (chunk.done) controller.close();
      else controller.enqueue(chunk.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** The ids of the JSON-RPC requests in a POST body (a message or a batch); none for anything unreadable. */
function requestIdsOf(body: unknown): Array<string | number> {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((m) => {
      const id = (m as { id?: unknown; method?: unknown } | null)?.id;
      return (typeof id === 'string' || typeof id === 'number') && typeof (m as { method?: unknown }).method === 'string' ? [id] : [];
    });
  } catch {
    return [];
  }
}
