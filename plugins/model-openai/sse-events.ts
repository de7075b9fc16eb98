/**
 * Reads a Server-Sent Events body and yields the `data` of each event, as the
 * SSE spec assembles it: `data:` lines joined by `\n`, the event dispatched at
 * a blank line, comments (`:`) and other fields ignored, `\n`, `\r\n` and `\r`
 * line ends accepted, lines and UTF-8 characters split across network reads
 * put back together. A final event without its blank line is still yielded.
 *
 * Rejects with whatever the stream rejects with (for example the abort
 * reason). Breaking out of the loop cancels the body.
 */
export async function* readSseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let data: string[] = [];
  let finished = false;

  function* takeLines(final: boolean): Generator<string> {
    for (;;) {
      const match = /\r\n|\r|\n/.exec(buffer);
      // A lone `\r` at the end may be the first half of `\r\n`; wait for more.
      if (!match || (!final && match[0] === '\r' && match.index === buffer.length - 1)) break;
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      yield line;
    }
    if (final && buffer !== '') {
      const line = buffer;
      buffer = '';
      yield line;
    }
  }

  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        buffer += decoder.decode();
        finished = true;
      } else {
        buffer += decoder.decode(value, { stream: true });
      }
      for (const line of takeLines(finished)) {
        if (line === '') {
          if (data.length > 0) yield data.join('\n');
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        if (field !== 'data') continue;
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        data.push(value);
      }
      if (finished) {
        if (data.length > 0) yield data.join('\n');
        return;
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
