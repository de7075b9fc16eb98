import assert from 'node:assert/strict';
import net from 'node:net';
import { createLogger, SecretScrubber } from '../../../../kernel/logger.js';
import { start, currentRuntime, type AgentRuntimeHandle } from '../../../../plugins/agent-api/start.js';
import { useModel } from '../../../../plugins/agent-api/use-model.js';
import { ApiTokenCheck, hashApiToken } from '../../../../plugins/http/api-tokens.js';
import { startAgentServer, type AgentServer } from '../../../../plugins/http/agent-server.js';
import { chunksOf, readSse } from '../../../helpers/sse-client.js';

type Chunk = { type: string; position: { batch: number; index: number }; submissionId?: string };

function Echo(): string {
  useModel({ provider: 'scripted', turns: [{ text: 'ok' }], onEnd: 'repeat-last' });
  return 'You echo.';
}

const TOKEN = 'hg_attack-token-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

/** A hostile client against hookgate serve's HTTP surface (in process, real HTTP on loopback, tokens on). */
describe('agent-api HTTP: attacks', function () {
  this.timeout(60_000);
  let runtime: AgentRuntimeHandle;
  let server: AgentServer;
  const logged: string[] = [];
  const auth = { Authorization: `Bearer ${TOKEN}` };

  before(async () => {
    runtime = await start({ agents: [Echo], env: {} });
    const logger = createLogger({ level: 'debug', format: 'json', scrubber: new SecretScrubber(), sink: (line) => logged.push(line) });
    server = await startAgentServer({ runtime, agents: [{ identity: 'Echo', agent: Echo }], tokens: [{ name: 'spec', sha256: hashApiToken(TOKEN) }], host: '127.0.0.1', port: 0, heartbeatMs: 100, logger });
  });
  after(async () => {
    await server.close();
  });

  const post = (p: string, body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) => fetch(`${server.url}${p}`, { method: 'POST', headers: { ...auth, ...headers }, body });
  const typeOf = async (res: Response) => ((await res.json()) as { error: { type: string } }).error.type;

  it('refuses a dev-mode server (no tokens) on a non-loopback address', async () => {
    await assert.rejects(startAgentServer({ runtime, agents: [], tokens: [], host: '0.0.0.0', port: 0, heartbeatMs: 100, logger: createLogger({ level: 'error', format: 'json', scrubber: new SecretScrubber() }) }), /loopback/);
  });

  it('token checks hash first: tokens of any length or alphabet are a plain 401, never a 500, and neither body nor headers echo them', async () => {
    const hostile = ['', 'a', TOKEN.slice(0, -1), `${TOKEN}a`, TOKEN.toUpperCase(), 'x'.repeat(513), 'é'.repeat(40), `${TOKEN} ${TOKEN}`];
    for (const token of hostile) {
      const res = await fetch(`${server.url}/agents/Echo/a1`, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(res.status, 401, JSON.stringify(token.slice(0, 20)));
      const text = await res.text();
      if (token.length > 3) assert.ok(!text.includes(token), 'not echoed');
      for (const [, value] of res.headers) assert.ok(token.length <= 3 || !value.includes(token));
    }
    // The check compares digests (same length whatever the token), against every entry.
    const check = new ApiTokenCheck([{ name: 'one', sha256: hashApiToken('first') }, { name: 'two', sha256: hashApiToken('second') }]);
    assert.equal(check.match('Bearer second'), 'two');
    assert.equal(check.match('Bearer secon'), undefined);
    assert.equal(check.match('Bearer '), undefined);
    assert.equal(check.match(undefined), undefined);
    assert.ok(logged.every((line) => !line.includes(TOKEN)), 'the token is not logged');
  });

  it('malformed JSON, wrong content types and non-object bodies are 400 / 415, never 500', async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      ['{"kind":"user","body":"x"', { 'Content-Type': 'application/json' }, 400, 'invalid_json'],
      ['\u0000\u0001', { 'Content-Type': 'application/json' }, 400, 'invalid_json'],
      ['', { 'Content-Type': 'application/json' }, 400, 'invalid_json'],
      ['null', { 'Content-Type': 'application/json' }, 400, 'invalid_request'],
      ['"hello"', { 'Content-Type': 'application/json' }, 400, 'invalid_request'],
      ['{"kind":"user","body":"x","__proto__":{"polluted":true}}', { 'Content-Type': 'application/json' }, 400, 'invalid_request'],
      ['{"kind":"user","body":"x"}', { 'Content-Type': 'text/json' }, 415, 'unsupported_media_type'],
      ['{"kind":"user","body":"x"}', { 'Content-Type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
      ['{"kind":"user","body":"x"}', { 'Content-Type': 'multipart/form-data; boundary=x' }, 415, 'unsupported_media_type'],
      [`{"kind":"user","body":"x","initialData":${'['.repeat(5_000)}${']'.repeat(5_000)}}`, { 'Content-Type': 'application/json' }, 400, 'invalid_request'],
    ];
    for (const [body, headers, status, type] of cases) {
      const res = await post('/agents/Echo/j1', body, headers);
      assert.equal(res.status, status, `${body.slice(0, 40)} ${JSON.stringify(headers)}`);
      assert.equal(await typeOf(res), type);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution');
  });

  it('an oversized body is refused with 413 whether Content-Length announces it or chunks carry it', async () => {
    const announced = await post('/agents/Echo/b1', 'x'.repeat(16 * 1024 * 1024 + 1));
    assert.equal(announced.status, 413);
    // Chunked: no Content-Length, the limit is counted as the bytes arrive.
    const big = new ReadableStream({
      start(controller) {
        const piece = new TextEncoder().encode('x'.repeat(1024 * 1024));
        for (let i = 0; i < 17; i++) controller.enqueue(piece);
        controller.close();
      },
    });
    const chunked = await fetch(`${server.url}/agents/Echo/b2`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: big, duplex: 'half' } as RequestInit);
    assert.equal(chunked.status, 413);
    assert.equal(await typeOf(chunked), 'payload_too_large');
  });

  it('hostile ids in paths are refused or kept as plain keys, never a 500', async () => {
    const cases: Array<[string, number]> = [
      ['%20%20', 400],
      ['x'.repeat(600), 400],
      ['%ED%A0%80', 400],
      ['%00', 202],
      ['..%2F..%2Fetc%2Fpasswd', 202],
      ['%3Cscript%3E', 202],
      ['%F0%9F%98%80', 202],
      ['%', 400],
    ];
    for (const [id, status] of cases) {
      const res = await post(`/agents/Echo/${id}`, '{"kind":"user","body":"x"}');
      const text = await res.text();
      assert.equal(res.status, status, `${id}: ${text}`);
      assert.doesNotMatch(text, /internal_error/);
    }
    const traversal = await fetch(`${server.url}/agents/Echo/..%2F..%2Fetc%2Fpasswd/attachments/..%2F..%2Fetc%2Fpasswd`, { headers: auth });
    assert.equal(traversal.status, 404);
    assert.equal(await typeOf(traversal), 'attachment_not_found');
  });

  it('a slow SSE reader holds only its own stream: the server goes on serving, and the reader later gets every chunk once', async () => {
    const first = (await (await post('/agents/Echo/slow', '{"kind":"user","body":"start"}')).json()) as { submissionId: string };
    await readSse(`${server.url}/agents/Echo/slow`, (events) => chunksOf<Chunk>(events).some((c) => c.submissionId === first.submissionId && c.type === 'submission-settled'), auth);
    // A raw client that asks for the stream and then stops reading.
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(`GET /agents/Echo/slow?live=sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: text/event-stream\r\n\r\n`);
    let received = '';
    socket.setEncoding('utf8').on('data', (d: string) => (received += d));
    await new Promise((r) => setTimeout(r, 100));
    socket.pause();
    // Meanwhile: 8 sends of 1 MiB each (far more than the socket buffers hold), all admitted and answered.
    const body = JSON.stringify({ kind: 'user', body: 'y'.repeat(1024 * 1024) });
    const sent: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await post('/agents/Echo/slow', body);
      assert.equal(res.status, 202);
      sent.push(((await res.json()) as { submissionId: string }).submissionId);
    }
    const last = sent.at(-1)!;
    const other = await readSse(`${server.url}/agents/Echo/slow`, (events) => chunksOf<Chunk>(events).some((c) => c.submissionId === last && c.type === 'submission-settled'), auth);
    assert.equal(other.status, 200, 'another reader is served while the slow one does not read');
    socket.resume();
    while (!received.includes(`"submissionId":"${last}","outcome"`)) await new Promise((r) => setTimeout(r, 25));
    socket.destroy();
    const frames = received.split('\n\n').filter((f) => f.includes('event: data'));
    // Live-only chunks (text deltas) are not stored: the rest must be every stored chunk once.
    const chunks = frames.flatMap((f) => JSON.parse(f.slice(f.indexOf('data: ') + 6)) as Chunk[]).filter((c) => (c.position as { live?: number }).live === undefined);
    const keys = chunks.map((c) => `${c.position.batch}.${c.position.index}`);
    assert.equal(new Set(keys).size, keys.length, 'no chunk twice');
    assert.deepEqual(chunks, chunksOf<Chunk>(other.events));
    // The tail of a client that went away is released.
    while (currentRuntime('spec').feed.following > 0) await new Promise((r) => setTimeout(r, 25));
  });
});
