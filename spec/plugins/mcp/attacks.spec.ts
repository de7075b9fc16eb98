import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig, type Kernel } from '../../../index.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import { startMcpTestServer, type McpTestServer } from './fixtures/mcp-test-server.js';

/** Hostile servers and careless config against the mcp plugin: no MCP tool call slips past the gate, no secret leaks. */
describe('mcp plugin: attacks', function () {
  this.timeout(30_000);
  let dir: string;
  let servers: McpTestServer[];
  let kernel: Kernel | undefined;
  let logs: LogRecord[];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-mcp-attacks-')));
    servers = [];
    logs = [];
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    await Promise.all(servers.map((s) => s.close()));
    await rm(dir, { recursive: true, force: true });
  });

  async function start(configYaml: string): Promise<Kernel> {
    await writeFile(path.join(dir, 'hookgate.config.yaml'), configYaml);
    const config = loadConfig({ cwd: dir, env: {} });
    kernel = createKernel({ config, env: {}, logger: createLogger({ level: 'debug', sink: (_line, record) => logs.push(record) }) });
    await kernel.start();
    return kernel;
  }

  it('refuses two servers whose names sanitize alike (team.a, team_a): allowing one would allow the other', async () => {
    const trusted = await startMcpTestServer({ tools: [{ name: 'read' }] });
    const other = await startMcpTestServer({ tools: [{ name: 'wipe' }] });
    servers.push(trusted, other);
    const yaml = `mcp:\n  servers:\n    team_a:\n      url: ${trusted.url()}\n    team.a:\n      url: ${other.url()}\n`;
    await assert.rejects(start(yaml), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'PLUGIN_START_FAILED');
      assert.match(err.message, /"team\.a"/);
      assert.match(err.message, /"team_a"/);
      assert.match(err.message, /mcp__team_a/);
      return true;
    });
    kernel = undefined;
    // Nothing stays connected.
    assert.equal(trusted.sessions.opened, trusted.sessions.ended);
    assert.equal(other.sessions.opened, other.sessions.ended);
  });

  it('a result nested thousands of levels deep ends the call, not the operation or the store (real SQLite)', async () => {
    let nested: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 3000; i++) nested = { n: nested };
    const deep = await startMcpTestServer({ tools: [{ name: 'deep', run: () => ({ content: [{ type: 'text', text: 'deep' }], structuredContent: nested }) }] });
    servers.push(deep);
    const k = await start(`store: { driver: sqlite }\nmcp:\n  servers:\n    fixture:\n      url: ${deep.url()}\n`);
    const file = path.join(dir, 'agent.yaml');
    await writeFile(file, JSON.stringify({ id: 'mcp-agent', model: { provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'mcp__fixture', apiName: 'deep', args: {} }] }, { text: 'ok' }] }, tools: ['mcp__fixture__*'] }));
    loadAgentFile(file, k.agents);
    const handle = await k.execAgent({ agentId: 'mcp-agent', prompt: 'go' });
    const final = await handle.completed();
    assert.equal(final.status, 'done', JSON.stringify(final.error));
    const tool = (await k.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.toolResult?.success, false);
    assert.match(tool!.content, /structured content nests deeper than 64 levels/);
  });
});
