import assert from 'node:assert/strict';
import { HookgateError } from '../../../kernel/errors.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import type { Message } from '../../../kernel/messages.js';
import type { ModelRequest, ToolSpec } from '../../../kernel/model.js';
import { AnthropicMessagesModel, type AnthropicMessagesModelOptions } from '../../../plugins/model-anthropic/anthropic-messages-model.js';
import {
  blockStop,
  errorBody,
  errorEvent,
  FakeAnthropicServer,
  inputJsonDelta,
  json,
  message,
  messageDelta,
  messageStart,
  messageStop,
  ping,
  stream,
  textAnswer,
  textDelta,
  textStart,
  toolUseStart,
} from '../../helpers/fake-anthropic-server.js';

const KEY_ENV = 'HOOKGATE_SPEC_ANTHROPIC_KEY';
const KEY = 'sk-ant-spec-0123456789abcdef';

const TOOLS: ToolSpec[] = [
  { identifier: 'fs', apiName: 'readFile', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { identifier: 'fs', apiName: 'writeFile', description: 'Write a file', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } },
];

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'claude-spec', purpose: 'turn', messages: [{ role: 'user', content: 'hi' }], tools: [], signal: new AbortController().signal, operationId: 'op-1', turnIndex: 0, ...overrides };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected the promise to reject');
}

describe('plugins/model-anthropic AnthropicMessagesModel (against a loopback Messages API)', () => {
  let server: FakeAnthropicServer;
  let model: AnthropicMessagesModel;

  function makeModel(options: Partial<AnthropicMessagesModelOptions> = {}): AnthropicMessagesModel {
    return new AnthropicMessagesModel({ baseUrl: server.baseUrl, apiKeyEnv: KEY_ENV, timeoutSeconds: 10, maxRetries: 0, ...options });
  }

  beforeEach(async () => {
    server = await FakeAnthropicServer.start();
    process.env[KEY_ENV] = KEY;
    model = makeModel();
  });

  afterEach(async () => {
    delete process.env[KEY_ENV];
    await server.close();
  });

  describe('streaming text', () => {
    it('calls onTextDelta for each text_delta and returns the whole text, usage and stop reason', async () => {
      server.enqueue(stream([messageStart(25), textStart(0), ping(), textDelta(0, 'Hel'), textDelta(0, 'lo, '), textDelta(0, 'world'), blockStop(0), messageDelta('end_turn', 7), messageStop()]));
      const deltas: string[] = [];
      const res = await model.complete(request({ onTextDelta: (d) => deltas.push(d) }));
      assert.deepEqual(deltas, ['Hel', 'lo, ', 'world']);
      assert.deepEqual(res, { text: 'Hello, world', toolCalls: [], usage: { promptTokens: 25, completionTokens: 7, totalTokens: 32 }, finishReason: 'stop' });
    });

    it('counts cache creation and cache reads as prompt tokens, as the API bills them', async () => {
      server.enqueue(stream([messageStart(5, { creation: 100, read: 1000 }), textStart(0), textDelta(0, 'ok'), blockStop(0), messageDelta('end_turn', 2), messageStop()]));
      const res = await model.complete(request());
      assert.deepEqual(res.usage, { promptTokens: 1105, completionTokens: 2, totalTokens: 1107 });
    });

    it('maps max_tokens to length and refusal to other', async () => {
      server.enqueue(
        stream([messageStart(1), textStart(0), textDelta(0, 'cut'), blockStop(0), messageDelta('max_tokens', 1), messageStop()]),
        stream([messageStart(1), messageDelta('refusal', 1), messageStop()]),
      );
      assert.equal((await model.complete(request())).finishReason, 'length');
      assert.equal((await model.complete(request())).finishReason, 'other');
    });

    it('reassembles events split across network reads, with multi-byte characters cut in half', async () => {
      const event = Buffer.from(`event: content_block_delta\ndata: ${JSON.stringify(textDelta(0, 'héllo ✓'))}\n\n`, 'utf8');
      const inCheck = event.indexOf(Buffer.from('✓', 'utf8')) + 1;
      server.enqueue(stream([messageStart(1), textStart(0), event.subarray(0, 9), event.subarray(9, inCheck), event.subarray(inCheck), blockStop(0), messageDelta('end_turn', 1), messageStop()]));
      const deltas: string[] = [];
      const res = await model.complete(request({ onTextDelta: (d) => deltas.push(d) }));
      assert.equal(res.text, 'héllo ✓');
      assert.deepEqual(deltas, ['héllo ✓']);
    });

    it('keeps going when onTextDelta throws, and logs a warning', async () => {
      const logs: LogRecord[] = [];
      model = makeModel({ logger: createLogger({ level: 'warn', sink: (_l, r) => logs.push(r) }) });
      server.enqueue(stream([messageStart(1), textStart(0), textDelta(0, 'a'), textDelta(0, 'b'), blockStop(0), messageDelta('end_turn', 1), messageStop()]));
      const res = await model.complete(request({ onTextDelta: () => { throw new Error('observer broke'); } }));
      assert.equal(res.text, 'ab');
      assert.equal(logs.filter((l) => l.level === 'warn').length, 2);
    });

    it('fails with MODEL_FAILED when the stream ends before message_stop', async () => {
      server.enqueue(stream([messageStart(1), textStart(0), textDelta(0, 'cut off')]));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /no message_stop/);
    });

    it('fails with MODEL_FAILED when an event carries data that is not JSON', async () => {
      server.enqueue(stream([messageStart(1), 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0,\n\n']));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.match(err.message, /not JSON/);
    });

    it('fails with MODEL_FAILED carrying the type and message of an error event inside the stream', async () => {
      server.enqueue(stream([messageStart(1), textStart(0), textDelta(0, 'x'), errorEvent('overloaded_error', 'Overloaded')]));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.match(err.message, /overloaded_error/);
      assert.match(err.message, /Overloaded/);
    });
  });

  describe('tool use', () => {
    it('assembles a tool_use block whose input JSON is split mid-token, after text, with stop_reason tool_use', async () => {
      server.enqueue(
        stream([
          messageStart(40),
          textStart(0),
          textDelta(0, 'Let me look.'),
          blockStop(0),
          toolUseStart(1, 'toolu_01', 'fs__readFile'),
          inputJsonDelta(1, ''),
          inputJsonDelta(1, '{"pa'),
          inputJsonDelta(1, 'th": "no'),
          inputJsonDelta(1, 'tes/a.txt"}'),
          blockStop(1),
          messageDelta('tool_use', 18),
          messageStop(),
        ]),
      );
      const res = await model.complete(request({ tools: TOOLS }));
      assert.equal(res.text, 'Let me look.');
      assert.deepEqual(res.toolCalls, [{ id: 'toolu_01', identifier: 'fs', apiName: 'readFile', args: { path: 'notes/a.txt' } }]);
      assert.equal(res.finishReason, 'tool_calls');
      assert.deepEqual(res.usage, { promptTokens: 40, completionTokens: 18, totalTokens: 58 });
    });

    it('returns parallel tool_use blocks in block order, and {} for a tool_use without input fragments', async () => {
      server.enqueue(
        stream([
          messageStart(1),
          toolUseStart(0, 'toolu_a', 'fs__writeFile'),
          inputJsonDelta(0, '{"path":"b.txt","content":"x\\ny"}'),
          blockStop(0),
          toolUseStart(1, 'toolu_b', 'fs__readFile'),
          blockStop(1),
          messageDelta('tool_use', 9),
          messageStop(),
        ]),
      );
      const res = await model.complete(request({ tools: TOOLS }));
      assert.deepEqual(res.toolCalls, [
        { id: 'toolu_a', identifier: 'fs', apiName: 'writeFile', args: { path: 'b.txt', content: 'x\ny' } },
        { id: 'toolu_b', identifier: 'fs', apiName: 'readFile', args: {} },
      ]);
    });

    it('fails with MODEL_FAILED naming the tool when its input is not valid JSON', async () => {
      server.enqueue(stream([messageStart(1), toolUseStart(0, 'toolu_bad', 'fs__writeFile'), inputJsonDelta(0, '{"path": "a.txt", '), blockStop(0), messageDelta('tool_use', 1), messageStop()]));
      const err = await rejection(model.complete(request({ tools: TOOLS })));
      assert.ok(err instanceof HookgateError);
      assert.match(err.message, /fs\/writeFile/);
      assert.match(err.message, /not valid JSON/);
    });

    it('splits a tool name it did not offer at its first "__", so the runtime can report the unknown tool', async () => {
      server.enqueue(stream([messageStart(1), toolUseStart(0, 'toolu_x', 'web__fetch__v2'), inputJsonDelta(0, '{}'), blockStop(0), messageDelta('tool_use', 1), messageStop()]));
      const res = await model.complete(request({ tools: TOOLS }));
      assert.deepEqual(res.toolCalls, [{ id: 'toolu_x', identifier: 'web', apiName: 'fetch__v2', args: {} }]);
    });

    it('fails with MODEL_FAILED when a tool input is JSON but not an object', async () => {
      server.enqueue(stream([messageStart(1), toolUseStart(0, 'toolu_arr', 'fs__readFile'), inputJsonDelta(0, '["a.txt"]'), blockStop(0), messageDelta('tool_use', 1), messageStop()]));
      const err = await rejection(model.complete(request({ tools: TOOLS })));
      assert.match((err as Error).message, /not a JSON object/);
    });
  });

  describe('images', () => {
    it('sends a user message with images as base64 image blocks before its text', async () => {
      const messages: Message[] = [
        { role: 'user', content: 'What is this?', images: [{ mediaType: 'image/png', data: 'iVBORw0KGgo=' }] },
        { role: 'assistant', content: 'A pixel.' },
        { role: 'user', content: '', images: [{ mediaType: 'image/gif', data: 'R0lGODlh' }] },
      ];
      server.enqueue(stream(textAnswer('ok')));
      await model.complete(request({ messages }));
      assert.deepEqual(server.lastRequest.body.messages, [
        { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }, { type: 'text', text: 'What is this?' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'A pixel.' }] },
        { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lGODlh' } }] },
      ]);
    });
  });

  describe('the request it sends', () => {
    it('POSTs {baseUrl}/v1/messages with the key as a Bearer token (as the SDK 1.x sends it), an anthropic-version, and a stream', async () => {
      server.enqueue(stream(textAnswer('ok')));
      await model.complete(request());
      const req = server.lastRequest;
      assert.equal(req.method, 'POST');
      assert.equal(req.url, '/v1/messages');
      assert.equal(req.headers.authorization, `Bearer ${KEY}`);
      assert.ok(req.headers['anthropic-version']);
      assert.equal(req.body.stream, true);
      assert.equal(req.body.model, 'claude-spec');
    });

    it('sends max_tokens from the request, else the configured default, and never temperature', async () => {
      model = makeModel({ maxOutputTokens: 1234 });
      server.enqueue(stream(textAnswer('ok')), stream(textAnswer('ok')));
      await model.complete(request({ temperature: 0.2 }));
      assert.equal(server.lastRequest.body.max_tokens, 1234);
      assert.equal('temperature' in server.lastRequest.body, false);
      await model.complete(request({ maxOutputTokens: 64 }));
      assert.equal(server.lastRequest.body.max_tokens, 64);
    });

    it('uses the configured model when the request names none', async () => {
      model = makeModel({ model: 'claude-from-config' });
      server.enqueue(stream(textAnswer('ok')));
      await model.complete(request({ model: '' }));
      assert.equal(server.lastRequest.body.model, 'claude-from-config');
    });

    it('offers tools by name with their schemas as input_schema', async () => {
      server.enqueue(stream(textAnswer('ok')));
      await model.complete(request({ tools: TOOLS }));
      assert.deepEqual(server.lastRequest.body.tools, [
        { name: 'fs__readFile', description: 'Read a file', input_schema: TOOLS[0]!.parameters },
        { name: 'fs__writeFile', description: 'Write a file', input_schema: TOOLS[1]!.parameters },
      ]);
    });

    it('puts system and summary messages in system, tool calls in tool_use blocks, and all results of a turn in one user turn', async () => {
      const messages: Message[] = [
        { role: 'system', content: 'You are careful.' },
        { role: 'summary', content: 'Earlier: the user asked about a.txt.' },
        { role: 'user', content: 'Read a.txt and b.txt' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'toolu_1', identifier: 'fs', apiName: 'readFile', args: { path: 'a.txt' } },
            { id: 'toolu_2', identifier: 'fs', apiName: 'readFile', args: { path: 'b.txt' } },
          ],
        },
        { role: 'tool', content: 'hello', toolCallId: 'toolu_1', toolResult: { content: 'hello', success: true } },
        { role: 'tool', content: 'no such file', toolCallId: 'toolu_2', toolResult: { content: 'no such file', success: false, error: 'ENOENT' } },
        { role: 'user', content: 'And?' },
        { role: 'assistant', content: 'a.txt says hello.' },
      ];
      server.enqueue(stream(textAnswer('ok')));
      await model.complete(request({ messages, tools: TOOLS }));
      const body = server.lastRequest.body;
      assert.deepEqual(body.system, [
        { type: 'text', text: 'You are careful.' },
        { type: 'text', text: 'Earlier: the user asked about a.txt.' },
      ]);
      assert.deepEqual(body.messages, [
        { role: 'user', content: [{ type: 'text', text: 'Read a.txt and b.txt' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'fs__readFile', input: { path: 'a.txt' } },
            { type: 'tool_use', id: 'toolu_2', name: 'fs__readFile', input: { path: 'b.txt' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'no such file', is_error: true },
            { type: 'text', text: 'And?' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'a.txt says hello.' }] },
      ]);
    });
  });

  describe('a plain JSON answer', () => {
    it('reads text, tool_use, stop reason and usage from a whole Message', async () => {
      server.enqueue(json(message([{ type: 'text', text: 'Reading.', citations: null }, { type: 'tool_use', id: 'toolu_9', name: 'fs__readFile', input: { path: 'z.md' } }], 'tool_use', { input: 7, output: 4 })));
      const res = await model.complete(request({ tools: TOOLS }));
      assert.deepEqual(res, {
        text: 'Reading.',
        toolCalls: [{ id: 'toolu_9', identifier: 'fs', apiName: 'readFile', args: { path: 'z.md' } }],
        usage: { promptTokens: 7, completionTokens: 4, totalTokens: 11 },
        finishReason: 'tool_calls',
      });
    });
  });

  describe('failures and the key', () => {
    it('fails with MODEL_FAILED giving the status, error type and message on a 401', async () => {
      server.enqueue(json(errorBody('authentication_error', 'invalid x-api-key'), 401));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /401 \(authentication_error\): invalid x-api-key/);
      assert.equal(err.details.status, 401);
      assert.equal(err.details.errorType, 'authentication_error');
    });

    it('never puts the key in the error, even when the server echoes it', async () => {
      server.enqueue(json(errorBody('authentication_error', `invalid x-api-key ${KEY}`), 401));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(JSON.stringify({ message: err.message, json: err.toJSON(), cause: String(err.cause) }).includes(KEY), false);
      assert.match(err.message, /\[redacted\]/);
    });

    it('never logs the key, at debug level, with the SDK\'s own lines included', async () => {
      const lines: string[] = [];
      model = makeModel({ logger: createLogger({ level: 'debug', sink: (line) => lines.push(line) }), sdkLogLevel: 'debug' });
      server.enqueue(stream(textAnswer('ok')), json(errorBody('authentication_error', `bad key ${KEY}`), 401));
      await model.complete(request());
      await rejection(model.complete(request()));
      assert.ok(lines.some((l) => l.includes('"model response"')));
      assert.ok(lines.some((l) => l.includes('anthropic sdk')), 'the SDK logs through hookgate\'s logger');
      assert.equal(lines.some((l) => l.includes(KEY)), false);
    });

    it('fails with CONFIG_INVALID naming the env var, and sends nothing, when the key is missing', async () => {
      delete process.env[KEY_ENV];
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, new RegExp(KEY_ENV));
      assert.equal(server.requests.length, 0);
    });

    it('reads the key at call time, and does not fall back to ANTHROPIC_AUTH_TOKEN', async () => {
      const before = process.env.ANTHROPIC_AUTH_TOKEN;
      process.env.ANTHROPIC_AUTH_TOKEN = 'token-from-elsewhere';
      try {
        process.env[KEY_ENV] = 'sk-ant-set-later-123456';
        server.enqueue(stream(textAnswer('ok')));
        await model.complete(request());
        assert.equal(server.lastRequest.headers.authorization, 'Bearer sk-ant-set-later-123456');
      } finally {
        if (before === undefined) delete process.env.ANTHROPIC_AUTH_TOKEN;
        else process.env.ANTHROPIC_AUTH_TOKEN = before;
      }
    });

    it('fails with CONFIG_INVALID when neither the request nor the config names a model', async () => {
      const err = await rejection(model.complete(request({ model: '' })));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.match(err.message, /models\.anthropic\.model/);
    });

    it('rejects with the caller\'s abort reason when the caller aborts mid-stream', async () => {
      server.enqueue(stream([messageStart(1), textStart(0), textDelta(0, 'partial')], { hold: true }));
      const controller = new AbortController();
      const reason = new Error('user pressed stop');
      const pending = model.complete(request({ signal: controller.signal, onTextDelta: () => controller.abort(reason) }));
      assert.equal(await rejection(pending), reason);
    });

    it('fails with MODEL_FAILED naming timeoutSeconds when the stream stalls after the headers', async () => {
      model = makeModel({ timeoutSeconds: 0.2 });
      server.enqueue(stream([messageStart(1), textStart(0), textDelta(0, 'slow')], { hold: true }));
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.match(err.message, /models\.anthropic\.timeoutSeconds/);
    });

    it('fails with MODEL_FAILED naming the endpoint when nothing listens there', async () => {
      const gone = server.baseUrl;
      await server.close();
      server = await FakeAnthropicServer.start();
      model = makeModel({ baseUrl: gone });
      const err = await rejection(model.complete(request()));
      assert.ok(err instanceof HookgateError);
      assert.equal(err.code, 'MODEL_FAILED');
      assert.match(err.message, /v1\/messages/);
    });
  });
});
