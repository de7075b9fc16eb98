import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { init } from '../../../plugins/agent-api/init.js';
import { currentRuntime, start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { formatOffset, type ConversationStreamChunk } from '../../../plugins/agent-api/conversation-stream.js';
import { useAgentStart } from '../../../plugins/agent-api/use-agent-events.js';
import { useDataWriter } from '../../../plugins/agent-api/use-data-writer.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { listenAgentRouter, type AgentRouterServer } from '../../helpers/agent-router-server.js';
import { allChunksOf, readSse } from '../../helpers/sse-client.js';

const call = (apiName: string) => ({ toolCalls: [{ identifier: 'agent', apiName, args: {} }] });

/** Released by the spec once it saw the first tool's part live: the second tool waits for it. */
let release: () => void = () => undefined;
let released = Promise.resolve();
function arm(): void {
  released = new Promise<void>((resolve) => {
    release = resolve;
  });
}

/** A response that writes a part at its start, one per tool, and waits in the second tool until the spec saw the first part. */
function Progress(): string {
  useModel({ provider: 'scripted', turns: [call('fetch'), call('wait'), { text: 'done' }, call('fetch'), call('wait'), { text: 'done again' }] });
  const status = useDataWriter('status');
  const rows = useDataWriter('rows');
  useAgentStart(() => status('started'));
  useTool({ name: 'fetch', description: 'Fetches', run: () => { rows([1, 2]); rows([3]); status('fetched'); return 'ok'; } });
  useTool({ name: 'wait', description: 'Waits', run: async () => { await released; status('waited'); return 'ok'; } });
  return 'Report progress.';
}

type DataChunk = Extract<ConversationStreamChunk, { type: 'data-part' }>;
const dataOf = (chunks: readonly ConversationStreamChunk[]) => chunks.filter((c): c is DataChunk => c.type === 'data-part').map((c) => [c.name, c.data]);
const offsets = (chunks: readonly { position: ConversationStreamChunk['position'] }[]) => chunks.map((c) => `${formatOffset(c.position)}.${c.position.live ?? 0}`);
/** The chunks a history read returns too (live-only ones, the model's text deltas, left out). */
const stored = <C extends { position: ConversationStreamChunk['position'] }>(chunks: readonly C[]) => chunks.filter((c) => c.position.live === undefined);

/** useDataWriter parts in the conversation stream: live to onEvent and SSE, positioned, resumable, durable. */
describe('agent-api: data parts in the conversation stream', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-data-stream-')));
    arm();
  });
  afterEach(async () => {
    release();
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('onEvent gets each part when the step that wrote it commits, before the response ends, in write order', async () => {
    runtime = await start({ agents: [Progress], env: {} });
    const seen: ConversationStreamChunk[] = [];
    let partsBeforeRelease: unknown[] = [];
    const reply = await init(Progress, { id: 'p-1' }).dispatch('go', {
      onEvent: (chunk) => {
        seen.push(chunk);
        // The second tool is still waiting: what arrived so far arrived live.
        if (chunk.type === 'data-part' && chunk.data === 'fetched') {
          partsBeforeRelease = dataOf(seen);
          release();
        }
      },
    });
    assert.deepEqual(partsBeforeRelease, [['status', 'started'], ['rows', [1, 2]], ['rows', [3]], ['status', 'fetched']]);
    assert.deepEqual(dataOf(seen), [['status', 'started'], ['rows', [1, 2]], ['rows', [3]], ['status', 'fetched'], ['status', 'waited']]);
    assert.deepEqual(reply.data, { status: ['started', 'fetched', 'waited'], rows: [[1, 2], [3]] });
    const order = offsets(seen);
    assert.deepEqual([...order].sort(), order, 'positions increase');
    assert.ok(seen.some((c) => c.type === 'text-delta'), 'the model\'s text streamed');
    assert.equal(new Set(order).size, order.length, 'no position twice');
    // A part comes after the message its commit stored: the start's after the prompt, a tool's after its output.
    const types = seen.map((c) => (c.type === 'data-part' ? `data:${String(c.data)}` : c.type));
    assert.ok(types.indexOf('data:started') === 1 && types[0] === 'message-appended', types.join(','));
    assert.ok(types.indexOf('data:fetched') > types.indexOf('tool-output'), types.join(','));
    assert.equal(seen.at(-1)?.type, 'submission-settled');
    const data = seen.filter((c): c is DataChunk => c.type === 'data-part');
    assert.ok(data.every((c) => c.messageId === (seen.find((m) => m.type === 'message-started') as { messageId: string }).messageId));
    // What was seen live is what a history read returns.
    assert.deepEqual((await currentRuntime('spec').feed.read(agentThreadId('Progress', 'p-1'))).chunks, stored(seen));
  });

  it('a later response keeps the earlier parts in the history at their positions; a read from any offset gets exactly what follows', async () => {
    runtime = await start({ agents: [Progress], env: {}, db: { sqlite: path.join(dir, 'parts.db') } });
    release();
    const handle = init(Progress, { id: 'p-2' });
    const first: ConversationStreamChunk[] = [];
    await handle.dispatch('one', { onEvent: (c) => first.push(c) });
    arm();
    release();
    const second: ConversationStreamChunk[] = [];
    const reply = await handle.dispatch('two', { onEvent: (c) => second.push(c) });
    assert.deepEqual(reply.data, { status: ['started', 'fetched', 'waited'], rows: [[1, 2], [3]] });
    const thread = agentThreadId('Progress', 'p-2');
    const all = (await currentRuntime('spec').feed.read(thread)).chunks;
    assert.deepEqual(all, stored([...first, ...second]), 'the first response\'s parts stay where they were streamed');
    assert.equal(dataOf(all).length, 10);
    for (let i = 0; i < all.length; i++) {
      const rest = (await currentRuntime('spec').feed.read(thread, all[i]!.position)).chunks;
      assert.deepEqual(rest, all.slice(i + 1), `read after chunk ${i} (${all[i]!.type})`);
    }
    // Durable: a restarted runtime on the same file projects the same stream.
    await runtime.stop();
    runtime = await start({ agents: [Progress], env: {}, db: { sqlite: path.join(dir, 'parts.db') } });
    assert.deepEqual((await currentRuntime('spec').feed.read(thread)).chunks, all);
  });

  describe('over HTTP (SSE)', () => {
    let server: AgentRouterServer;
    let base: string;
    before(async () => {
      server = await listenAgentRouter(Progress, '/agents/progress');
      base = server.base;
    });
    after(() => server.close());

    it('streams the parts live, and a client that reconnects after a part gets the rest with no duplicate and no gap', async () => {
      runtime = await start({ agents: [Progress], env: {} });
      const res = await fetch(`${base}/s-1`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ kind: 'user', body: 'go' }) });
      assert.equal(res.status, 202);
      const admitted = (await res.json()) as { offset: string; submissionId: string };
      type Chunk = DataChunk | { type: string; position: DataChunk['position']; submissionId?: string };
      // First connection: leaves as soon as it saw the 'fetched' part (the second tool is still waiting).
      const firstLeg = await readSse(`${base}/s-1?offset=${admitted.offset}&live=sse`, (events) => allChunksOf<Chunk>(events).some((c) => c.type === 'data-part' && (c as DataChunk).data === 'fetched'));
      const before = allChunksOf<Chunk>(firstLeg.events);
      assert.deepEqual(dataOf(before as ConversationStreamChunk[]), [['status', 'started'], ['rows', [1, 2]], ['rows', [3]], ['status', 'fetched']]);
      const lastId = firstLeg.events.filter((e) => e.event === 'data').at(-1)!.id!;
      release();
      const secondLeg = await readSse(`${base}/s-1?live=sse`, (events) => allChunksOf<Chunk>(events).some((c) => c.type === 'submission-settled' && c.submissionId === admitted.submissionId), { 'Last-Event-ID': lastId });
      const after = allChunksOf<Chunk>(secondLeg.events);
      const joined = [...before, ...after];
      assert.equal(new Set(offsets(joined)).size, joined.length, 'no position twice across the reconnect');
      const history = (await (await fetch(`${base}/s-1?offset=${admitted.offset}`)).json()) as Chunk[];
      assert.deepEqual(stored(joined), history, 'the two legs together are the history: nothing skipped');
      assert.deepEqual(dataOf(after as ConversationStreamChunk[]), [['status', 'waited']]);
    });
  });
});
