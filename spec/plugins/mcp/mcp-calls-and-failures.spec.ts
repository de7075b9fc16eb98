import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectMcpServer, type McpServerConnection } from '../../../plugins/mcp/connect-mcp-server.js';
import { slowTool, startMcpTestServer, type McpTestServer } from './fixtures/mcp-test-server.js';

const PROCESS_SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'mcp-server-process.js');

/** Starts the fixture server as a child process; resolves with its port and a reader of its `{"called":...}` lines. */
async function startServerProcess(): Promise<{ child: ChildProcess; port: number; called: Promise<void> }> {
  const child = spawn(process.execPath, [PROCESS_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buffer = '';
  let onPort: (port: number) => void;
  let onCalled: () => void;
  const port = new Promise<number>((resolve) => (onPort = resolve));
  const called = new Promise<void>((resolve) => (onCalled = resolve));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffer.slice(0, nl)) as { port?: number; called?: string };
      buffer = buffer.slice(nl + 1);
      if (line.port) onPort(line.port);
      if (line.called) onCalled();
    }
  });
  return { child, port: await port, called };
}

describe('MCP tool calls: timeouts, progress, crashes, close', function () {
  this.timeout(30_000);
  let server: McpTestServer | undefined;
  const connections: McpServerConnection[] = [];
  const children: ChildProcess[] = [];

  afterEach(async () => {
    for (const c of connections.splice(0)) await c.close();
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.close();
    server = undefined;
  });

  it('timeoutMs bounds a call: a tool that does not answer fails with a timeout naming the limit', async () => {
    server = await startMcpTestServer({ tools: [slowTool()] });
    const c = await connectMcpServer('slowpoke', { url: server.url(), timeoutMs: 300 });
    connections.push(c);
    await assert.rejects(c.tools[0]!.run({}), { code: 'MCP_CALL_FAILED', message: 'MCP server "slowpoke": tool "slow": timed out after 300 ms' });
  });

  describe('resetTimeoutOnProgress', () => {
    /** A tool that reports progress every 50 ms and answers after 12 reports (about 600 ms, twice the timeout). */
    const progressing = {
      name: 'progressing',
      run: async (_args: Record<string, unknown>, extra: { progress(p: number): Promise<void> }) => {
        for (let i = 1; i <= 12; i++) {
          await new Promise((r) => setTimeout(r, 50));
          await extra.progress(i);
        }
        return { content: [{ type: 'text' as const, text: 'done' }] };
      },
    };

    it('sends a progress token, so progress reaches the client and each report restarts the timeout', async () => {
      server = await startMcpTestServer({ tools: [progressing] });
      const c = await connectMcpServer('p', { url: server.url(), timeoutMs: 300, resetTimeoutOnProgress: true });
      connections.push(c);
      assert.deepEqual(await c.tools[0]!.run({}), { content: 'done' });
      assert.notEqual(server.calls[0]!.progressToken, undefined);
    });

    it('without it, no progress token is sent and the same call times out', async () => {
      server = await startMcpTestServer({ tools: [progressing] });
      const c = await connectMcpServer('p', { url: server.url(), timeoutMs: 300 });
      connections.push(c);
      await assert.rejects(c.tools[0]!.run({}), { code: 'MCP_CALL_FAILED', message: 'MCP server "p": tool "progressing": timed out after 300 ms' });
      assert.equal(server.calls[0]!.progressToken, undefined);
    });
  });

  const crashCases = [
    { transport: 'streamable-http', resetTimeoutOnProgress: false, what: 'no progress' },
    { transport: 'streamable-http', resetTimeoutOnProgress: true, what: 'after a progress event' },
    { transport: 'sse', resetTimeoutOnProgress: false, what: 'on the legacy SSE stream' },
  ] as const;
  for (const { transport, resetTimeoutOnProgress, what } of crashCases) {
    it(`a server SIGKILLed during a slow call fails that call at once, not at the timeout (${transport}, ${what})`, async () => {
      const proc = await startServerProcess();
      children.push(proc.child);
      const url = `http://127.0.0.1:${proc.port}${transport === 'sse' ? '/sse' : '/mcp'}`;
      const c = await connectMcpServer('mortal', { url, transport, timeoutMs: 60_000, resetTimeoutOnProgress });
      connections.push(c);
      const slow = c.tools.find((t) => t.apiName === 'slow')!;
      const call = slow.run({});
      await proc.called;
      proc.child.kill('SIGKILL');
      await assert.rejects(call, (err: Error & { code?: string }) => {
        assert.equal(err.code, 'MCP_CALL_FAILED');
        assert.match(err.message, transport === 'sse' ? /^MCP server "mortal": tool "slow": the connection to the server is closed$/ : /^MCP server "mortal": tool "slow": the connection to the server broke during the request \(the server may have stopped\)$/);
        return true;
      });
      // The next call fails too (the server is gone), and close() still resolves.
      await assert.rejects(c.tools.find((t) => t.apiName === 'echo')!.run({}), { code: 'MCP_CALL_FAILED' });
      await c.close();
    });
  }

  it('an abort signal cancels the call', async () => {
    server = await startMcpTestServer({ tools: [slowTool()] });
    const c = await connectMcpServer('s', { url: server.url() });
    connections.push(c);
    const controller = new AbortController();
    const call = c.tools[0]!.run({}, { signal: controller.signal, toolCallId: 'call-1' });
    while (server.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await assert.rejects(call, { code: 'MCP_CALL_FAILED', message: 'MCP server "s": tool "slow": the call was aborted' });
  });

  it('close() ends the session the server sees, is idempotent, and later calls fail as closed', async () => {
    server = await startMcpTestServer({ tools: [{ name: 'echo' }] });
    const c = await connectMcpServer('s', { url: server.url() });
    await c.close();
    await c.close();
    assert.deepEqual(server.sessions, { opened: 1, ended: 1 });
    await assert.rejects(c.tools[0]!.run({}), { code: 'MCP_CALL_FAILED', message: 'MCP server "s": tool "echo": the connection to the server is closed' });
  });

  describe('connection failures', () => {
    it('an unreachable server is MCP_CONNECT_FAILED naming the server and its URL without its query; credentials in the URL are refused', async () => {
      const probe = http.createServer();
      await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
      const port = (probe.address() as AddressInfo).port;
      await new Promise<void>((r) => probe.close(() => r()));
      await assert.rejects(connectMcpServer('gone', { url: `http://127.0.0.1:${port}/mcp?token=querysecret` }), {
        code: 'MCP_CONNECT_FAILED',
        message: `MCP server "gone" (http://127.0.0.1:${port}/mcp): cannot connect: cannot reach the server (connection refused)`,
      });
      await assert.rejects(connectMcpServer('gone', { url: `http://user:hunter2secret@127.0.0.1:${port}/mcp` }), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'MCP_OPTIONS_INVALID');
        assert.match(err.message, /^MCP server "gone": url: credentials in the URL are never sent/);
        assert.doesNotMatch(err.message, /hunter2secret/);
        return true;
      });
    });

    it('a server that answers HTTP errors is refused, its echo of the credential header scrubbed', async () => {
      const echo = http.createServer((req, res) => res.writeHead(401, { 'content-type': 'text/plain' }).end(`denied for ${String(req.headers.authorization)}`));
      await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
      try {
        const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/mcp`;
        await assert.rejects(connectMcpServer('echoing', { url, headers: { Authorization: 'Bearer s3cr3t-t0ken-value' } }), (err: Error & { code?: string }) => {
          assert.equal(err.code, 'MCP_CONNECT_FAILED');
          assert.match(err.message, /\(HTTP 401\)/);
          assert.doesNotMatch(err.message, /s3cr3t-t0ken-value/);
          assert.match(err.message, /\[redacted\]/);
          return true;
        });
      } finally {
        await new Promise<void>((r) => echo.close(() => r()));
      }
    });

    it('a server that accepts the connection and never answers is refused after timeoutMs (SSE too)', async () => {
      const silent = http.createServer(() => undefined);
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      try {
        const base = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
        for (const transport of ['streamable-http', 'sse'] as const) {
          await assert.rejects(connectMcpServer('mute', { url: `${base}/mcp`, transport, timeoutMs: 200 }), { code: 'MCP_CONNECT_FAILED', message: `MCP server "mute" (${base}/mcp): cannot connect: timed out after 200 ms` });
        }
      } finally {
        silent.closeAllConnections();
        await new Promise<void>((r) => silent.close(() => r()));
      }
    });

    it('bad options are refused before any I/O, naming the field', async () => {
      const cases: Array<[Parameters<typeof connectMcpServer>[1], RegExp]> = [
        [{ url: 'not a url' }, /url: expected an absolute http\(s\) URL/],
        [{ url: 'ftp://127.0.0.1/x' }, /url: expected an http\(s\) URL, got the scheme "ftp"/],
        [{ url: 'http://127.0.0.1/x', transport: 'websocket' as never }, /transport: expected one of streamable-http, sse/],
        [{ url: 'http://127.0.0.1/x', timeoutMs: 0 }, /timeoutMs: expected a whole number of milliseconds from 1 to 86,400,000/],
        [{ url: 'http://127.0.0.1/x', timeoutMs: 1.5 }, /timeoutMs/],
        [{ url: 'http://127.0.0.1/x', headers: { 'x-bad': 'a\r\nb' } }, /headers: /],
      ];
      for (const [options, message] of cases) {
        await assert.rejects(connectMcpServer('opts', options), (err: Error & { code?: string }) => err.code === 'MCP_OPTIONS_INVALID' && message.test(err.message), String(message));
      }
    });
  });
});
