import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashApiToken } from '../../plugins/http/api-tokens.js';
import { chunksOf, readSse, type SseEvent } from '../helpers/sse-client.js';
import { CLI, ROOT, cliEnv, runHookgate } from '../helpers/cli-process.js';

type Chunk = {
  type: string;
  position: { batch: number; index: number };
  submissionId?: string;
  outcome?: string;
  toolName?: string;
  errorText?: string;
  output?: unknown;
  message?: { parts: Array<{ type: string; id?: string; mediaType?: string }> };
};

const TOKEN = 'hg_spec-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const AGENTS = path.join(ROOT, 'dist', 'spec', 'cli', 'fixtures', 'serve-agents.js');
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');

/** A `hookgate serve` child process: its URL once it listens, and everything it printed. */
interface ServeChild {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

async function startServe(cwd: string, env: NodeJS.ProcessEnv): Promise<ServeChild> {
  const child = spawn(process.execPath, [CLI, 'serve'], { cwd, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const match = /hookgate serve listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`hookgate serve exited (${code}) before listening:\n${out}`)));
  });
  return { child, url, output: () => out, exited };
}

/** `hookgate serve` as a child process on a SQLite file, driven over HTTP on loopback: a whole conversation, a crash, a drain. */
describe('hookgate serve', function () {
  this.timeout(90_000);
  let dir: string;
  let server: ServeChild | undefined;
  const logs: string[] = [];
  const auth = { Authorization: `Bearer ${TOKEN}` };
  const env = () => ({ SERVE_SPEC_RECORD: path.join(dir, 'record.txt'), SERVE_SPEC_GO: path.join(dir, 'go') });

  before(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-serve-')));
    await mkdir(path.join(dir, 'packs'));
    await writeFile(path.join(dir, 'record.txt'), '');
    await writeFile(
      path.join(dir, 'packs', 'desk.yaml'),
      [
        'name: desk',
        'policies:',
        '  - id: no-refunds',
        '    events: [beforeToolCall]',
        "    match: '^agent/refund$'",
        '    effect: deny',
        '    reason: refunds need a manager',
        '  - id: wires-need-an-operator',
        '    events: [beforeToolCall]',
        "    match: '^agent/wire$'",
        '    effect: ask',
        '    reason: wires need an operator',
        '',
      ].join('\n'),
    );
    await writeFile(
      path.join(dir, 'hookgate.config.yaml'),
      [
        'store:',
        '  driver: sqlite',
        '  sqlite:',
        '    path: ./serve.db',
        'runtime:',
        '  leaseMs: 1000',
        'policies:',
        '  paths: [./packs]',
        'serve:',
        '  port: 0',
        '  heartbeatMs: 200',
        `  agents: [${JSON.stringify(AGENTS)}]`,
        '  tokens:',
        '    - name: spec-client',
        `      sha256: ${hashApiToken(TOKEN)}`,
        '',
      ].join('\n'),
    );
    server = await startServe(dir, env());
  });
  after(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server!.url}${p}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...auth, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const get = (p: string, headers: Record<string, string> = {}) => fetch(`${server!.url}${p}`, { headers: { ...auth, ...headers } });
  const settledOf = (submissionId: string) => (events: SseEvent[]) => chunksOf<Chunk>(events).some((c) => c.type === 'submission-settled' && c.submissionId === submissionId);
  const stream = (p: string, until: (events: SseEvent[]) => boolean, headers: Record<string, string> = {}) => readSse(`${server!.url}${p}`, until, { ...auth, ...headers });
  const send = async (p: string, body: unknown) => {
    const res = await post(p, body);
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as { streamUrl: string; offset: string; submissionId: string; uid: string };
  };

  it('refuses requests without a valid API token (401) and never echoes the token', async () => {
    for (const headers of [{} as Record<string, string>, { Authorization: 'Bearer wrong' }, { Authorization: `Bearer ${TOKEN}x` }, { Authorization: TOKEN }, { Authorization: `Basic ${TOKEN}` }]) {
      const res = await fetch(`${server!.url}/agents/Desk/c1`, { headers });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      const text = await res.text();
      assert.equal((JSON.parse(text) as { error: { type: string } }).error.type, 'unauthorized');
      assert.ok(!text.includes(TOKEN.slice(3)), 'the token is not echoed');
    }
    assert.equal((await fetch(`${server!.url}/operator/operations`)).status, 401, 'operator routes need the token too');
  });

  it('drives a conversation: send, SSE stream resumed after a disconnect with no duplicate positions', async () => {
    const sent = await send('/agents/Desk/c1', { kind: 'user', body: 'where is order 7?' });
    assert.equal(sent.streamUrl, `${server!.url}/agents/Desk/c1`);
    const first = await stream(`/agents/Desk/c1?offset=${sent.offset}`, (events) => events.some((e) => e.event === 'data'));
    const firstData = first.events.filter((e) => e.event === 'data');
    const rest = settledOf(sent.submissionId)(firstData) ? [] : chunksOf<Chunk>((await stream('/agents/Desk/c1', settledOf(sent.submissionId), { 'Last-Event-ID': firstData.at(-1)!.id! })).events);
    const seen = [...chunksOf<Chunk>(firstData), ...rest];
    const keys = seen.map((c) => `${c.position.batch}.${c.position.index}`);
    assert.equal(new Set(keys).size, keys.length, 'no duplicate positions');
    assert.deepEqual(seen, (await (await get('/agents/Desk/c1?offset=-1')).json()) as Chunk[]);
    assert.deepEqual(seen.find((c) => c.type === 'tool-output')?.output, { order: 7, state: 'shipped' });
    assert.equal(seen.at(-1)?.outcome, 'completed');
  });

  it('a tool denied by a policy: the stream shows the refused call, nothing ran, the decision is listed', async () => {
    const sent = await send('/agents/Desk/c1', { kind: 'user', body: 'refund it' });
    const chunks = chunksOf<Chunk>((await stream(`/agents/Desk/c1?offset=${sent.offset}`, settledOf(sent.submissionId))).events);
    const refused = chunks.find((c) => c.type === 'tool-output-error');
    assert.match(refused?.errorText ?? '', /refunds need a manager/);
    assert.equal(chunks.at(-1)?.outcome, 'completed');
    assert.equal(await readFile(path.join(dir, 'record.txt'), 'utf8'), '', 'the refund did not run');
    const { decisions } = (await (await get('/operator/decisions?limit=50')).json()) as { decisions: Array<{ policyId?: string; decision: string; apiName: string }> };
    assert.ok(decisions.some((d) => d.apiName === 'refund' && d.decision === 'deny'), JSON.stringify(decisions));
  });

  it('an approval answered through the operator routes: the parked call runs and the submission completes', async () => {
    const sent = await send('/agents/Desk/c1', { kind: 'user', body: 'wire it' });
    let parked: { id: string } | undefined;
    while (!parked) {
      const { operations } = (await (await get('/operator/operations?status=waiting_approval')).json()) as { operations: Array<{ id: string; threadId: string }> };
      parked = operations.find((o) => o.threadId === 'agent:Desk:c1');
      if (!parked) await new Promise((r) => setTimeout(r, 50));
    }
    const shown = (await (await get(`/operator/operations/${parked.id}`)).json()) as { operation: { status: string; pendingTools: unknown[] } };
    assert.equal(shown.operation.status, 'waiting_approval');
    assert.equal(shown.operation.pendingTools.length, 1);
    const approved = await post(`/operator/operations/${parked.id}/approve`, {});
    assert.equal(approved.status, 200, await approved.clone().text());
    const chunks = chunksOf<Chunk>((await stream(`/agents/Desk/c1?offset=${sent.offset}`, settledOf(sent.submissionId))).events);
    assert.equal(chunks.at(-1)?.outcome, 'completed');
    assert.equal(await readFile(path.join(dir, 'record.txt'), 'utf8'), 'wire\n');
    const again = await post(`/operator/operations/${parked.id}/approve`, {});
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { error: { type: string } }).error.type, 'operation_not_waiting');
  });

  it('abort: POST /:id/abort settles the running submission aborted', async () => {
    const sent = await send('/agents/Desk/c1', { kind: 'user', body: 'take your time' });
    const res = await post('/agents/Desk/c1/abort', '', { 'Content-Type': 'text/plain' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { aborted: true });
    const chunks = chunksOf<Chunk>((await stream(`/agents/Desk/c1?offset=${sent.offset}`, settledOf(sent.submissionId))).events);
    assert.equal(chunks.at(-1)?.outcome, 'aborted');
  });

  it('an attachment download: the stored bytes with their media type', async () => {
    const sent = await send('/agents/Desk/c2', { kind: 'user', body: 'see the photo', attachments: [{ type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' }] });
    const chunks = chunksOf<Chunk>((await stream('/agents/Desk/c2', settledOf(sent.submissionId))).events);
    const file = chunks[0]!.message!.parts.find((p) => p.type === 'file')!;
    const res = await get(`/agents/Desk/c2/attachments/${encodeURIComponent(file.id!)}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), PNG);
  });

  it('answers every error status with the envelope', async () => {
    const { uid } = await send('/agents/Desk/c3', { kind: 'user', body: 'hello' });
    const cases: Array<[Promise<Response>, number, string]> = [
      [post('/agents/Desk/c3', 'x', { 'Content-Type': 'text/plain' }), 415, 'unsupported_media_type'],
      [post('/agents/Desk/c3', '{oops'), 400, 'invalid_json'],
      [post('/agents/Desk/c3', { kind: 'user' }), 400, 'invalid_request'],
      [post('/agents/Desk/c3', { kind: 'user', body: 'x', uid: 'inst_other' }), 404, 'agent_instance_not_found'],
      [post('/agents/Desk/c3', { kind: 'user', body: 'x', uid: null }), 409, 'agent_instance_exists'],
      [post('/agents/Desk/c3', 'x'.repeat(16 * 1024 * 1024 + 10)), 413, 'payload_too_large'],
      [get('/agents/Desk/nobody'), 404, 'stream_not_found'],
      [get('/agents/Desk/c3/attachments/sub_x.0'), 404, 'attachment_not_found'],
      [get('/agents/Nobody/c3'), 404, 'route_not_found'],
      [get('/agents/Desk/c3/a/b'), 404, 'route_not_found'],
      [get('/'), 404, 'route_not_found'],
      [fetch(`${server!.url}/agents/Desk/c3`, { method: 'PUT', headers: auth }), 405, 'method_not_allowed'],
      [get('/operator/operations/op_nope'), 404, 'operation_not_found'],
      [post('/operator/operations/op_nope/approve', {}), 404, 'operation_not_found'],
      [post('/operator/operations/op_nope/reject', { because: 1 }), 400, 'invalid_request'],
      [get('/operator/operations?status=bogus'), 400, 'invalid_request'],
      [fetch(`${server!.url}/operator/decisions`, { method: 'DELETE', headers: auth }), 405, 'method_not_allowed'],
    ];
    for (const [pending, status, type] of cases) {
      const res = await pending;
      const body = (await res.json()) as { error: { type: string; message: string; details: Record<string, unknown> } };
      assert.equal(res.status, status, `${type}: ${JSON.stringify(body)}`);
      assert.equal(body.error.type, type);
      if (type === 'agent_instance_exists') assert.equal(body.error.details.uid, uid);
      if (status === 405) assert.ok(res.headers.get('allow'));
    }
  });

  it('SIGKILLed mid-submission and restarted on the same SQLite file, the server finishes it (the completed tool is not run again)', async () => {
    const sent = await send('/agents/Courier/k1', { kind: 'user', body: 'ship p-1' });
    const before = await stream(`/agents/Courier/k1?offset=${sent.offset}`, (events) => chunksOf<Chunk>(events).some((c) => c.type === 'tool-output'));
    const seen = chunksOf<Chunk>(before.events);
    server!.child.kill('SIGKILL');
    await server!.exited;
    logs.push(server!.output());
    assert.equal(await readFile(path.join(dir, 'record.txt'), 'utf8'), 'wire\nship\n');
    server = await startServe(dir, env());
    const lastId = before.events.filter((e) => e.event === 'data').at(-1)!.id!;
    const after = chunksOf<Chunk>((await stream('/agents/Courier/k1', settledOf(sent.submissionId), { 'Last-Event-ID': lastId })).events);
    assert.equal(after.at(-1)?.outcome, 'completed');
    const keys = [...seen, ...after].map((c) => `${c.position.batch}.${c.position.index}`);
    assert.equal(new Set(keys).size, keys.length, 'no duplicate positions across the restart');
    assert.equal(await readFile(path.join(dir, 'record.txt'), 'utf8'), 'wire\nship\n', 'ship ran once');
  });

  it('a durable tool survives a SIGKILL of the server: the restarted server replays its recorded step and runs the rest once', async () => {
    const steps = `${path.join(dir, 'record.txt')}.steps`;
    const sent = await send('/agents/Mover/m1', { kind: 'user', body: 'move the crate' });
    // Step "pack" is recorded; the tool now waits for the go file, and the server dies there.
    while (!existsSync(steps) || !(await readFile(steps, 'utf8')).includes('pack')) await new Promise((r) => setTimeout(r, 25));
    server!.child.kill('SIGKILL');
    await server!.exited;
    logs.push(server!.output());
    await writeFile(path.join(dir, 'go'), '');
    server = await startServe(dir, env());
    const chunks = chunksOf<Chunk>((await stream(`/agents/Mover/m1?offset=${sent.offset}`, settledOf(sent.submissionId))).events);
    assert.equal(chunks.at(-1)?.outcome, 'completed');
    // pack ran once (replayed after the restart with its recorded value), load once, with pack's value.
    assert.equal(await readFile(steps, 'utf8'), 'pack\nload crate-1\n');
    const output = chunks.find((c) => c.type === 'tool-output') as (Chunk & { output?: unknown }) | undefined;
    assert.deepEqual(output?.output, { packed: 'crate-1', loaded: 'truck-1' });
  });

  it('SIGTERM drains: the running submission settles, its stream gets the settlement, the server exits 0', async () => {
    const sent = await send('/agents/Courier/k2', { kind: 'user', body: 'ship again' });
    const reading = stream(`/agents/Courier/k2?offset=${sent.offset}`, settledOf(sent.submissionId));
    // Once the tool ran (the answer is 2.5 s away), ask the server to stop.
    while (!(await readFile(path.join(dir, 'record.txt'), 'utf8')).endsWith('ship\nship\n')) await new Promise((r) => setTimeout(r, 25));
    server!.child.kill('SIGTERM');
    const chunks = chunksOf<Chunk>((await reading).events);
    assert.equal(chunks.at(-1)?.outcome, 'completed');
    assert.equal(await server!.exited, 0);
    logs.push(server!.output());
    assert.match(server!.output(), /SIGTERM, draining[\s\S]*stopped/);
  });

  it('the token never appears in anything the server printed', () => {
    for (const log of logs) assert.ok(!log.includes(TOKEN), 'token in the output');
  });

  it('serve token prints a new token once and the config entry with only its SHA-256', async () => {
    const r = await runHookgate(dir, ['serve', 'token', 'ops']);
    assert.equal(r.code, 0, r.stderr);
    const token = /token \(shown once[^)]*\): (hg_\S+)/.exec(r.stdout)?.[1];
    assert.ok(token, r.stdout);
    assert.match(r.stdout, new RegExp(`name: ops\\n\\s+sha256: ${hashApiToken(token)}`));
    assert.equal(r.stdout.split(token).length, 2, 'the token is printed once');
  });

  it('without tokens (dev mode) it refuses to listen on a non-loopback address', async () => {
    const dev = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-serve-dev-')));
    try {
      await writeFile(path.join(dev, 'hookgate.config.yaml'), `store:\n  driver: memory\nserve:\n  agents: [${JSON.stringify(AGENTS)}]\n`);
      const r = await runHookgate(dev, ['serve', '--host', '0.0.0.0', '--port', '0'], env());
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /no API tokens are configured[\s\S]*loopback/);
    } finally {
      await rm(dev, { recursive: true, force: true });
    }
  });
});
