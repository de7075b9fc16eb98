import assert from 'node:assert/strict';
import { HookgateError } from '../../../kernel/errors.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import type { Message } from '../../../kernel/messages.js';
import type { ModelRequest, ToolSpec } from '../../../kernel/model.js';
import { OpenAiChatModel, type OpenAiChatModelOptions } from '../../../plugins/model-openai/openai-chat-model.js';
import {
  completion,
  errorBody,
  FakeOpenAiServer,
  finishChunk,
  json,
  roleChunk,
  sse,
  textChunk,
  toolCallChunk,
  usageChunk,
} from '../../helpers/fake-openai-server.js';

const KEY_ENV = 'HOOKGATE_SPEC_OPENAI_KEY';
const KEY = 'sk-spec-0123456789abcdef';

const TOOLS: ToolSpec[] = [
  { identifier: 'fs', apiName: 'readFile', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { identifier: 'fs', apiName: 'writeFile', description: 'Write a file', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } },
];

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'gpt-spec',
    purpose: 'turn',
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    signal: new AbortController().signal,
    operationId: 'op-1',
    turnIndex: 0,
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected the promise to reject');
}

describe('plugins/model-openai OpenAiChatModel (against a loopback OpenAI-compatible server)', () => {
  let server: FakeOpenAiServer;
  let model: OpenAiChatModel;

  function makeModel(options: Partial<OpenAiChatModelOptions> = {}): OpenAiChatModel {
    return new OpenAiChatModel({ baseUrl: server.baseUrl, apiKeyEnv: KEY_ENV, timeoutSeconds: 10, maxRetries: 0, ...options });
  }

  beforeEach(async () => {
    server = await FakeOpenAiServer.start();
    process.env[KEY_ENV] = KEY;
    model = makeModel();
  });

  afterEach(async () => {
    delete process.env[KEY_ENV];
    await server.close();
  });

  describe('streaming text', () => {
    it('calls onTextDelta for each text piece and returns the whole text', async () => {
      server.enqueue(sse([roleChunk(), textChunk('Hel'), textChunk('lo, '), textChunk('world'), finishChunk('stop'), usageChunk(12, 3)]));
      const deltas: string[] = [];
      const res = await model.complete(request({ onTextDelta: (d) => deltas.push(d) }));
      assert.deepEqual(deltas, ['Hel', 'lo, ', 'world']);
      assert.equal(res.text, 'Hello, world');
      assert.equal(res.finishReason, 'stop');
      assert.deepEqual(res.toolCalls, []);
    });

    it('takes usage from the final choice-less chunk', async () => {
      server.enqueue(sse([textChunk('ok'), finishChunk('stop'), usageChunk(12, 3)]));
      const res = await model.complete(request());
      assert.deepEqual(res.usage, { promptTokens: 12, completionTokens: 3, totalTokens: 15 });
    });

    it('reassembles SSE events split across network reads, with CRLF line ends and multi-byte characters cut in half', async () => {
      const event = Buffer.from(`data: ${JSON.stringify(textChunk('héllo ✓'))}\r\n\r\n`, 'utf8');
      const inCheck = event.indexOf(Buffer.from('✓', 'utf8')) + 1; // inside the 3-byte character
      server.enqueue(
        sse([
          ': keep-alive comment\r\n\r\n',
          event.subarray(0, 7), // cuts the "data:" line
          event.subarray(7, inCheck),
          event.subarray(inCheck, event.length - 1), // leaves the last \n of the blank line for later
          event.subarray(event.length - 1),
          `data: ${JSON.stringify(finishChunk('stop'))}\r`,
          '\n\r\n',
        ]),
      );
      const deltas: string[] = [];
      const res = await model.complete(request({ onTextDelta: (d) => deltas.push(d) }));
      assert.equal(res.text, 'héllo ✓');
      assert.deepEqual(deltas, ['héllo ✓']);
      assert.equal(res.finishReason, 'stop');
    });

    it('keeps going when onTextDelta throws, and logs a warning', async () => {
      const logs: LogRecord[] = [];
      model = makeModel({ logger: createLogger({ level: 'warn', sink: (_l, r) => logs.push(r) }) });
      server.enqueue(sse([textChunk('a'), textChunk('b'), finishChunk('stop')]));
      const res = await model.complete(request({ onTextDelta: () => { throw new Error('observer broke'); } }));
      assert.equal(res.text, 'ab');
      assert.equal(logs.filter((l) => l.level === 'warn').length, 2);
    });

    it('fails with MODEL_FAILED when the stream ends before a finish_reason or [DONE]', async () => {
      server.enqueue(sse([textChunk('cut off')], { done: false }));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /ended before the answer was complete/);
    });

    it('fails with MODEL_FAILED when an event carries data that is not JSON', async () => {
      server.enqueue(sse([textChunk('x'), 'data: {"choices": [\n\n']));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /not JSON/);
    });

    it('fails with MODEL_FAILED carrying the message of an error event inside the stream', async () => {
      server.enqueue(sse([textChunk('x'), { error: { message: 'The server had an error while processing your request.' } }]));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.match(err.message, /The server had an error while processing your request/);
    });
  });

  describe('streamed tool calls', () => {
    it('assembles one tool call whose arguments are split mid-JSON across chunks', async () => {
      server.enqueue(
        sse([
          roleChunk(),
          toolCallChunk(0, { id: 'call_abc', name: 'fs__readFile', arguments: '' }),
          toolCallChunk(0, { arguments: '{"pa' }),
          toolCallChunk(0, { arguments: 'th": "no' }),
          toolCallChunk(0, { arguments: 'tes/a.t' }),
          toolCallChunk(0, { arguments: 'xt"}' }),
          finishChunk('tool_calls'),
          usageChunk(40, 18),
        ]),
      );
      const res = await model.complete(request({ tools: TOOLS }));
      assert.deepEqual(res.toolCalls, [{ id: 'call_abc', identifier: 'fs', apiName: 'readFile', args: { path: 'notes/a.txt' } }]);
      assert.equal(res.finishReason, 'tool_calls');
      assert.deepEqual(res.usage, { promptTokens: 40, completionTokens: 18, totalTokens: 58 });
    });

    it('assembles two parallel tool calls whose fragments interleave, in index order', async () => {
      server.enqueue(
        sse([
          toolCallChunk(0, { id: 'call_1', name: 'fs__readFile', arguments: '' }),
          toolCallChunk(1, { id: 'call_2', name: 'fs__writeFile', arguments: '{"path":' }),
          toolCallChunk(0, { arguments: '{"path":"a' }),
          toolCallChunk(1, { arguments: '"b.txt","content":"x\\n' }),
          toolCallChunk(0, { arguments: '.txt"}' }),
          toolCallChunk(1, { arguments: 'y"}' }),
          finishChunk('tool_calls'),
          usageChunk(50, 30),
        ]),
      );
      const res = await model.complete(request({ tools: TOOLS }));
      assert.deepEqual(res.toolCalls, [
        { id: 'call_1', identifier: 'fs', apiName: 'readFile', args: { path: 'a.txt' } },
        { id: 'call_2', identifier: 'fs', apiName: 'writeFile', args: { path: 'b.txt', content: 'x\ny' } },
      ]);
    });

    it('returns text that precedes tool calls in the same turn', async () => {
      server.enqueue(
        sse([textChunk('Let me look.'), toolCallChunk(0, { id: 'call_1', name: 'fs__readFile', arguments: '{"path":"a"}' }), finishChunk('tool_calls')]),
      );
      const res = await model.complete(request({ tools: TOOLS }));
      assert.equal(res.text, 'Let me look.');
      assert.equal(res.toolCalls.length, 1);
    });

    it('gives {} for a tool call with empty arguments', async () => {
      server.enqueue(sse([toolCallChunk(0, { id: 'call_1', name: 'fs__readFile', arguments: '' }), finishChunk('tool_calls')]));
      const res = await model.complete(request({ tools: TOOLS }));
      assert.deepEqual(res.toolCalls[0]!.args, {});
    });

    it('fails with MODEL_FAILED naming the tool when the arguments are not valid JSON', async () => {
      server.enqueue(sse([toolCallChunk(0, { id: 'call_bad', name: 'fs__writeFile', arguments: '{"path": "a.txt", ' }), finishChunk('tool_calls')]));
      const err = await rejection(model.complete(request({ tools: TOOLS })));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /fs\/writeFile/);
      assert.match(err.message, /not valid JSON/);
    });

    it('splits an unoffered function name at its first "__" so the runtime can report it', async () => {
      server.enqueue(sse([toolCallChunk(0, { id: 'call_1', name: 'web__fetch__v2', arguments: '{}' }), finishChunk('tool_calls')]));
      const res = await model.complete(request({ tools: TOOLS }));
      assert.deepEqual(res.toolCalls[0], { id: 'call_1', identifier: 'web', apiName: 'fetch__v2', args: {} });
    });
  });

  describe('the request it sends', () => {
    it('POSTs {baseUrl}/chat/completions with the key as a Bearer token', async () => {
      server.enqueue(sse([textChunk('ok'), finishChunk('stop')]));
      await model.complete(request());
      const req = server.lastRequest;
      assert.equal(req.method, 'POST');
      assert.equal(req.url, '/v1/chat/completions');
      assert.equal(req.headers.authorization, `Bearer ${KEY}`);
      assert.match(String(req.headers['content-type']), /application\/json/);
    });

    it('accepts a baseUrl with a trailing slash', async () => {
      model = makeModel({ baseUrl: `${server.baseUrl}/` });
      server.enqueue(sse([textChunk('ok'), finishChunk('stop')]));
      await model.complete(request());
      assert.equal(server.lastRequest.url, '/v1/chat/completions');
    });

    it('asks for a stream with usage, and passes model, temperature and max_tokens', async () => {
      server.enqueue(sse([textChunk('ok'), finishChunk('stop')]));
      await model.complete(request({ temperature: 0.2, maxOutputTokens: 256 }));
      const body = server.lastRequest.body;
      assert.equal(body.model, 'gpt-spec');
      assert.equal(body.stream, true);
      assert.deepEqual(body.stream_options, { include_usage: true });
      assert.equal(body.temperature, 0.2);
      assert.equal(body.max_tokens, 256);
      assert.equal('tools' in body, false);
    });

    it('uses the configured model when the request names none', async () => {
      model = makeModel({ model: 'gpt-from-config' });
      server.enqueue(sse([textChunk('ok'), finishChunk('stop')]));
      await model.complete(request({ model: '' }));
      assert.equal(server.lastRequest.body.model, 'gpt-from-config');
    });

    it('offers tools as functions named identifier__apiName with their schemas', async () => {
      server.enqueue(sse([textChunk('ok'), finishChunk('stop')]));
      await model.complete(request({ tools: TOOLS }));
      assert.deepEqual(server.lastRequest.body.tools, [
        { type: 'function', function: { name: 'fs__readFile', description: 'Read a file', parameters: TOOLS[0]!.parameters } },
        { type: 'function', function: { name: 'fs__writeFile', description: 'Write a file', parameters: TOOLS[1]!.parameters } },
      ]);
    });

    it('maps system, summary, user, assistant tool calls and tool results to Chat Completions messages', async () => {
      const messages: Message[] = [
        { role: 'system', content: 'You are careful.' },
        { role: 'summary', content: 'Earlier: the user asked about a.txt.' },
        { role: 'user', content: 'Read a.txt' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', identifier: 'fs', apiName: 'readFile', args: { path: 'a.txt' } }] },
        { role: 'tool', content: 'hello', toolCallId: 'call_1', toolResult: { content: 'hello', success: true } },
        { role: 'assistant', content: 'It says hello.' },
      ];
      server.enqueue(sse([textChunk('ok'), finishChunk('stop')]));
      await model.complete(request({ messages, tools: TOOLS }));
      assert.deepEqual(server.lastRequest.body.messages, [
        { role: 'system', content: 'You are careful.' },
        { role: 'system', content: 'Earlier: the user asked about a.txt.' },
        { role: 'user', content: 'Read a.txt' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'fs__readFile', arguments: '{"path":"a.txt"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'hello' },
        { role: 'assistant', content: 'It says hello.' },
      ]);
    });
  });

  describe('images', () => {
    it('sends a user message with images as text and image_url data-URL parts', async () => {
      const messages: Message[] = [
        { role: 'user', content: 'What is in these?', images: [{ mediaType: 'image/png', data: 'iVBORw0KGgo=' }, { mediaType: 'image/jpeg', data: '/9j/4AAQ' }] },
        { role: 'user', content: '', images: [{ mediaType: 'image/webp', data: 'UklGRg==' }] },
        { role: 'user', content: 'no images', images: [] },
      ];
      server.enqueue(sse([textChunk('two pictures'), finishChunk('stop')]));
      await model.complete(request({ messages }));
      assert.deepEqual(server.lastRequest.body.messages, [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          ],
        },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGRg==' } }] },
        { role: 'user', content: 'no images' },
      ]);
    });
  });

  describe('a plain JSON answer', () => {
    it('reads text, tool calls, finish reason and usage from a non-streaming chat.completion', async () => {
      server.enqueue(
        json(completion({ content: 'Reading.', tool_calls: [{ id: 'call_9', name: 'fs__readFile', arguments: '{"path":"z.md"}' }] }, 'tool_calls', { prompt: 7, completion: 4 })),
      );
      const deltas: string[] = [];
      const res = await model.complete(request({ tools: TOOLS, onTextDelta: (d) => deltas.push(d) }));
      assert.deepEqual(res, {
        text: 'Reading.',
        toolCalls: [{ id: 'call_9', identifier: 'fs', apiName: 'readFile', args: { path: 'z.md' } }],
        usage: { promptTokens: 7, completionTokens: 4, totalTokens: 11 },
        finishReason: 'tool_calls',
      });
      assert.deepEqual(deltas, []);
    });
  });

  describe('failures', () => {
    it('fails with MODEL_FAILED giving the status and the server error.message on a 401', async () => {
      server.enqueue(json(errorBody('Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.', 'invalid_request_error', 'invalid_api_key'), 401));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /401/);
      assert.match(err.message, /Incorrect API key provided/);
      assert.equal(err.details.status, 401);
    });

    it('never puts the key in the error, even when the server echoes it', async () => {
      server.enqueue(json(errorBody(`Incorrect API key provided: ${KEY}.`), 401));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(JSON.stringify({ message: err.message, json: err.toJSON() }).includes(KEY), false);
      assert.match(err.message, /\[redacted\]/);
    });

    it('fails with a HookgateError naming the env var (and no request) when the key is missing', async () => {
      delete process.env[KEY_ENV];
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, new RegExp(KEY_ENV));
      assert.equal(server.requests.length, 0);
    });

    it('reads the key at call time, so setting it later works', async () => {
      delete process.env[KEY_ENV];
      await rejection(model.complete(request()));
      process.env[KEY_ENV] = 'sk-set-later-123456';
      server.enqueue(sse([textChunk('ok'), finishChunk('stop')]));
      await model.complete(request());
      assert.equal(server.lastRequest.headers.authorization, 'Bearer sk-set-later-123456');
    });

    it('fails with CONFIG_INVALID when neither the request nor the config names a model', async () => {
      const err = await rejection(model.complete(request({ model: '' })));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, /model/);
    });

    it('rejects with the caller\'s abort reason when the caller aborts mid-stream', async () => {
      server.enqueue(sse([textChunk('partial')], { done: false, hold: true }));
      const controller = new AbortController();
      const reason = new Error('user pressed stop');
      const pending = model.complete(request({ signal: controller.signal, onTextDelta: () => controller.abort(reason) }));
      assert.equal(await rejection(pending), reason);
    });

    it('rejects at once, without a request, when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort(new Error('too late'));
      const err = await rejection(model.complete(request({ signal: controller.signal })));
      assert.match((err as Error).message, /too late/);
      assert.equal(server.requests.length, 0);
    });

    it('fails with MODEL_FAILED naming timeoutSeconds when the server does not answer in time', async () => {
      model = makeModel({ timeoutSeconds: 0.2 });
      server.enqueue({ kind: 'hang' });
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /0\.2s/);
      assert.match(err.message, /timeoutSeconds/);
    });

    it('applies the timeout to the whole call, also when the stream stalls after the headers', async () => {
      model = makeModel({ timeoutSeconds: 0.2 });
      server.enqueue(sse([textChunk('slow')], { done: false, hold: true }));
      const deltas: string[] = [];
      const err = await rejection(model.complete(request({ onTextDelta: (d) => deltas.push(d) })));
      assert.deepEqual(deltas, ['slow']);
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /timeoutSeconds/);
    });

    it('logs requests and answers at debug level without the key', async () => {
      const lines: string[] = [];
      model = makeModel({ logger: createLogger({ level: 'debug', sink: (line) => lines.push(line) }) });
      server.enqueue(sse([textChunk('ok'), finishChunk('stop'), usageChunk(1, 1)]), json(errorBody(`bad key ${KEY}`), 401));
      await model.complete(request());
      await rejection(model.complete(request()));
      assert.ok(lines.some((l) => l.includes('"model response"')));
      assert.equal(lines.some((l) => l.includes(KEY)), false);
    });

    it('fails with MODEL_FAILED naming the endpoint when nothing listens there', async () => {
      const gone = server.baseUrl;
      await server.close();
      server = await FakeOpenAiServer.start();
      model = makeModel({ baseUrl: gone });
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /chat\/completions/);
    });
  });
});
