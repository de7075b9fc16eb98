import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../config/load-config.js';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { init } from '../../../plugins/agent-api/init.js';
import { currentRuntime, start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { isAfter, type ConversationStreamChunk } from '../../../plugins/agent-api/conversation-stream.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import * as openai from '../../helpers/fake-openai-server.js';
import * as anthropic from '../../helpers/fake-anthropic-server.js';

const KEY_ENV = 'HOOKGATE_SPEC_DELTAS_KEY';

function OpenAiWriter(): string {
  useModel('openai/gpt-deltas-spec');
  return 'Write.';
}

function ClaudeWriter(): string {
  useModel('anthropic/claude-deltas-spec');
  return 'Write.';
}

type Delta = Extract<ConversationStreamChunk, { type: 'text-delta' }>;

/** The model's text as the provider streams it (the SDKs' streaming APIs, their wire faked on loopback) reaches onEvent live. */
describe('agent-api: text deltas in the conversation stream', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-deltas-')));
    process.env[KEY_ENV] = 'sk-spec-deltas-0123456789';
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    delete process.env[KEY_ENV];
    await rm(dir, { recursive: true, force: true });
  });

  /** Sends one message with onEvent and checks the deltas: live (nothing of the turn stored yet when the first came), in order, superseded by the stored turn. */
  async function sendAndCheck(agent: () => string, identity: string): Promise<void> {
    const seen: ConversationStreamChunk[] = [];
    let storedAtFirstDelta: Promise<number> | undefined;
    const thread = agentThreadId(identity, 'w-1');
    const reply = await init(agent as never, { id: 'w-1' }).dispatch('write', {
      onEvent: (chunk) => {
        seen.push(chunk);
        if (chunk.type === 'text-delta' && storedAtFirstDelta === undefined) {
          storedAtFirstDelta = runtime!.kernel.store.listThreadMessages(thread).then((m) => m.filter((x) => x.role === 'assistant').length);
        }
      },
    });
    assert.equal(reply.text, 'Hello, streaming world');
    const deltas = seen.filter((c): c is Delta => c.type === 'text-delta');
    assert.deepEqual(deltas.map((d) => d.delta), ['Hello', ', streaming', ' world']);
    assert.equal(await storedAtFirstDelta, 0, 'the first delta came before the turn was stored: it was streamed, not read back');
    const started = seen.find((c) => c.type === 'message-started') as Extract<ConversationStreamChunk, { type: 'message-started' }>;
    assert.ok(deltas.every((d) => d.messageId === started.messageId), 'the deltas preview the message the stored turn completes');
    assert.ok(seen.indexOf(deltas.at(-1)!) < seen.indexOf(started), 'the previews come before the stored turn');
    for (let i = 1; i < seen.length; i++) assert.ok(isAfter(seen[i]!.position, seen[i - 1]!.position), `position ${i} does not follow ${i - 1}`);
    const history = (await currentRuntime('spec').feed.read(thread)).chunks;
    assert.deepEqual(history, seen.filter((c) => c.position.live === undefined), 'the deltas are live-only; the stored turn carries the whole text');
    assert.deepEqual(history.filter((c) => c.type === 'message-delta').map((c) => (c as { delta: string }).delta), ['Hello, streaming world']);
  }

  it('OpenAI Chat Completions (stream: true): each content chunk is one text-delta', async () => {
    const server = await openai.FakeOpenAiServer.start();
    try {
      server.enqueue(openai.sse([openai.roleChunk(), openai.textChunk('Hello'), openai.textChunk(', streaming'), openai.textChunk(' world'), openai.finishChunk('stop')], { delayMs: 60 }));
      const config = loadConfig({ cwd: dir, env: { HOOKGATE_MODELS__OPENAI__BASE_URL: server.baseUrl, HOOKGATE_MODELS__OPENAI__API_KEY_ENV: KEY_ENV } });
      runtime = await start({ agents: [OpenAiWriter], config });
      await sendAndCheck(OpenAiWriter, 'OpenAiWriter');
      assert.equal((server.lastRequest.body as { stream?: boolean }).stream, true);
    } finally {
      await runtime?.stop();
      runtime = undefined;
      await server.close();
    }
  });

  it('Anthropic Messages (stream: true): each text_delta event is one text-delta', async () => {
    const server = await anthropic.FakeAnthropicServer.start();
    try {
      server.enqueue(
        anthropic.stream(
          [anthropic.messageStart(10), anthropic.textStart(0), anthropic.textDelta(0, 'Hello'), anthropic.textDelta(0, ', streaming'), anthropic.textDelta(0, ' world'), anthropic.blockStop(0), anthropic.messageDelta('end_turn', 5), anthropic.messageStop()],
          { delayMs: 60 },
        ),
      );
      const config = loadConfig({ cwd: dir, env: { HOOKGATE_MODELS__ANTHROPIC__BASE_URL: server.baseUrl, HOOKGATE_MODELS__ANTHROPIC__API_KEY_ENV: KEY_ENV } });
      runtime = await start({ agents: [ClaudeWriter], config });
      await sendAndCheck(ClaudeWriter, 'ClaudeWriter');
    } finally {
      await runtime?.stop();
      runtime = undefined;
      await server.close();
    }
  });
});
