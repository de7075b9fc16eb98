import assert from 'node:assert/strict';
import { readSseData } from '../../../plugins/model-openai/sse-events.js';

function streamOf(pieces: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of pieces) controller.enqueue(encoder.encode(p));
      controller.close();
    },
  });
}

async function collect(pieces: string[]): Promise<string[]> {
  const out: string[] = [];
  for await (const data of readSseData(streamOf(pieces))) out.push(data);
  return out;
}

describe('plugins/model-openai readSseData', () => {
  it('yields the data of each event, ignoring comments, other fields and empty events', async () => {
    assert.deepEqual(await collect([': ping\n\nevent: message\nid: 1\ndata: {"a":1}\n\n\n\ndata:{"b":2}\n\n']), ['{"a":1}', '{"b":2}']);
  });

  it('joins multi-line data with \\n', async () => {
    assert.deepEqual(await collect(['data: line one\ndata: line two\n\n']), ['line one\nline two']);
  });

  it('accepts \\r\\n and lone \\r line ends, even when \\r\\n is split between reads', async () => {
    assert.deepEqual(await collect(['data: a\r', '\n\r', '\ndata: b\r\rdata: c\n\n']), ['a', 'b', 'c']);
  });

  it('yields a last event that lacks its blank line', async () => {
    assert.deepEqual(await collect(['data: [DONE]']), ['[DONE]']);
  });
});
