import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../config/load-config.js';
import { HookgateError } from '../../../kernel/errors.js';
import { InvalidRequestError } from '../../../plugins/agent-api/agent-errors.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { FakeOpenAiServer, finishChunk, sse, textChunk, toolCallChunk } from '../../helpers/fake-openai-server.js';

const KEY_ENV = 'HOOKGATE_SPEC_IMAGES_KEY';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==';
const GIF = 'R0lGODlhAQABAAAAACw=';

function Viewer(): string {
  useModel('openai/gpt-vision-spec');
  return 'Describe what you are shown.';
}

function Looker(): string {
  useModel('openai/gpt-vision-spec');
  useTool({ name: 'look', description: 'Looks closer', run: () => 'looked' });
  return 'Look at what you are shown.';
}

type ChatPart = { type: string; text?: string; image_url?: { url: string } };
type ChatMessage = { role: string; content: string | ChatPart[] | null };

/** The user messages of a recorded Chat Completions request, with their image URLs. */
function userTurns(body: { messages: ChatMessage[] }): Array<{ text: string; images: string[] }> {
  return body.messages
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string'
        ? { text: m.content, images: [] }
        : { text: (m.content ?? []).filter((p) => p.type === 'text').map((p) => p.text).join(''), images: (m.content ?? []).filter((p) => p.type === 'image_url').map((p) => p.image_url!.url) },
    );
}

/** Document 001's user attachments reach the model: through the runtime, the store and the OpenAI wire, across a restart. */
describe('agent-api: image attachments reach the model', function () {
  this.timeout(30_000);
  let dir: string;
  let server: FakeOpenAiServer;
  let runtime: AgentRuntimeHandle | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-images-')));
    server = await FakeOpenAiServer.start();
    process.env[KEY_ENV] = 'sk-spec-images-0123456789';
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await server.close();
    delete process.env[KEY_ENV];
    await rm(dir, { recursive: true, force: true });
  });

  async function startHere(): Promise<AgentRuntimeHandle> {
    const config = loadConfig({ cwd: dir, env: { HOOKGATE_MODELS__OPENAI__BASE_URL: server.baseUrl, HOOKGATE_MODELS__OPENAI__API_KEY_ENV: KEY_ENV } });
    runtime = await start({ agents: [Viewer, Looker], config, db: { sqlite: path.join(dir, 'hookgate.db') } });
    return runtime;
  }

  it('sends them as image parts, keeps them in the history for later turns, and after a restart reads them from the store', async () => {
    await startHere();
    server.enqueue(sse([textChunk('A tiny picture.'), finishChunk('stop')]), sse([textChunk('Still a tiny picture.'), finishChunk('stop')]));
    const viewer = init(Viewer, { id: 'v-1' });
    const reply = await viewer.dispatch({
      message: { kind: 'user', body: 'What is this?', attachments: [{ type: 'image', data: PNG, mimeType: 'image/PNG', filename: 'dot.png' }, { type: 'image', data: GIF, mimeType: 'image/gif' }] },
    });
    assert.equal(reply.text, 'A tiny picture.');
    assert.deepEqual(userTurns(server.lastRequest.body as never), [{ text: 'What is this?', images: [`data:image/png;base64,${PNG}`, `data:image/gif;base64,${GIF}`] }]);

    // A text-only send on the same instance: the model sees the earlier images in the history, and no new ones.
    await viewer.dispatch('And now?');
    assert.deepEqual(userTurns(server.lastRequest.body as never), [
      { text: 'What is this?', images: [`data:image/png;base64,${PNG}`, `data:image/gif;base64,${GIF}`] },
      { text: 'And now?', images: [] },
    ]);
    await runtime!.stop();
    runtime = undefined;

    // A new runtime on the same file: the history (and its images) comes from the store.
    await startHere();
    server.enqueue(sse([textChunk('Yes.'), finishChunk('stop')]));
    await init(Viewer, { id: 'v-1' }).dispatch('Same picture?');
    const turns = userTurns(server.lastRequest.body as never);
    assert.deepEqual(turns.map((t) => t.images.length), [2, 0, 0]);
    assert.equal(turns[0]!.images[0], `data:image/png;base64,${PNG}`);
  });

  it('a send with images that joins a live response brings its images to the next model turn', async () => {
    await startHere();
    server.enqueue(
      // The first turn streams slowly, so the second send arrives while the response is live.
      sse([toolCallChunk(0, { id: 'call_1', name: 'agent__look', arguments: '{}' }), finishChunk('tool_calls')], { delayMs: 400 }),
      sse([textChunk('Both seen.'), finishChunk('stop')]),
    );
    const looker = init(Looker, { id: 'l-1' });
    const first = looker.dispatch('Look at this');
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    const second = looker.dispatch({ message: { kind: 'user', body: 'and this one', attachments: [{ type: 'image', data: GIF, mimeType: 'image/gif' }] } });
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.text, 'Both seen.');
    assert.equal(b.text, 'Both seen.', 'the joined send settles with the response it joined');
    assert.equal(server.requests.length, 2);
    assert.deepEqual(userTurns(server.lastRequest.body as never), [
      { text: 'Look at this', images: [] },
      { text: 'and this one', images: [`data:image/gif;base64,${GIF}`] },
    ]);
    const stored = await runtime!.kernel.store.listThreadMessages('agent:Looker:l-1');
    assert.deepEqual(stored.filter((m) => m.role === 'user').map((m) => [m.content, m.images?.length ?? 0]), [['Look at this', 0], ['and this one', 1]]);
  });

  it('refuses more images than one message carries, before anything is stored', async () => {
    await startHere();
    const many = Array.from({ length: 17 }, () => ({ type: 'image' as const, data: GIF, mimeType: 'image/gif' }));
    await assert.rejects(init(Viewer, { id: 'v-2' }).dispatch({ message: { kind: 'user', body: 'lots', attachments: many } }), (err: unknown) => {
      assert.ok(err instanceof InvalidRequestError);
      assert.match(err.message, /message\.attachments has 17 images; at most 16/);
      return true;
    });
    assert.equal(await runtime!.kernel.store.getThread('agent:Viewer:v-2'), undefined);
    assert.equal(server.requests.length, 0);
  });
});

/** The core's own check on execAgent's prompt images: a clear error, nothing stored. */
describe('runtime: execAgent promptImages', function () {
  this.timeout(30_000);
  let runtime: AgentRuntimeHandle | undefined;
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
  });

  it('refuses malformed images naming the field, and stores valid ones with the prompt', async () => {
    runtime = await start({ agents: [Viewer], env: {} });
    const kernel = runtime.kernel;
    kernel.agents.define({ id: 'looker', model: { provider: 'scripted', turns: [{ text: 'seen' }] } as never, tools: [] });
    const cases: Array<[unknown, RegExp]> = [
      ['not-an-array', /^promptImages: must be an array/],
      [[{ mediaType: 'text/plain', data: GIF }], /^promptImages\[0\]\.mediaType: must be an image\/\* media type in lowercase, got "text\/plain"/],
      [[{ mediaType: 'image/png', data: 'data:image/png;base64,AAAA' }], /^promptImages\[0\]\.data: must be padded standard base64/],
      [[{ mediaType: 'image/png', data: 'AAA' }], /^promptImages\[0\]\.data: must be padded standard base64/],
      [[{ mediaType: 'image/png', data: '' }], /^promptImages\[0\]\.data: must be a non-empty base64 string/],
      [[{ mediaType: 'image/png', data: GIF, url: 'http://x' }], /^promptImages\[0\]\.url: unknown field/],
      [[{ mediaType: 'image/png', data: 'A'.repeat(14 * 1024 * 1024 + 4) }], /^promptImages\[0\]\.data: is 14680068 base64 characters, more than the 14680064/],
      [Array.from({ length: 17 }, () => ({ mediaType: 'image/gif', data: GIF })), /^promptImages: at most 16 images, got 17/],
    ];
    for (const [promptImages, pattern] of cases) {
      await assert.rejects(kernel.execAgent({ agentId: 'looker', prompt: 'look', promptImages: promptImages as never }), (err: unknown) => {
        assert.ok(err instanceof HookgateError && err.code === 'PROMPT_INVALID', String(err));
        assert.match(err.message, pattern);
        return true;
      });
    }
    assert.deepEqual(await kernel.store.listOperations({}), []);
    const done = await (await kernel.execAgent({ agentId: 'looker', prompt: 'look', promptImages: [{ mediaType: 'image/gif', data: GIF }] })).completed();
    assert.equal(done.status, 'done');
    const [first] = await kernel.store.listMessages(done.id);
    assert.deepEqual(first!.images, [{ mediaType: 'image/gif', data: GIF }]);
  });
});
