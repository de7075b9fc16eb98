import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import * as v from 'valibot';
import { createAgentRouter } from '../../../../plugins/agent-api/http/agent-router.js';
import { start, type AgentRuntimeHandle } from '../../../../plugins/agent-api/start.js';
import { useModel } from '../../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../../plugins/agent-api/use-tool.js';
import { InvalidRequestError } from '../../../../plugins/agent-api/agent-errors.js';
import { chunksOf, readSse } from '../../../helpers/sse-client.js';

type Chunk = { type: string; position: { batch: number; index: number }; submissionId?: string; outcome?: string; message?: { parts: Array<{ type: string; id?: string; mediaType?: string; text?: string }> } };

/** Answers with a tool call, then text: a stream with every chunk kind of a response. */
function Helper(): string {
  const lookup = { toolCalls: [{ identifier: 'agent', apiName: 'lookup', args: { q: 'x' } }] };
  // Two sends' worth of turns (a script goes on across an instance's sends); the answer comes a moment after the tool.
  useModel({ provider: 'scripted', turns: [lookup, { text: 'found it', delayMs: 300 }, lookup, { text: 'found again', delayMs: 300 }] });
  useTool({ name: 'lookup', description: 'Looks up', input: v.object({ q: v.string() }), run: () => ({ hit: 1 }) });
  return 'You help.';
}

/** A model turn that takes long enough to be aborted. */
function Sleeper(): string {
  useModel({ provider: 'scripted', turns: [{ text: 'late', delayMs: 20_000 }] });
  return 'You sleep.';
}

/** Mounted but never registered with the runtime. */
function Stranger(): string {
  useModel({ provider: 'scripted', turns: [{ text: 'x' }] });
  return '';
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

/** createAgentRouter over real HTTP on loopback: a Koa app mounting two agents' routers under /agents/<name>. */
describe('agent-api: createAgentRouter over HTTP', function () {
  this.timeout(30_000);
  let runtime: AgentRuntimeHandle | undefined;
  let server: Server;
  let base: string;

  before(async () => {
    const app = new Koa();
    const root = new Router();
    for (const [name, agent] of [['helper', Helper], ['sleeper', Sleeper], ['stranger', Stranger]] as const) {
      const router = createAgentRouter(agent, { heartbeatMs: 50, pollMs: 200 });
      root.use(`/agents/${name}`, router.routes());
    }
    app.use(root.routes());
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agents`;
  });
  after(async () => {
    await runtime?.stop();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
    fetch(`${base}${path}`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const untilSettled = (submissionId: string) => (events: Parameters<typeof chunksOf>[0]) => chunksOf<Chunk>(events).some((c) => c.type === 'submission-settled' && c.submissionId === submissionId);

  it('answers 503 runtime_unavailable with Retry-After before a runtime is started', async () => {
    const res = await post('/helper/i-0', { kind: 'user', body: 'hi' });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '1');
    assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'runtime_unavailable');
    runtime = await start({ agents: [Helper, Sleeper], env: {} });
  });

  it('throws at creation for an agent whose identity cannot be resolved', () => {
    assert.throws(() => createAgentRouter((() => '') as never), InvalidRequestError);
    const bad = () => '';
    bad.agentName = '1-bad';
    assert.throws(() => createAgentRouter(bad), InvalidRequestError);
  });

  it('POST /:id admits a message: 202 with streamUrl, offset, submissionId and uid; the stream from that offset ends with its settlement', async () => {
    const res = await post('/helper/i-1?x=1', { kind: 'user', body: 'find x' });
    assert.equal(res.status, 202);
    const body = (await res.json()) as { streamUrl: string; offset: string; submissionId: string; uid: string };
    assert.equal(body.streamUrl, `${base}/helper/i-1`);
    assert.equal(res.headers.get('location'), body.streamUrl);
    assert.equal(res.headers.get('stream-next-offset'), body.offset);
    assert.equal(body.offset, '-1', 'a new instance: its response is the whole stream');
    assert.match(body.uid, /^inst_/);
    const { events, status, contentType } = await readSse(`${body.streamUrl}?offset=${body.offset}`, untilSettled(body.submissionId));
    assert.equal(status, 200);
    assert.match(contentType ?? '', /^text\/event-stream/);
    const types = chunksOf<Chunk>(events).map((c) => c.type);
    assert.deepEqual(types, ['message-appended', 'message-started', 'tool-input', 'message-completed', 'tool-output', 'message-started', 'message-delta', 'message-completed', 'submission-settled']);
    // The JSON read of the history is the same chunks.
    const history = await fetch(`${base}/helper/i-1?offset=-1`);
    assert.deepEqual(await history.json(), chunksOf(events));
    const headRes = await fetch(`${base}/helper/i-1`, { method: 'HEAD' });
    assert.equal(headRes.status, 200);
    assert.equal(headRes.headers.get('stream-next-offset'), events.filter((e) => e.event === 'data').at(-1)?.id);

    // A second send to the same instance: its offset skips the first response, and the uid is echoed.
    const again = (await (await post('/helper/i-1', { kind: 'user', body: 'again', uid: body.uid })).json()) as typeof body;
    assert.equal(again.uid, body.uid);
    assert.notEqual(again.offset, '-1');
    const second = await readSse(`${base}/helper/i-1?offset=${again.offset}&live=sse`, untilSettled(again.submissionId));
    const chunks = chunksOf<Chunk>(second.events);
    assert.equal(chunks[0]?.type, 'message-appended');
    assert.ok(chunks.every((c) => c.submissionId === undefined || c.submissionId === again.submissionId), 'nothing of the first response');
  });

  it('an SSE reader that disconnects mid-response and resumes with Last-Event-ID gets every chunk once, in position order', async () => {
    const { submissionId } = (await (await post('/helper/i-2', { kind: 'user', body: 'find' })).json()) as { submissionId: string };
    // Connected while the response runs; dropped after its first data event.
    const first = await readSse(`${base}/helper/i-2`, (events) => events.some((e) => e.event === 'data'));
    const firstData = first.events.filter((e) => e.event === 'data');
    const before = chunksOf<Chunk>(firstData);
    const settledAlready = untilSettled(submissionId)(firstData);
    const resumed = settledAlready ? [] : chunksOf<Chunk>((await readSse(`${base}/helper/i-2`, untilSettled(submissionId), { 'Last-Event-ID': firstData.at(-1)!.id! })).events);
    const seen = [...before, ...resumed];
    const keys = seen.map((c) => offsetOf(c.position));
    assert.equal(new Set(keys).size, keys.length, 'no position twice');
    assert.deepEqual([...keys].sort(), keys, 'in position order');
    const full = (await (await fetch(`${base}/helper/i-2?offset=-1`)).json()) as Chunk[];
    assert.deepEqual(seen, full, 'together, exactly the stream');
    // Resumed from an offset inside the response: the chunks after it.
    const fromMiddle = chunksOf<Chunk>((await readSse(`${base}/helper/i-2?offset=${offsetOf(full[2]!.position)}`, untilSettled(submissionId))).events);
    assert.deepEqual(fromMiddle, full.slice(3));
  });

  it('an idle stream gets heartbeats', async () => {
    const { submissionId } = (await (await post('/helper/i-3', { kind: 'user', body: 'find' })).json()) as { submissionId: string };
    await readSse(`${base}/helper/i-3`, untilSettled(submissionId));
    const idle = await readSse(`${base}/helper/i-3`, (_events, comments) => comments >= 2);
    assert.ok(idle.comments >= 2);
  });

  it('POST /:id/abort aborts the running submission: its settlement is aborted; an idle instance answers aborted: false', async () => {
    const { submissionId, offset } = (await (await post('/sleeper/s-1', { kind: 'user', body: 'sleep' })).json()) as { submissionId: string; offset: string };
    const res = await fetch(`${base}/sleeper/s-1/abort`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { aborted: true });
    const chunks = chunksOf<Chunk>((await readSse(`${base}/sleeper/s-1?offset=${offset}`, untilSettled(submissionId))).events);
    assert.equal(chunks.at(-1)?.outcome, 'aborted');
    assert.deepEqual(await (await fetch(`${base}/sleeper/s-1/abort`, { method: 'POST' })).json(), { aborted: false });
  });

  it('GET /:id/attachments/:attachmentId serves the stored bytes with their media type; unknown ids are attachment_not_found', async () => {
    const message = { kind: 'user', body: 'look', attachments: [{ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png', filename: 'a.png' }] };
    const { submissionId } = (await (await post('/helper/i-4', message)).json()) as { submissionId: string };
    const chunks = chunksOf<Chunk>((await readSse(`${base}/helper/i-4`, untilSettled(submissionId))).events);
    const file = chunks[0]!.message!.parts.find((p) => p.type === 'file')!;
    assert.equal(file.mediaType, 'image/png');
    const res = await fetch(`${base}/helper/i-4/attachments/${encodeURIComponent(file.id!)}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.equal(res.headers.get('content-security-policy'), 'sandbox');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), PNG);
    for (const id of [`${submissionId}.1`, 'sub_nope.0', '..%2F..%2Fetc', `${submissionId}.0x`]) {
      const miss = await fetch(`${base}/helper/i-4/attachments/${id}`);
      assert.equal(miss.status, 404, id);
      assert.equal(((await miss.json()) as { error: { type: string } }).error.type, 'attachment_not_found');
    }
    // Another instance's attachment is not served through this one.
    await post('/helper/i-5', { kind: 'user', body: 'hi' });
    const other = await fetch(`${base}/helper/i-5/attachments/${encodeURIComponent(file.id!)}`);
    assert.equal(other.status, 404);
  });

  it('renders every error as the envelope with its status', async () => {
    const cases: Array<[Promise<Response>, number, string]> = [
      [post('/helper/e-1', { kind: 'user', body: 'x' }, { 'Content-Type': 'text/plain' }), 415, 'unsupported_media_type'],
      [post('/helper/e-1', '{"kind":', { 'Content-Type': 'application/json' }), 400, 'invalid_json'],
      [post('/helper/e-1', [1, 2]), 400, 'invalid_request'],
      [post('/helper/e-1', { kind: 'robot', body: 'x' }), 400, 'invalid_request'],
      [post('/helper/e-1', 'hello'), 400, 'invalid_json'],
      [post('/helper/e-1', { kind: 'user', body: 'x', uid: 'inst_nope' }), 404, 'agent_instance_not_found'],
      [post('/helper/e-1', { kind: 'user', body: 'x', uid: 'inst_nope', initialData: {} }), 400, 'invalid_request'],
      [post('/helper/e-1?wait=1', { kind: 'user', body: 'x' }), 400, 'invalid_request'],
      [post('/helper/%20', { kind: 'user', body: 'x' }), 400, 'invalid_request'],
      [fetch(`${base}/helper/never`), 404, 'stream_not_found'],
      [fetch(`${base}/helper/never/attachments/sub_a.0`), 404, 'stream_not_found'],
      [fetch(`${base}/helper/i-1?offset=12`), 400, 'invalid_request'],
      [fetch(`${base}/helper/i-1?offset=-1&offset=-1`), 400, 'invalid_request'],
      [fetch(`${base}/helper/i-1?view=history`), 400, 'invalid_request'],
      [fetch(`${base}/helper/i-1?live=long-poll`), 400, 'invalid_request'],
      [fetch(`${base}/helper`), 404, 'route_not_found'],
      [fetch(`${base}/helper/i-1/nothing/here`), 404, 'route_not_found'],
      [fetch(`${base}/stranger/i-1`), 500, 'internal_error'],
    ];
    for (const [pending, status, type] of cases) {
      const res = await pending;
      const body = (await res.json()) as { error: { type: string; message: string; details: unknown } };
      assert.equal(res.status, status, `${type}: ${JSON.stringify(body)}`);
      assert.equal(body.error.type, type);
      assert.equal(typeof body.error.message, 'string');
      assert.equal(typeof body.error.details, 'object');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      if (status === 500) assert.doesNotMatch(JSON.stringify(body), /at |\.js|Stranger is mounted/, 'no stack or internal text');
    }
    const created = (await (await post('/helper/e-2', { kind: 'user', body: 'x' })).json()) as { uid: string };
    const exists = await post('/helper/e-2', { kind: 'user', body: 'x', uid: null });
    assert.equal(exists.status, 409);
    const envelope = (await exists.json()) as { error: { type: string; details: { uid: string } } };
    assert.deepEqual([envelope.error.type, envelope.error.details.uid], ['agent_instance_exists', created.uid]);
  });

  it('answers 405 with Allow for a method its route does not serve', async () => {
    for (const [path, method, allow] of [['/helper/i-1', 'PUT', 'GET, HEAD, POST'], ['/helper/i-1', 'DELETE', 'GET, HEAD, POST'], ['/helper/i-1/abort', 'GET', 'POST'], ['/helper/i-1/attachments/x', 'POST', 'GET, HEAD']] as const) {
      const res = await fetch(`${base}${path}`, { method });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get('allow'), allow);
      assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'method_not_allowed');
    }
  });

  it('refuses a body over the limit with 413 payload_too_large without reading it all', async () => {
    const huge = 'x'.repeat(16 * 1024 * 1024 + 1);
    const res = await post('/helper/big', huge);
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'payload_too_large');
  });
});

function offsetOf(p: { batch: number; index: number }): string {
  return `${String(p.batch).padStart(16, '0')}_${String(p.index).padStart(16, '0')}`;
}
