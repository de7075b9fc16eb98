import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import Router from '@koa/router';
import * as v from 'valibot';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { createAgentRouter } from '../../../plugins/agent-api/http/agent-router.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { chunksOf, readSse } from '../../helpers/sse-client.js';

/** A tool call a moment after the message, so a client connected right after the POST sees its events live. No thread hook is selected. */
function Builder(): string {
  useModel({ provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'agent', apiName: 'build', args: { target: 'site' } }], delayMs: 400 }, { text: 'built' }] });
  useTool({ name: 'build', description: 'Builds', input: v.object({ target: v.string() }), run: () => ({ ok: true }) });
  return 'You build.';
}

/** The thread events tool_call_started / tool_call_done over the HTTP conversation stream (issue 15), with no hook selected. */
describe('thread hooks: tool call events over the SSE conversation stream', function () {
  this.timeout(30_000);
  let runtime: AgentRuntimeHandle;
  let server: Server;
  let base: string;
  let dir: string;

  before(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-tool-events-')));
    runtime = await start({ agents: [Builder], env: {}, db: { sqlite: path.join(dir, 'db.sqlite') } });
    const app = new Koa();
    const root = new Router();
    root.use('/agents/builder', createAgentRouter(Builder, { heartbeatMs: 50, pollMs: 200 }).routes());
    app.use(root.routes());
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agents/builder`;
  });
  after(async () => {
    await runtime.stop();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('a connected client gets tool_call_started then tool_call_done (same id, status), live and without an id, before the tool output chunk', async () => {
    const res = await fetch(`${base}/b-1`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ kind: 'user', body: 'build it' }) });
    assert.equal(res.status, 202);
    const body = (await res.json()) as { streamUrl: string; offset: string; submissionId: string };
    const { events } = await readSse(`${body.streamUrl}?offset=${body.offset}`, (evs) => chunksOf<{ type: string; submissionId?: string }>(evs).some((c) => c.type === 'submission-settled'));
    const threadEvents = events.filter((e) => e.event === 'thread_event');
    assert.equal(threadEvents.length, 2, JSON.stringify(events.map((e) => e.event)));
    assert.ok(threadEvents.every((e) => e.id === undefined));
    const [started, done] = threadEvents.map((e) => JSON.parse(e.data) as { event: string; data: { id: string; name: string; progress?: string; status?: string } });
    assert.equal(started!.event, 'tool_call_started');
    assert.equal(started!.data.name, 'agent__build');
    assert.equal(done!.event, 'tool_call_done');
    assert.deepEqual(done!.data, { id: started!.data.id, name: 'agent__build', status: 'success' });
    // The stored stream names the same call: the events are about it.
    const stored = await runtime.kernel.store.listThreadMessages(agentThreadId('Builder', 'b-1'));
    assert.equal(stored.find((m) => m.role === 'tool')?.toolCallId, started!.data.id);
    const order = events.map((e) => (e.event === 'thread_event' ? (JSON.parse(e.data) as { event: string }).event : e.event === 'data' ? chunksOf([e]).map((c) => c.type).join('+') : e.event));
    const doneAt = order.indexOf('tool_call_done');
    const outputAt = order.findIndex((o) => o.includes('tool-output'));
    assert.ok(doneAt >= 0 && outputAt > doneAt, order.join(' | '));
  });
});
