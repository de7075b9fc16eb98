import assert from 'node:assert/strict';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { init } from '../../../plugins/agent-api/init.js';
import { currentRuntime, start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { isAfter, type ConversationStreamChunk } from '../../../plugins/agent-api/conversation-stream.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { listenAgentRouter, type AgentRouterServer } from '../../helpers/agent-router-server.js';
import { allChunksOf, readSse } from '../../helpers/sse-client.js';

let release: () => void = () => undefined;
let released = Promise.resolve();
/** Opened once the spec's reader is attached: a line logged before anyone follows is seen by no one (live-only). */
let attach: () => void = () => undefined;
let attached = Promise.resolve();
function arm(): void {
  released = new Promise<void>((resolve) => (release = resolve));
  attached = new Promise<void>((resolve) => (attach = resolve));
}

/** A tool that logs progress, waits until the spec saw the line, logs again and returns. */
function Builder(): string {
  useModel({ provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'agent', apiName: 'build', args: {} }] }, { text: 'built' }] });
  useTool({
    name: 'build',
    description: 'Builds',
    run: async ({ log }: { log: { info(m: string, a?: Record<string, unknown>): void; warn(m: string): void } }) => {
      await attached;
      log.info('compiling', { files: 3 });
      await released;
      log.warn('slow disk');
      return 'ok';
    },
  });
  return 'Build.';
}

type LogChunk = Extract<ConversationStreamChunk, { type: 'tool-log' }>;

/** defineTool's `context.log` lines in the conversation stream: live-only `tool-log` chunks attributed to their call. */
describe('agent-api: tool log lines in the conversation stream', function () {
  this.timeout(30_000);
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(() => arm());
  afterEach(async () => {
    attach();
    release();
    await runtime?.stop();
    runtime = undefined;
  });

  it('onEvent gets each line while the tool runs, between its tool-input and tool-output, positioned after the last stored chunk; a history read has none', async () => {
    runtime = await start({ agents: [Builder], env: {} });
    const seen: ConversationStreamChunk[] = [];
    await init(Builder, { id: 'b-1' }).dispatch('go', {
      onEvent: (chunk) => {
        seen.push(chunk);
        if (chunk.type === 'tool-input') attach();
        if (chunk.type === 'tool-log' && chunk.message === 'compiling') release();
      },
    });
    const logs = seen.filter((c): c is LogChunk => c.type === 'tool-log');
    assert.deepEqual(logs.map((l) => [l.level, l.message, l.attributes]), [['info', 'compiling', { files: 3 }], ['warn', 'slow disk', undefined]]);
    const input = seen.find((c) => c.type === 'tool-input') as Extract<ConversationStreamChunk, { type: 'tool-input' }>;
    assert.ok(logs.every((l) => l.toolCallId === input.toolCallId && l.conversationId === input.conversationId));
    const types = seen.map((c) => c.type);
    assert.ok(types.indexOf('tool-input') < types.indexOf('tool-log') && types.lastIndexOf('tool-log') < types.indexOf('tool-output'), types.join(','));
    for (let i = 1; i < seen.length; i++) assert.ok(isAfter(seen[i]!.position, seen[i - 1]!.position), `position ${i} does not follow ${i - 1}`);
    assert.ok(logs.every((l) => typeof l.position.live === 'number'), 'a live-only chunk says so in its position');
    const history = (await currentRuntime('spec').feed.read(agentThreadId('Builder', 'b-1'))).chunks;
    assert.deepEqual(history, seen.filter((c) => c.position.live === undefined), 'log lines are live-only; everything else is stored');
  });

  describe('over HTTP (SSE)', () => {
    let server: AgentRouterServer;
    let base: string;
    before(async () => {
      server = await listenAgentRouter(Builder, '/agents/builder');
      base = server.base;
    });
    after(() => server.close());

    it('streams a line live; a client that reconnects with the id of that frame gets the stored rest, not the line again', async () => {
      runtime = await start({ agents: [Builder], env: {} });
      const res = await fetch(`${base}/s-1`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ kind: 'user', body: 'go' }) });
      const admitted = (await res.json()) as { offset: string; submissionId: string };
      type Chunk = { type: string; message?: string; submissionId?: string; position: { batch: number; index: number; live?: number } };
      const first = await readSse(`${base}/s-1?offset=${admitted.offset}&live=sse`, (events) => {
        const chunks = allChunksOf<Chunk>(events);
        if (chunks.some((c) => c.type === 'tool-input')) attach();
        return chunks.some((c) => c.type === 'tool-log');
      });
      const before = allChunksOf<Chunk>(first.events);
      assert.equal(before.at(-1)?.message, 'compiling');
      const lastId = first.events.filter((e) => e.event === 'data').at(-1)!.id!;
      release();
      const second = await readSse(`${base}/s-1?live=sse`, (events) => allChunksOf<Chunk>(events).some((c) => c.type === 'submission-settled' && c.submissionId === admitted.submissionId), { 'Last-Event-ID': lastId });
      const after = allChunksOf<Chunk>(second.events);
      assert.ok(!after.some((c) => c.message === 'compiling'), 'the line came again');
      const stored = (await (await fetch(`${base}/s-1?offset=${admitted.offset}`)).json()) as Chunk[];
      assert.deepEqual([...before, ...after].filter((c) => c.position.live === undefined), stored, 'no stored chunk lost or doubled across the reconnect');
    });
  });
});
