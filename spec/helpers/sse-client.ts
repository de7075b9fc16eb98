/** One Server-Sent Event as a client reads it. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Reads an event stream with fetch until `until` says stop (or the server
 * ends it), then drops the connection. Comment lines (heartbeats) are
 * counted, not returned.
 */
export async function readSse(
  url: string,
  until: (events: SseEvent[], comments: number) => boolean,
  headers: Record<string, string> = {},
): Promise<{ events: SseEvent[]; comments: number; status: number; contentType: string | null }> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const events: SseEvent[] = [];
  let comments = 0;
  if (!res.ok || !res.body) return { events, comments, status: res.status, contentType: res.headers.get('content-type') };
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = { event: 'message', data: '' };
        let isComment = true;
        for (const line of frame.split('\n')) {
          if (line.startsWith(':')) continue;
          isComment = false;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') event.id = value;
          else if (field === 'event') event.event = value;
          else if (field === 'data') event.data += event.data === '' ? value : `\n${value}`;
        }
        if (isComment) comments++;
        else events.push(event);
      }
      if (until(events, comments)) break;
    }
  } finally {
    controller.abort();
    await reader.cancel().catch(() => undefined);
  }
  return { events, comments, status: res.status, contentType: res.headers.get('content-type') };
}

/**
 * The stored chunks of the `data` events, in order: live-only chunks (text
 * deltas, tool log lines: their position has `live`) are left out, since no
 * history read returns them. `allChunksOf` keeps them.
 */
export function chunksOf<T = { type: string; position: { batch: number; index: number } }>(events: SseEvent[]): T[] {
  return allChunksOf<T>(events).filter((c) => (c as { position?: { live?: number } }).position?.live === undefined);
}

/** Every chunk of the `data` events, live-only ones included, in order. */
export function allChunksOf<T = { type: string; position: { batch: number; index: number; live?: number } }>(events: SseEvent[]): T[] {
  return events.filter((e) => e.event === 'data').flatMap((e) => JSON.parse(e.data) as T[]);
}
