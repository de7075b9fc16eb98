import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readStore } from '../../helpers/cli-process.js';
import { allChunksOf, readSse, type SseEvent } from '../../helpers/sse-client.js';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { isAfter } from '../../../plugins/agent-api/conversation-stream.js';
import { joinMessageId } from '../../../plugins/agent-api/submission-joining.js';
import { dropPrefix, killWorker, startWorker, uniquePrefix, until, useQueueStore, writeQueueConfig, type WorkerProcess } from './queue-fixtures.js';
import { killRelaySubscribers, relaySubscribers, release, startServeWith, stopChild, writeStreamer } from './queue-stream-fixtures.js';

interface Chunk {
  type: string;
  position: { batch: number; index: number; live?: number };
  message?: string;
  submissionId?: string;
  answeredBySubmissionId?: string;
  status?: string;
}

const stored = (chunks: readonly Chunk[]) => chunks.filter((c) => c.position.live === undefined);
const logLines = (chunks: readonly Chunk[]) => chunks.filter((c) => c.type === 'tool-log').map((c) => Number(/^line (\d+)$/.exec(c.message ?? '')?.[1]));
const settledCount = (events: SseEvent[]) => allChunksOf<Chunk>(events).filter((c) => c.type === 'submission-settled').length;

/** Every chunk after the one before it, and no stored position twice. */
function assertOrdered(chunks: readonly Chunk[]): void {
  for (let i = 1; i < chunks.length; i++) assert.ok(isAfter(chunks[i]!.position, chunks[i - 1]!.position), `chunk ${i} (${chunks[i]!.type} ${JSON.stringify(chunks[i]!.position)}) does not follow ${JSON.stringify(chunks[i - 1]!.position)}`);
  const keys = stored(chunks).map((c) => `${c.position.batch}_${c.position.index}`);
  assert.equal(new Set(keys).size, keys.length, 'a stored position came twice');
}

/**
 * Issue 16 item 4: streams and joins across processes. `hookgate serve`
 * admits and serves the conversation stream; a `hookgate worker` child runs
 * every step; the processes share PostgreSQL and Redis (this run's own
 * schema and key prefix). The worker's live chunks reach serve's SSE readers
 * through the Redis relay; stored ones come from the store by position.
 */
describe('execution-queue: live conversation streams and joins across processes (postgres)', function () {
  const store = useQueueStore('postgres');
  this.timeout(120_000);
  let dir: string;
  let prefix: string;
  let worker: WorkerProcess | undefined;
  let serve: ChildProcess | undefined;
  let url: string;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-streams-')));
    prefix = uniquePrefix();
    await writeQueueConfig(dir, prefix, store.configLines());
    const module = await writeStreamer(dir);
    const started = await startServeWith(dir, [module]);
    serve = started.child;
    url = started.url;
    worker = await startWorker(dir, {}, [module]);
  });
  afterEach(async () => {
    if (worker) await killWorker(worker);
    worker = undefined;
    await stopChild(serve);
    serve = undefined;
    await dropPrefix(prefix);
    await store.drop();
    await rm(dir, { recursive: true, force: true });
  });

  const send = async (id: string, body: string): Promise<{ submissionId: string; offset: string }> => {
    const res = await fetch(`${url}/agents/Streamer/${id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'user', body }) });
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as { submissionId: string; offset: string };
  };
  const history = async (id: string): Promise<Chunk[]> => (await (await fetch(`${url}/agents/Streamer/${id}`)).json()) as Chunk[];
  const sse = (id: string, offset = '-1') => `${url}/agents/Streamer/${id}?live=sse&offset=${offset}`;

  it('an SSE reader on serve sees the tool log lines of a step running in the worker while it runs, then every stored chunk once, as a history read has them', async () => {
    await send('s-1', 'work please');
    let released = false;
    const { events } = await readSse(sse('s-1'), (evs) => {
      const chunks = allChunksOf<Chunk>(evs);
      // The tool waits for the release file, which only this reader writes: these lines came while the step ran.
      if (!released && logLines(chunks).length >= 3) {
        released = true;
        void release(dir, 's-1');
      }
      return settledCount(evs) >= 1;
    });
    const chunks = allChunksOf<Chunk>(events);
    assert.ok(released, 'three live tool-log lines came before the release');
    const lines = logLines(chunks);
    assert.deepEqual(lines.slice(0, 3), [1, 2, 3], 'the lines in the order the tool wrote them');
    assert.ok(chunks.filter((c) => c.type === 'tool-log').every((c) => typeof c.position.live === 'number'), 'tool-log chunks are live-only');
    assertOrdered(chunks);
    const types = chunks.map((c) => c.type);
    assert.ok(types.indexOf('tool-input') < types.indexOf('tool-log') && types.lastIndexOf('tool-log') < types.indexOf('tool-output'), types.join(','));
    assert.deepEqual(stored(chunks), await history('s-1'), 'the stored chunks are exactly what a history read returns');
    const ops = await readStore(dir, (s) => s.listOperations({}));
    assert.deepEqual(ops.map((o) => o.status), ['done']);
  });

  it('a reader that resumes from an offset taken mid-run gets each stored position once: its two reads together are the history', async () => {
    await send('s-2', 'work please');
    let firstLines = 0;
    const first = await readSse(sse('s-2'), (evs) => (firstLines = logLines(allChunksOf<Chunk>(evs)).length) >= 2);
    const firstChunks = allChunksOf<Chunk>(first.events);
    const offset = [...first.events].reverse().find((e) => e.event === 'data')?.id;
    assert.ok(offset !== undefined && firstLines >= 2, 'the first read ended mid-run, inside the tool call');
    let released = false;
    const second = await readSse(sse('s-2', offset), (evs) => {
      if (!released && logLines(allChunksOf<Chunk>(evs)).length >= 2) {
        released = true;
        void release(dir, 's-2');
      }
      return settledCount(evs) >= 1;
    }, { 'Last-Event-ID': offset });
    const secondChunks = allChunksOf<Chunk>(second.events);
    assert.ok(released, 'live lines came after the resume too');
    assertOrdered([...stored(firstChunks), ...stored(secondChunks)]);
    assert.deepEqual([...stored(firstChunks), ...stored(secondChunks)], await history('s-2'), 'nothing missing, nothing twice');
  });

  it('the relay\'s subscriber connections killed (CLIENT KILL) mid-run, once and then while the response commits: live lines come again after the reconnect and no stored chunk is lost or repeated', async () => {
    await send('s-3', 'work please');
    let killedAt = 0;
    let killed: Promise<number> | undefined;
    let released = false;
    let storm: Promise<void> | undefined;
    const { events } = await readSse(sse('s-3'), (evs) => {
      const chunks = allChunksOf<Chunk>(evs);
      const lines = logLines(chunks);
      if (killed === undefined && lines.length >= 3) {
        killedAt = Math.max(...lines);
        killed = killRelaySubscribers(prefix);
      }
      // Lines written well after the kill: the subscriber is back.
      if (killed !== undefined && !released && Math.max(...lines) >= killedAt + 5) {
        released = true;
        storm = (async () => {
          await release(dir, 's-3');
          // Kills again while the tool's result, the last turn and the settlement are committed: their events are lost.
          for (let i = 0; i < 8; i++) {
            await killRelaySubscribers(prefix);
            await new Promise((r) => setTimeout(r, 60));
          }
        })();
      }
      return settledCount(evs) >= 1;
    });
    await storm;
    assert.ok((await killed!) >= 1, 'a relay subscriber connection was killed');
    assert.ok(released, `live lines came after the kill (killed after line ${killedAt})`);
    const chunks = allChunksOf<Chunk>(events);
    assertOrdered(chunks);
    assert.deepEqual(stored(chunks), await history('s-3'), 'every stored chunk once, filled from the store by position');
    await until(async () => (await relaySubscribers(prefix)) >= 2, 20_000, 'serve\'s and the worker\'s relay subscribers to reconnect');
  });

  it('a message sent while the response runs in the worker joins it at its next model turn: one operation, the message stored once, the second submission answered by the first', async () => {
    const first = await send('s-4', 'work please');
    await readSse(sse('s-4'), (evs) => logLines(allChunksOf<Chunk>(evs)).length >= 1);
    const second = await send('s-4', 'and also this');
    // The offer is in the store before the tool is let go.
    await until(async () => (await readStore(dir, async (s) => (await s.listOperations({}))[0] && (await s.listToolSteps((await s.listOperations({}))[0]!.id, '#turn-inbox')).length >= 1)) === true, 20_000, 'the offer to be stored');
    await release(dir, 's-4');
    const { events } = await readSse(sse('s-4'), (evs) => settledCount(evs) >= 2);
    const settled = allChunksOf<Chunk>(events).filter((c) => c.type === 'submission-settled');
    const answered = settled.find((c) => c.submissionId === second.submissionId);
    assert.equal(answered?.answeredBySubmissionId, first.submissionId, JSON.stringify(settled));
    const threadId = agentThreadId('Streamer', 's-4');
    const { ops, subs, messages } = await readStore(dir, async (s) => ({
      ops: await s.listThreadOperations(threadId),
      subs: await s.listSubmissions({ threadId }),
      messages: await s.listThreadMessages(threadId, { includeCompacted: true }),
    }));
    assert.equal(ops.length, 1, 'the joined message started no operation of its own');
    assert.equal(ops[0]!.status, 'done');
    const joined = subs.find((s) => s.id === second.submissionId)!;
    assert.equal(joined.joinedInto, first.submissionId);
    assert.equal(joined.status, 'completed');
    assert.equal(messages.filter((m) => m.id === joinMessageId(second.submissionId)).length, 1);
    assert.equal(messages.filter((m) => m.role === 'user' && m.content.includes('and also this')).length, 1, 'stored once');
    // It came before the model's last turn, which saw it.
    const joinedAt = messages.findIndex((m) => m.id === joinMessageId(second.submissionId));
    assert.ok(messages.slice(joinedAt + 1).some((m) => m.role === 'assistant' && m.content === 'worked'));
  });

  it('the API process SIGKILLed while its message waits to join: a worker takes it at the next turn, and the restarted process marks it joined instead of running it again', async () => {
    const first = await send('s-6', 'work please');
    await readSse(sse('s-6'), (evs) => logLines(allChunksOf<Chunk>(evs)).length >= 1);
    const second = await send('s-6', 'and also this');
    await until(async () => (await readStore(dir, async (s) => (await s.listOperations({}))[0] && (await s.listToolSteps((await s.listOperations({}))[0]!.id, '#turn-inbox')).length >= 1)) === true, 20_000, 'the offer to be stored');
    await stopChild(serve);
    await release(dir, 's-6');
    const threadId = agentThreadId('Streamer', 's-6');
    // Nobody waits for the offer now; the worker's next model turn takes it and stores the message.
    await until(async () => readStore(dir, async (s) => (await s.listThreadOperations(threadId)).every((o) => o.status === 'done')), 30_000, 'the response to end');
    const restarted = await startServeWith(dir, [path.join(dir, 'streamer.mjs')]);
    serve = restarted.child;
    await until(async () => readStore(dir, async (s) => (await s.listSubmissions({ threadId, statuses: ['queued', 'running', 'joined'] })).length === 0), 60_000, 'both submissions to settle after the restart', 300);
    const { ops, subs, messages } = await readStore(dir, async (s) => ({
      ops: await s.listThreadOperations(threadId),
      subs: await s.listSubmissions({ threadId }),
      messages: await s.listThreadMessages(threadId, { includeCompacted: true }),
    }));
    assert.equal(messages.filter((m) => m.role === 'user' && m.content.includes('and also this')).length, 1, 'stored once');
    assert.equal(ops.length, 1, 'it joined: no operation of its own');
    const joined = subs.find((s) => s.id === second.submissionId)!;
    assert.deepEqual([joined.status, joined.joinedInto], ['completed', first.submissionId]);
  });

  it('messages racing the response\'s end are each delivered exactly once: joined (no operation of its own) or run as the next submission (not joined), never both, never lost', async () => {
    // As many as a worker runs at once (queue.concurrency 4): each first response holds a slot in its tool call.
    const ids = ['r-0', 'r-1', 'r-2', 'r-3'];
    const firsts = new Map<string, string>();
    for (const id of ids) firsts.set(id, (await send(id, 'work please')).submissionId);
    await until(async () => {
      for (const id of ids) if (!(await history(id)).some((c) => c.type === 'tool-input')) return false;
      return true;
    }, 60_000, 'every first response to be inside its tool call');
    // Released together; each second message goes a little later than the one before, around the last model turn.
    const seconds = new Map<string, string>();
    await Promise.all(ids.map((id) => release(dir, id)));
    await Promise.all(ids.map(async (id, i) => {
      await new Promise((r) => setTimeout(r, i * 120));
      seconds.set(id, (await send(id, `second for ${id}`)).submissionId);
    }));
    await until(async () => readStore(dir, async (s) => (await s.listSubmissions({ statuses: ['queued', 'running', 'joined'] })).length === 0), 90_000, 'every submission to settle', 300);
    const outcomes: string[] = [];
    for (const id of ids) {
      const threadId = agentThreadId('Streamer', id);
      const { ops, subs, messages } = await readStore(dir, async (s) => ({
        ops: await s.listThreadOperations(threadId),
        subs: await s.listSubmissions({ threadId }),
        messages: await s.listThreadMessages(threadId, { includeCompacted: true }),
      }));
      const second = subs.find((s) => s.id === seconds.get(id))!;
      assert.equal(second.status, 'completed', `${id}: ${JSON.stringify(second)}`);
      assert.equal(messages.filter((m) => m.role === 'user' && m.content.includes(`second for ${id}`)).length, 1, `${id}: the second message is stored exactly once`);
      const joinedMessages = messages.filter((m) => m.id === joinMessageId(second.id)).length;
      if (second.joinedInto !== undefined) {
        assert.equal(second.joinedInto, firsts.get(id));
        assert.deepEqual([ops.length, joinedMessages], [1, 1], `${id}: joined, so no operation of its own`);
        outcomes.push('joined');
      } else {
        assert.deepEqual([ops.length, joinedMessages], [2, 0], `${id}: not joined, so it ran as its own submission`);
        assert.equal(second.operationId, ops[1]!.id);
        outcomes.push('own');
      }
      assert.ok(ops.every((o) => o.status === 'done'), `${id}: ${ops.map((o) => o.status).join(',')}`);
    }
    // Which way each went depends on timing; the spec only requires each to be one of the two.
    assert.equal(outcomes.length, ids.length);
  });
});
