import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, realpath, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig, type Kernel } from '../../../index.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import { parseAgentDefinition } from '../../../kernel/agent-definition.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import { ToolNameMap, toFunctionName } from '../../../kernel/model-tool-names.js';
import { startMcpTestServer, type FixtureCall, type McpTestServer } from './fixtures/mcp-test-server.js';
import { runHookgate } from '../../helpers/cli-process.js';

const TOKEN = 'fixture-token-5f1c2b9e7d';

/** The mcp plugin: MCP servers from the config, their tools through the kernel's one gate (issue 14 item 4). */
describe('mcp plugin: configured MCP servers for YAML agents', function () {
  this.timeout(30_000);
  let dir: string;
  let server: McpTestServer;
  let kernel: Kernel | undefined;
  let logs: LogRecord[];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-mcp-')));
    logs = [];
    server = await startMcpTestServer({
      tools: [
        { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
        { name: 'delete.repo' },
        // A server that echoes the credential it was sent: hookgate must not store or log it.
        { name: 'leaky', run: () => ({ isError: true, content: [{ type: 'text', text: `refused with Bearer ${TOKEN}` }] }) },
      ],
    });
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function start(configYaml: string, env: Record<string, string> = { FIXTURE_TOKEN: TOKEN }): Promise<Kernel> {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), configYaml);
    const config = loadConfig({ cwd: dir, env: {} });
    kernel = createKernel({ config, env, logger: createLogger({ level: 'debug', sink: (_line, record) => logs.push(record) }) });
    await kernel.start();
    return kernel;
  }

  const configFor = (url: string, extra = '') => `mcp:\n  servers:\n    fixture:\n      url: ${url}\n      headers:\n        Authorization: "Bearer \${FIXTURE_TOKEN}"\n${extra}`;

  async function agentFile(tools: string[], turns: unknown[]): Promise<string> {
    const file = path.join(dir, 'agent.yaml');
    await writeFile(file, JSON.stringify({ id: 'mcp-agent', model: { provider: 'scripted', turns }, tools }));
    return file;
  }

  const call = (apiName: string, args: Record<string, unknown> = {}) => ({ toolCalls: [{ identifier: 'mcp__fixture', apiName, args }] });

  it('runs a YAML agent that allows mcp__fixture__* and calls an MCP tool with the configured header', async () => {
    const k = await start(configFor(server.url()));
    loadAgentFile(await agentFile(['mcp__fixture__*'], [call('echo', { text: 'hi' }), { text: 'done' }]), k.agents);
    assert.deepEqual(k.agents.get('mcp-agent')?.tools, ['mcp__fixture/*']);
    const handle = await k.execAgent({ agentId: 'mcp-agent', prompt: 'go' });
    assert.equal((await handle.completed()).reason, 'done');
    const tool = (await k.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.content, 'called echo with {"text":"hi"}');
    assert.equal(tool?.toolResult?.success, true);
    assert.ok(server.requestHeaders.some((h) => h.authorization === `Bearer ${TOKEN}`));
  });

  it('a policy denies an MCP tool by its identifier/apiName, before the server sees the call (the same gate)', async () => {
    await mkdir(path.join(dir, 'policies'));
    await writeFile(
      path.join(dir, 'policies', 'mcp.yaml'),
      "policies:\n  - id: no-mcp-deletes\n    match: '^mcp__fixture/delete_'\n    effect: deny\n    reason: deleting repositories is not allowed\n",
    );
    const k = await start(configFor(server.url()));
    loadAgentFile(await agentFile(['mcp__fixture__*'], [call('delete_repo'), { text: 'ok' }]), k.agents);
    const handle = await k.execAgent({ agentId: 'mcp-agent', prompt: 'go' });
    await handle.completed();
    const tool = (await k.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.toolResult?.success, false);
    assert.equal(tool?.toolResult?.error, 'hook_denied');
    assert.match(tool?.content ?? '', /deleting repositories is not allowed/);
    assert.deepEqual(server.calls, []);
  });

  it('the allow-list applies: a tool outside mcp__fixture__echo is not allowed and never reaches the server', async () => {
    const k = await start(configFor(server.url()));
    loadAgentFile(await agentFile(['mcp__fixture__echo'], [call('delete_repo'), { text: 'ok' }]), k.agents);
    const handle = await k.execAgent({ agentId: 'mcp-agent', prompt: 'go' });
    await handle.completed();
    const tool = (await k.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.toolResult?.error, 'tool_not_allowed');
    assert.deepEqual(server.calls, []);
  });

  it('an approval requirement parks an MCP call before the server sees it; approving runs it', async () => {
    const k = await start(configFor(server.url()));
    const file = path.join(dir, 'agent.yaml');
    await writeFile(file, JSON.stringify({ id: 'mcp-agent', model: { provider: 'scripted', turns: [call('echo', { text: 'ok?' }), { text: 'done' }] }, tools: ['mcp__fixture__*'], approval: { tools: ['mcp__fixture__echo'] } }));
    loadAgentFile(file, k.agents);
    const handle = await k.execAgent({ agentId: 'mcp-agent', prompt: 'go' });
    await handle.settled();
    assert.equal((await k.getOperation(handle.operationId))?.status, 'waiting_approval');
    assert.deepEqual(server.calls, []);
    assert.equal((await (await k.approve(handle.operationId)).completed()).status, 'done');
    assert.deepEqual((server.calls as FixtureCall[]).map((c) => [c.name, c.args]), [['echo', { text: 'ok?' }]]);
  });

  it('an isError result is a tool error; the credential the server echoed reaches neither the store, the logs nor the result', async () => {
    const k = await start(`store: { driver: sqlite }\n${configFor(server.url())}`);
    loadAgentFile(await agentFile(['mcp__fixture__*'], [call('leaky'), { text: 'ok' }]), k.agents);
    const handle = await k.execAgent({ agentId: 'mcp-agent', prompt: 'go' });
    await handle.completed();
    const tool = (await k.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.toolResult?.error, 'tool_error');
    assert.equal(tool?.content, 'Error: refused with [redacted]');
    await k.stop();
    kernel = undefined;
    const files = (await readdir(path.join(dir, '.hookgate'))).filter((f) => f.startsWith('hookgate.db'));
    assert.ok(files.length > 0);
    for (const f of files) assert.equal((await readFile(path.join(dir, '.hookgate', f))).includes(TOKEN), false, f);
    assert.equal(JSON.stringify(logs).includes(TOKEN), false);
  });

  it('offers MCP tools to models as mcp__<server>__<tool>, and maps the name back', async () => {
    const k = await start(configFor(server.url()));
    const specs = k.resolveAll((await import('../../../kernel/tokens.js')).ToolSources).flatMap((s) => s.list()).filter((t) => t.toolSource === 'mcp:fixture');
    assert.deepEqual(specs.map((t) => toFunctionName(t.identifier, t.apiName)), ['mcp__fixture__echo', 'mcp__fixture__delete_repo', 'mcp__fixture__leaky']);
    const names = new ToolNameMap(specs);
    assert.deepEqual(names.fromName('mcp__fixture__delete_repo'), { identifier: 'mcp__fixture', apiName: 'delete_repo' });
    // A name the model invents splits after the server, so the refusal names the right tool.
    assert.deepEqual(names.fromName('mcp__fixture__made__up'), { identifier: 'mcp__fixture', apiName: 'made__up' });
  });

  it('closes the MCP clients when the kernel stops (the server sees the sessions end)', async () => {
    const k = await start(configFor(server.url()));
    assert.equal(server.sessions.opened, 1);
    await k.stop();
    kernel = undefined;
    assert.deepEqual(server.sessions, { opened: 1, ended: 1 });
  });

  describe('start failures', () => {
    it('an unreachable server fails the start, naming the plugin and the server; servers that connected are closed', async () => {
      const yaml = `mcp:\n  servers:\n    good:\n      url: ${server.url()}\n    gone:\n      url: http://127.0.0.1:1/mcp\n`;
      await assert.rejects(start(yaml), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'PLUGIN_START_FAILED');
        assert.match(err.message, /mcp/);
        assert.match(err.message, /MCP server "gone" \(http:\/\/127\.0\.0\.1:1\/mcp\): cannot connect/);
        return true;
      });
      kernel = undefined;
      assert.deepEqual(server.sessions, { opened: 1, ended: 1 });
    });

    it('a header variable that is not set fails the start naming the field and the variable, never a value', async () => {
      await assert.rejects(start(configFor(server.url()), {}), (err: Error) => {
        assert.match(err.message, /mcp\.servers\.fixture\.headers\.Authorization: the environment variable FIXTURE_TOKEN is not set/);
        return true;
      });
      kernel = undefined;
      assert.equal(server.sessions.opened, 0);
    });
  });

  it('hookgate policy check does not connect, and says the MCP tools are not known yet', async () => {
    await mkdir(path.join(dir, 'policies'));
    await writeFile(path.join(dir, 'policies', 'mcp.yaml'), "policies:\n  - id: no-mcp-deletes\n    match: '^mcp__fixture/delete_'\n    effect: deny\n");
    await writeFile(path.join(dir, 'hookgate.config.yaml'), configFor(server.url()));
    const result = await runHookgate(dir, ['policy', 'check'], { FIXTURE_TOKEN: TOKEN });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /tool source "mcp" of plugin "mcp" could not list its tools without starting: the tools of MCP server "fixture" are known once connected \(when the kernel starts\)/);
    assert.equal(server.sessions.opened, 0);
    assert.equal(`${result.stdout}${result.stderr}`.includes(TOKEN), false);
  });

  describe('config and agent files', () => {
    const refused = async (yaml: string, message: RegExp) => {
      await writeFile(path.join(dir, 'hookgate.config.yaml'), yaml);
      assert.throws(() => loadConfig({ cwd: dir, env: {} }), (err: Error & { code?: string }) => err.code === 'CONFIG_INVALID' && message.test(err.message));
    };

    it('refuses a credential header written into the file, a header the transport owns, a bad name, URL or timeout', async () => {
      await refused('mcp:\n  servers:\n    gh:\n      url: http://127.0.0.1/mcp\n      headers: { Authorization: "Bearer abc123" }\n', /mcp\.servers\.gh\.headers\.Authorization: header "Authorization" carries a credential: name the environment variable/);
      await refused('mcp:\n  servers:\n    gh:\n      url: http://127.0.0.1/mcp\n      headers: { Mcp-Session-Id: x }\n', /header "Mcp-Session-Id" is set by the MCP transport/);
      await refused('mcp:\n  servers:\n    a__b:\n      url: http://127.0.0.1/mcp\n', /mcp\.servers\.a__b: expected a server name/);
      await refused('mcp:\n  servers:\n    gh:\n      url: ftp://127.0.0.1/mcp\n', /mcp\.servers\.gh\.url: expected an http\(s\) URL/);
      await refused('mcp:\n  servers:\n    gh:\n      url: http://u:p@127.0.0.1/mcp\n', /mcp\.servers\.gh\.url: expected a URL without credentials/);
      await refused('mcp:\n  servers:\n    gh:\n      url: http://127.0.0.1/mcp\n      timeoutMs: 0\n', /mcp\.servers\.gh\.timeoutMs: expected a whole number from 1 to 86,400,000/);
      await refused('mcp:\n  servers:\n    gh:\n      url: http://127.0.0.1/mcp\n      transport: stdio\n', /mcp\.servers\.gh\.transport: expected one of streamable-http, sse/);
    });

    it('accepts document 001 spellings of MCP tool refs in agent files and maps them onto identifier/apiName', () => {
      const agent = parseAgentDefinition(
        { id: 'a', model: { provider: 'scripted' }, tools: ['mcp__github__*', 'mcp__my_srv__create__issue', 'fs/*'], approval: { tools: ['mcp__github__merge_pr'] } },
        'agent.yaml',
      );
      assert.deepEqual(agent.tools, ['mcp__github/*', 'mcp__my_srv/create__issue', 'fs/*']);
      assert.deepEqual(agent.approval?.tools, ['mcp__github/merge_pr']);
      for (const bad of ['mcp__github__', 'mcp____x', 'mcp___x__y', 'mcp__gh__a.b']) {
        assert.throws(() => parseAgentDefinition({ id: 'a', model: { provider: 'scripted' }, tools: [bad] }, 'agent.yaml'), /expected "identifier\/apiName", "identifier\/\*", "\*", "mcp__<server>__<tool>"/, bad);
      }
    });
  });
});
