import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { connectMcpServer, type McpServerConnection } from '../../../plugins/mcp/connect-mcp-server.js';
import { startMcpTestServer, type FixtureTool, type McpTestServer } from './fixtures/mcp-test-server.js';
import { until } from '../../helpers/runtime-fixtures.js';

/** connectMcpServer against real MCP servers of the official SDK on loopback (document 001, "connectMcpServer()"). */
describe('connectMcpServer', function () {
  this.timeout(30_000);
  let server: McpTestServer | undefined;
  const connections: McpServerConnection[] = [];

  afterEach(async () => {
    for (const c of connections.splice(0)) await c.close();
    await server?.close();
    server = undefined;
  });

  async function connect(tools: FixtureTool[], options: Partial<Parameters<typeof connectMcpServer>[1]> = {}, extra: Parameters<typeof startMcpTestServer>[0] = {}) {
    server = await startMcpTestServer({ tools, ...extra });
    const connection = await connectMcpServer('fixture', { url: server.url(options.transport), ...options });
    connections.push(connection);
    return connection;
  }

  for (const transport of ['streamable-http', 'sse'] as const) {
    it(`connects over ${transport}, adapts the listed tools and calls one`, async () => {
      const c = await connect([{ name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }], { transport });
      assert.equal(c.name, 'fixture');
      assert.deepEqual(c.tools.map((t) => [t.name, t.identifier, t.apiName, t.toolSource, t.description]), [['mcp__fixture__echo', 'mcp__fixture', 'echo', 'mcp:fixture', 'Echoes']]);
      assert.deepEqual(c.tools[0]!.inputSchema, { type: 'object', properties: { text: { type: 'string' } } });
      assert.equal(c.tools[0]!.parameters, c.tools[0]!.inputSchema);
      const out = await c.tools[0]!.run({ text: 'hi' });
      assert.deepEqual(out, { content: 'called echo with {"text":"hi"}' });
      assert.equal(server!.sessions.opened, 1);
    });
  }

  it('works with an McpServer whose tools are declared with zod, structured output included', async () => {
    const c = await connect([], {}, {
      server: () => {
        const mcp = new McpServer({ name: 'zod-fixture', version: '1.0.0' });
        mcp.registerTool('add', { description: 'Adds', inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } }, ({ a, b }) => ({
          content: [{ type: 'text', text: String(a + b) }],
          structuredContent: { sum: a + b },
        }));
        return mcp;
      },
    });
    assert.deepEqual(c.tools.map((t) => t.name), ['mcp__fixture__add']);
    assert.deepEqual(await c.tools[0]!.run({ a: 2, b: 3 }), { content: '5', data: { sum: 5 } });
  });

  it('merges headers over requestInit headers (a name set in headers wins in any letter case) and uses the given fetch', async () => {
    let fetched = 0;
    const c = await connect([{ name: 'echo' }], {
      headers: { authorization: 'Bearer from-headers', 'X-Extra': 'extra' },
      requestInit: { headers: { Authorization: 'Bearer from-init', 'X-Init': 'init' } },
      fetch: (input, init) => {
        fetched++;
        return fetch(input, init);
      },
    });
    await c.tools[0]!.run({});
    assert.ok(fetched > 0);
    const posts = server!.requestHeaders.filter((h) => h['content-type'] === 'application/json');
    assert.ok(posts.length >= 2);
    for (const h of posts) {
      assert.equal(h.authorization, 'Bearer from-headers');
      assert.equal(h['x-extra'], 'extra');
      assert.equal(h['x-init'], 'init');
    }
  });

  it('follows tools/list pagination over several pages, in order', async () => {
    const tools = Array.from({ length: 7 }, (_, i) => ({ name: `t${i}` }));
    const c = await connect(tools, {}, { pageSize: 3 });
    assert.deepEqual(c.tools.map((t) => t.apiName), ['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
    assert.deepEqual(server!.listCursors, [undefined, 'page-1', 'page-2']);
  });

  it('throws on a repeated tools/list cursor, after closing the client (the server sees the session end)', async () => {
    server = await startMcpTestServer({ tools: Array.from({ length: 9 }, (_, i) => ({ name: `t${i}` })), pageSize: 2, repeatCursor: true });
    await assert.rejects(connectMcpServer('loop', { url: server.url() }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'MCP_DISCOVERY_FAILED');
      assert.match(err.message, /^MCP server "loop" \(http:\/\/127\.0\.0\.1:\d+\/mcp\): tools\/list repeated the cursor "page-1"/);
      return true;
    });
    assert.deepEqual(server.listCursors, [undefined, 'page-1', 'page-1'].slice(0, server.listCursors.length));
    assert.deepEqual(server.sessions, { opened: 1, ended: 1 });
  });

  it('sanitizes names (characters outside [A-Za-z0-9_-] become _) and refuses a server name that cannot separate', async () => {
    const c = await connect([{ name: 'get.weather' }, { name: 'say hi!' }, { name: 'ok_name-2' }]);
    assert.deepEqual(c.tools.map((t) => [t.name, t.apiName, t.mcpName]), [
      ['mcp__fixture__get_weather', 'get_weather', 'get.weather'],
      ['mcp__fixture__say_hi_', 'say_hi_', 'say hi!'],
      ['mcp__fixture__ok_name-2', 'ok_name-2', 'ok_name-2'],
    ]);
    assert.deepEqual(await c.tools[0]!.run({}), { content: 'called get.weather with {}' });
    for (const bad of ['', 'a__b', 'a b  c', '_x', 'x.']) {
      await assert.rejects(connectMcpServer(bad, { url: server!.url() }), (err: Error & { code?: string }) => err.code === 'MCP_OPTIONS_INVALID' && /name/.test(err.message), bad);
    }
    assert.equal(server!.sessions.opened, 1);
  });

  for (const transport of ['streamable-http', 'sse'] as const) {
    it(`rejects a connection whose tools collide once sanitized, and the server sees the session end (${transport})`, async () => {
      server = await startMcpTestServer({ tools: [{ name: 'a.b' }, { name: 'a_b' }] });
      await assert.rejects(connectMcpServer('dup', { url: server.url(transport), transport }), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'MCP_DISCOVERY_FAILED');
        assert.match(err.message, /tools "a\.b" and "a_b" both become "mcp__dup__a_b"; the connection is refused/);
        return true;
      });
      await until(() => server!.sessions.ended === 1);
      assert.deepEqual(server.sessions, { opened: 1, ended: 1 });
    });
  }

  it('skips task-only tools with a warning and keeps the others', async () => {
    const warnings: string[] = [];
    const original = console.warn;
    console.warn = (message: string) => warnings.push(message);
    try {
      const c = await connect([{ name: 'job', execution: { taskSupport: 'required' } }, { name: 'maybe', execution: { taskSupport: 'optional' } }, { name: 'plain' }]);
      assert.deepEqual(c.tools.map((t) => t.apiName), ['maybe', 'plain']);
    } finally {
      console.warn = original;
    }
    assert.deepEqual(warnings, ['MCP server "fixture": tool "job" skipped: it requires task-based execution (execution.taskSupport: required), which hookgate does not use']);
  });

  it('flattens content to text: text as is, other kinds described, embedded text resources inlined', async () => {
    const c = await connect([
      {
        name: 'mixed',
        run: () => ({
          content: [
            { type: 'text', text: 'first' },
            { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' },
            { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
            { type: 'resource_link', uri: 'file:///r.txt', name: 'r.txt', mimeType: 'text/plain', description: 'a file' },
            { type: 'resource', resource: { uri: 'mem://note', mimeType: 'text/markdown', text: '# note' } },
            { type: 'resource', resource: { uri: 'mem://bin', blob: 'AAAAAAAA' } },
          ],
        }),
      },
      { name: 'structured-only', run: () => ({ content: [], structuredContent: { n: 1 } }) },
      { name: 'empty', run: () => ({ content: [] }) },
    ]);
    const [mixed, structured, empty] = c.tools;
    assert.equal(
      (await mixed!.run({})).content,
      [
        'first',
        '[image: image/png, 8 bytes base64]',
        '[audio: audio/wav, 4 bytes base64]',
        '[resource link: r.txt <file:///r.txt> (text/plain): a file]',
        '[resource: <mem://note> (text/markdown)]\n# note',
        '[resource: <mem://bin>, 8 bytes base64]',
      ].join('\n\n'),
    );
    assert.deepEqual(await structured!.run({}), { content: '{"n":1}', data: { n: 1 } });
    assert.deepEqual(await empty!.run({}), { content: '(no content)' });
  });

  it('turns a result with isError into a tool error whose message is the flattened content', async () => {
    const c = await connect([{ name: 'fails', run: () => ({ isError: true, content: [{ type: 'text', text: 'Catalog unavailable.' }] }) }]);
    await assert.rejects(c.tools[0]!.run({}), (err: Error & { code?: string; details?: unknown }) => {
      assert.equal(err.code, 'MCP_TOOL_ERROR');
      assert.equal(err.message, 'Catalog unavailable.');
      assert.deepEqual(err.details, { server: 'fixture', tool: 'fails' });
      return true;
    });
  });

  describe('declared output schemas', () => {
    const outputSchema = { type: 'object', properties: { count: { type: 'integer', minimum: 0 } }, required: ['count'], additionalProperties: false };

    it('passes structured content that matches', async () => {
      const c = await connect([{ name: 'count', outputSchema, run: () => ({ content: [{ type: 'text', text: '3' }], structuredContent: { count: 3 } }) }]);
      assert.deepEqual(c.tools[0]!.outputSchema, outputSchema);
      assert.deepEqual(await c.tools[0]!.run({}), { content: '3', data: { count: 3 } });
    });

    it('refuses structured content that does not match, or none at all', async () => {
      const c = await connect([
        { name: 'bad', outputSchema, run: () => ({ content: [{ type: 'text', text: 'x' }], structuredContent: { count: -1 } }) },
        { name: 'extra', outputSchema, run: () => ({ content: [], structuredContent: { count: 1, more: true } }) },
        { name: 'none', outputSchema, run: () => ({ content: [{ type: 'text', text: 'no structure' }] }) },
      ]);
      await assert.rejects(c.tools[0]!.run({}), { code: 'MCP_OUTPUT_INVALID', message: 'MCP server "fixture": tool "bad": structuredContent/count must be >= 0' });
      await assert.rejects(c.tools[1]!.run({}), { code: 'MCP_OUTPUT_INVALID', message: 'MCP server "fixture": tool "extra": structuredContent must NOT have additional properties' });
      await assert.rejects(c.tools[2]!.run({}), { code: 'MCP_OUTPUT_INVALID', message: 'MCP server "fixture": tool "none": it declares an output schema but sent no structured content' });
    });

    it('fails every call of a tool whose output schema cannot be compiled (fail closed), without refusing the others', async () => {
      const c = await connect([
        { name: 'odd', outputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '(a)\\1' } } }, run: () => ({ content: [], structuredContent: { s: 'aa' } }) },
        { name: 'fine' },
      ]);
      await assert.rejects(c.tools[0]!.run({}), (err: Error & { code?: string }) => err.code === 'MCP_OUTPUT_INVALID' && /its output schema cannot be used/.test(err.message));
      assert.deepEqual(await c.tools[1]!.run({}), { content: 'called fine with {}' });
    });
  });
});
