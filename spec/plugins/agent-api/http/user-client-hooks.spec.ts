import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import type { Agent } from '../../../../plugins/agent-api/agent.js';
import { agentThreadId } from '../../../../plugins/agent-api/agent-thread-id.js';
import { createAgentRouter } from '../../../../plugins/agent-api/http/agent-router.js';
import { start, type AgentRuntimeHandle } from '../../../../plugins/agent-api/start.js';
import { useModel } from '../../../../plugins/agent-api/use-model.js';
import { defineHook, type UserClient } from '../../../../threads.js';
import { readSse } from '../../../helpers/sse-client.js';
import { until } from '../../../helpers/runtime-fixtures.js';

/** What the user-scope hooks of the agent saw, in order. */
let seen: Array<{ hook: 'attached' | 'detached'; userId: string; argCount: number; client: UserClient }> = [];

function Presence(): string {
  useModel({ provider: 'scripted', turns: [{ text: 'hello' }, { text: 'hello again' }, { text: 'and again' }] });
  return 'You greet.';
}
(Presence as Agent).threadHooks = [
  // First in run order, and broken: the stream and the hooks after it go on.
  defineHook({ hook: 'user_client_attached', id: 'broken_attach', execute: () => { throw new Error('attach hook broke'); } }),
  defineHook({
    hook: 'user_client_attached',
    id: 'record_attach',
    execute: async (user, ...rest: unknown[]) => {
      const client = rest[0] as UserClient;
      seen.push({ hook: 'attached', userId: user.userId, argCount: 1 + rest.length, client });
      await user.setValue('attachedClient', client.clientId);
    },
  }),
  defineHook({
    hook: 'user_client_detached',
    id: 'record_detach',
    execute: async (user, ...rest: unknown[]) => {
      const client = rest[0] as UserClient;
      seen.push({ hook: 'detached', userId: user.userId, argCount: 1 + rest.length, client });
      await user.setValue('detachedClient', client.clientId);
    },
  }),
];

/** A host app: its "auth" says who the client is by setting ctx.state.userId (here from a test header), then the router. */
async function serve(): Promise<{ server: Server; base: string }> {
  const app = new Koa();
  app.use(async (ctx: Context, next: Next) => {
    const user = ctx.get('X-Test-User');
    if (user !== '') ctx.state.userId = user;
    await next();
  });
  const root = new Router();
  root.use('/agents/presence', createAgentRouter(Presence, { heartbeatMs: 50, pollMs: 200 }).routes());
  app.use(root.routes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agents/presence` };
}

async function stopServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
}

/** Sends one message so the instance (and its stream) exists. */
async function create(base: string, id: string): Promise<void> {
  const res = await fetch(`${base}/${id}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ kind: 'user', body: 'hi' }) });
  assert.equal(res.status, 202);
}

/** The broken hook's `[Hooks] ✗` lines would only be noise here (user-state.spec.ts checks them). */
const QUIET = { HOOKGATE_LOG__LEVEL: 'silent' };

const firstControl = (events: Array<{ event: string }>) => events.some((e) => e.event === 'control');

/** user_client_attached / user_client_detached over the SSE conversation stream (issue 15, item 3 last part). */
describe('thread hooks: user_client_attached / user_client_detached over the SSE conversation stream', function () {
  this.timeout(60_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  let server: Server;
  let base: string;

  before(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-user-hooks-')));
  });
  beforeEach(async () => {
    seen = [];
    runtime = await start({ agents: [Presence], env: QUIET, db: { sqlite: path.join(dir, 'db.sqlite') } });
    ({ server, base } = await serve());
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await stopServer(server);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a client of a user that connects and leaves: attached once, then detached once, with the UserState of that user and the same client (no context argument)', async () => {
    await create(base, 'p-1');
    const { status } = await readSse(`${base}/p-1?live=sse`, firstControl, { 'X-Test-User': 'alice' });
    assert.equal(status, 200);
    await until(() => seen.length === 2, 10_000);
    const [attached, detached] = seen;
    assert.deepEqual([attached!.hook, attached!.userId, attached!.argCount], ['attached', 'alice', 2]);
    assert.deepEqual([detached!.hook, detached!.userId, detached!.argCount], ['detached', 'alice', 2]);
    assert.deepEqual(detached!.client, attached!.client);
    const client = attached!.client;
    assert.match(client.clientId, /^client_[0-9a-f-]{36}$/);
    assert.equal(client.agentId, 'Presence');
    assert.equal(client.threadId, agentThreadId('Presence', 'p-1'));
    assert.ok(!Number.isNaN(Date.parse(client.connectedAt)));
    assert.ok(Object.isFrozen(client));
    // What the hooks stored through their UserState is the user's (the broken hook before them changed nothing).
    const store = runtime!.kernel.store;
    assert.equal(await store.getUserValue('alice', 'attachedClient'), client.clientId);
    assert.equal(await store.getUserValue('alice', 'detachedClient'), client.clientId);
    // Nothing more arrives later.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(seen.length, 2);
  });

  it('per connection: two streams of one user are two clients, each attached and detached once', async () => {
    await create(base, 'p-2');
    const url = `${base}/p-2?live=sse`;
    await Promise.all([readSse(url, firstControl, { 'X-Test-User': 'bob' }), readSse(url, firstControl, { 'X-Test-User': 'bob' })]);
    await until(() => seen.length === 4, 10_000);
    const attached = seen.filter((s) => s.hook === 'attached').map((s) => s.client.clientId);
    const detached = seen.filter((s) => s.hook === 'detached').map((s) => s.client.clientId);
    assert.equal(new Set(attached).size, 2);
    assert.deepEqual([...detached].sort(), [...attached].sort());
    for (const id of attached) assert.ok(seen.findIndex((s) => s.hook === 'attached' && s.client.clientId === id) < seen.findIndex((s) => s.hook === 'detached' && s.client.clientId === id));
  });

  it('a stream with no user runs no user-scope hook; a one-shot (non-SSE) read is not a client', async () => {
    await create(base, 'p-3');
    await readSse(`${base}/p-3?live=sse`, firstControl);
    const read = await fetch(`${base}/p-3`, { headers: { 'X-Test-User': 'carol' } });
    assert.equal(read.status, 200);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(seen, []);
  });

  it('a stream whose user is not a valid user id is refused with 400 invalid_request before it opens; no hook runs', async () => {
    await create(base, 'p-4');
    const res = await fetch(`${base}/p-4?live=sse`, { headers: { Accept: 'text/event-stream', 'X-Test-User': 'u'.repeat(300) } });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { type: string; message: string; details: { field?: string } } };
    assert.equal(body.error.type, 'invalid_request');
    assert.equal(body.error.details.field, 'userId');
    assert.match(body.error.message, /the stream's user \(ctx\.state\.userId.*\) must be 1 to 256 characters long \(got 300\)/);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(seen, []);
  });

  it('a hostile user id such as ../x is an opaque id: its hooks run and its values are its own', async () => {
    await create(base, 'p-5');
    await readSse(`${base}/p-5?live=sse`, firstControl, { 'X-Test-User': '../x' });
    await until(() => seen.length === 2, 10_000);
    assert.deepEqual(seen.map((s) => s.userId), ['../x', '../x']);
    assert.equal(await runtime!.kernel.store.getUserValue('../x', 'detachedClient'), seen[0]!.client.clientId);
    assert.equal(await runtime!.kernel.store.getUserValue('x', 'detachedClient'), undefined);
  });

  it('a client whose process is killed (SIGKILL, the socket dropped without a goodbye) is detached', async () => {
    await create(base, 'p-6');
    const script = `
      const res = await fetch(${JSON.stringify(`${base}/p-6?live=sse`)}, { headers: { Accept: 'text/event-stream', 'X-Test-User': 'dave' } });
      const reader = res.body.getReader();
      await reader.read();
      process.stdout.write('open\\n');
      setInterval(() => {}, 1000);
    `;
    const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      await until(() => out.includes('open') && seen.length === 1, 15_000);
      assert.equal(seen[0]!.hook, 'attached');
      child.kill('SIGKILL');
      await until(() => seen.length === 2, 15_000);
      assert.deepEqual([seen[1]!.hook, seen[1]!.userId, seen[1]!.client.clientId], ['detached', 'dave', seen[0]!.client.clientId]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('server shutdown drains: an open stream ends and its detached hooks have run (and stored) by the time stop resolves', async () => {
    await create(base, 'p-7');
    const controller = new AbortController();
    const res = await fetch(`${base}/p-7?live=sse`, { headers: { Accept: 'text/event-stream', 'X-Test-User': 'erin' }, signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    await until(() => seen.length === 1, 10_000);
    const stopped = runtime!.stop();
    // The stream ends from the server's side.
    for (;;) if ((await reader.read()).done) break;
    await stopped;
    runtime = undefined;
    assert.deepEqual(seen.map((s) => [s.hook, s.userId]), [['attached', 'erin'], ['detached', 'erin']]);
    controller.abort();
    // What the detached hook stored made it to the file before the store closed.
    runtime = await start({ agents: [Presence], env: QUIET, db: { sqlite: path.join(dir, 'db.sqlite') } });
    assert.equal(await runtime.kernel.store.getUserValue('erin', 'detachedClient'), seen[0]!.client.clientId);
  });
});
