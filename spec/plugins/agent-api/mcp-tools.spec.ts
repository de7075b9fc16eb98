import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AGENT_FUNCTION_SOURCE_ID, type Agent } from '../../../plugins/agent-api/agent.js';
import { AgentRenderError } from '../../../plugins/agent-api/agent-errors.js';
import { defineTool } from '../../../plugins/agent-api/define-tool.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { connectMcpServer, type McpServerConnection } from '../../../plugins/mcp/connect-mcp-server.js';
import { MAX_MCP_RESULT_BYTES } from '../../../plugins/mcp/mcp-tool.js';
import { recordHooks, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { PolicyWorld } from '../../integration/policies/harness.js';
import { startMcpTestServer, type FixtureTool, type McpTestServer } from '../mcp/fixtures/mcp-test-server.js';
import { addAgentFunctions, instanceThread, recordedModel, runAgent, startAgentKernel } from './agent-api-fixtures.js';

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });

/** The fixture server's tools: an order lookup with a 2020-12 schema, a tool that fails, one with an output schema, one with a result of a chosen size. */
const FIXTURE_TOOLS: FixtureTool[] = [
  {
    name: 'lookup',
    description: 'Looks an order up',
    inputSchema: {
      type: 'object',
      properties: { orderId: { type: 'string', minLength: 3 }, refund: { type: 'number' }, reason: { type: 'string' } },
      required: ['orderId'],
      // 2019-09 and later (MCP schemas default to 2020-12); draft-07 ignores it.
      dependentRequired: { refund: ['reason'] },
    },
    run: (args) => text(`order ${String(args.orderId)}: shipped`),
  },
  { name: 'fail', description: 'Always fails', run: () => ({ ...text('the warehouse is offline'), isError: true }) },
  {
    name: 'stats',
    description: 'Counts things',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    outputSchema: { type: 'object', properties: { count: { type: 'number', minimum: 0 } }, required: ['count'] },
    run: (args) => ({ ...text(`count is ${String(args.n)}`), structuredContent: { count: args.n } }),
  },
  {
    name: 'huge',
    description: 'Answers with as many bytes as asked',
    inputSchema: { type: 'object', properties: { bytes: { type: 'integer' } }, required: ['bytes'] },
    run: (args) => text('x'.repeat(Number(args.bytes))),
  },
];

function mcpTurn(apiName: string, args: Record<string, unknown>): Record<string, unknown> {
  return { toolCalls: [{ identifier: 'mcp__fixture', apiName, args }] };
}

/** useTool(tool) for the tools of connectMcpServer: mounted as they are, through the same gate, against a real MCP server on loopback. */
describe('agent API: MCP tools mounted with useTool', function () {
  this.timeout(30_000);
  let server: McpTestServer | undefined;
  let connection: McpServerConnection | undefined;
  let fx: RuntimeFixture | undefined;

  beforeEach(async () => {
    server = await startMcpTestServer({ tools: FIXTURE_TOOLS });
    connection = await connectMcpServer('fixture', { url: server.url() });
  });
  afterEach(async () => {
    await fx?.cleanup();
    await connection?.close();
    await server?.close();
    fx = undefined;
    connection = undefined;
    server = undefined;
  });

  const tool = (name: string) => connection!.tools.find((t) => t.mcpName === name)!;

  it('the model calls mcp__fixture__<tool>: arguments checked (the gate, then the 2020-12 schema), isError and output schemas tool errors, results flattened', async () => {
    const Orders = () => {
      useModel(
        recordedModel([
          mcpTurn('lookup', { orderId: 'A1' }),
          mcpTurn('lookup', { orderId: 'A-17', refund: 5 }),
          mcpTurn('lookup', { orderId: 'A-17' }),
          mcpTurn('fail', {}),
          mcpTurn('stats', { n: -1 }),
          mcpTurn('stats', { n: 2 }),
          { text: 'done' },
        ]),
      );
      for (const name of ['lookup', 'fail', 'stats']) useTool(tool(name));
      return 'You look orders up.';
    };
    fx = await startAgentKernel([Orders as Agent]);
    const rec = recordHooks(['beforeToolCall']);
    const handle = await fx.kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: 'Orders', prompt: 'go', hooks: rec.hooks });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(fx.model.requests[0]!.toolNames, ['mcp__fixture/lookup', 'mcp__fixture/fail', 'mcp__fixture/stats']);
    const results = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool');
    assert.deepEqual(results.map((m) => m.toolResult?.success), [false, false, true, false, false, true]);
    // Refused by the gate's schema check (minLength), then by the tool's own 2020-12 schema (dependentRequired): neither reached the server.
    assert.match(results[0]!.content, /orderId must NOT have fewer than 3 characters/);
    assert.match(results[1]!.content, /invalid arguments for tool "mcp__fixture__lookup": args must have property reason when property refund is present/);
    assert.equal(results[2]!.content, 'order A-17: shipped');
    assert.match(results[3]!.content, /the warehouse is offline/);
    assert.match(results[4]!.content, /MCP server "fixture": tool "stats": structuredContent\/count must be >= 0/);
    assert.equal(results[5]!.content, 'count is 2');
    assert.deepEqual(server!.calls.map((c) => [c.name, c.args]), [['lookup', { orderId: 'A-17' }], ['fail', {}], ['stats', { n: -1 }], ['stats', { n: 2 }]]);
    // The gate saw the MCP identity, not agent/...: a policy or webhook for the server's tools applies. The call the gate's
    // schema check refused reached no hook; the one the tool's own schema refused did (it is checked when the call runs).
    const seen = rec.of('beforeToolCall').map((e) => `${e.identifier}/${e.apiName}`);
    assert.deepEqual(seen, ['mcp__fixture/lookup', 'mcp__fixture/lookup', 'mcp__fixture/fail', 'mcp__fixture/stats', 'mcp__fixture/stats']);
  });

  it('a result over MAX_MCP_RESULT_BYTES is a tool error naming the size and the limit; one at the limit passes', async () => {
    const huge = tool('huge');
    assert.equal((await huge.run({ bytes: MAX_MCP_RESULT_BYTES })).content.length, MAX_MCP_RESULT_BYTES);
    await assert.rejects(huge.run({ bytes: MAX_MCP_RESULT_BYTES + 1 }), {
      code: 'MCP_RESULT_TOO_LARGE',
      message: 'MCP server "fixture": tool "huge": its result is 1,048,577 bytes (text plus structured content), over the limit of 1,048,576 bytes; ask the tool for less',
    });
    const Greedy = () => {
      useModel(recordedModel([mcpTurn('huge', { bytes: MAX_MCP_RESULT_BYTES + 1 }), { text: 'too much' }]));
      useTool(huge);
    };
    fx = await startAgentKernel([Greedy as Agent]);
    const final = await runAgent(fx.kernel, 'Greedy', 'go');
    assert.equal(final.status, 'done');
    const [result] = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool');
    assert.equal(result!.toolResult?.success, false);
    assert.match(result!.content, /over the limit of 1,048,576 bytes/);
    assert.ok(result!.content.length < 1000, 'none of the oversized result is kept');
  });

  it('an MCP tool mounted conditionally is narrated like any tool, under the name the model calls it by', async () => {
    const deployed = { mcp: false };
    const Switching = () => {
      useModel(recordedModel([{ text: 'one' }, { text: 'two' }]));
      useTool({ name: 'note', description: 'Takes a note', run: () => 1 });
      if (deployed.mcp) useTool(tool('lookup'));
    };
    fx = await startAgentKernel([Switching as Agent]);
    const threadId = await instanceThread(fx.kernel, 'Switching', 's1');
    await runAgent(fx.kernel, 'Switching', 'first', { threadId });
    deployed.mcp = true;
    await runAgent(fx.kernel, 'Switching', 'second', { threadId });
    assert.equal(
      fx.model.requests[1]!.messages.at(-1)!.content,
      '<signal type="resources" resource="tool">\nNew tool available:\n- **mcp__fixture__lookup** — Looks an order up\nAll available tools: mcp__fixture__lookup, note\n</signal>',
    );
  });

  it('defineTool(mcpTool) is refused (the definitions are complete), and so is an MCP-shaped tool whose names disagree', () => {
    assert.throws(() => defineTool(tool('lookup') as never), (err: unknown) => err instanceof AgentRenderError && /mount them with useTool\(tool\), without defineTool\(\)/.test(err.message));
    const forged = { ...tool('lookup'), identifier: 'mcp__other' };
    assert.throws(
      () => renderAgent(() => (useModel(recordedModel([])), useTool(forged), undefined)),
      (err: unknown) => err instanceof AgentRenderError && /do not agree with server "fixture" and tool "lookup"/.test(err.message),
    );
    // The same MCP tool mounted twice in one render is a name conflict, like any tool.
    assert.throws(() => renderAgent(() => (useModel(recordedModel([])), useTool(tool('lookup')), useTool(tool('lookup')), undefined)), /lookup/);
  });
});

describe('agent API: an MCP tool of an agent function denied by a policy', function () {
  this.timeout(30_000);
  let world: PolicyWorld | undefined;
  let server: McpTestServer | undefined;
  let connection: McpServerConnection | undefined;
  afterEach(async () => {
    await world?.cleanup();
    await connection?.close();
    await server?.close();
    world = undefined;
  });

  it('a deny policy on mcp__fixture/lookup keeps the call from reaching the server; the model sees hook_denied with the reason', async () => {
    server = await startMcpTestServer({ tools: FIXTURE_TOOLS });
    connection = await connectMcpServer('fixture', { url: server.url() });
    world = await PolicyWorld.create({
      'mcp.yaml': `name: mcp\npolicies:\n  - id: no-refunds\n    events: [beforeToolCall]\n    match: '^mcp__fixture/lookup$'\n    when: args.refund > 0\n    effect: deny\n    reason: refunds go through a person\n`,
    });
    const kernel = await world.boot();
    const lookup = connection.tools.find((t) => t.mcpName === 'lookup')!;
    const Refunds = () => {
      useModel(recordedModel([mcpTurn('lookup', { orderId: 'A-17', refund: 5, reason: 'late' }), { text: 'denied' }]));
      useTool(lookup);
    };
    addAgentFunctions(kernel, [Refunds as Agent]);
    const final = await runAgent(kernel, 'Refunds', 'refund it');
    assert.equal(final.status, 'done');
    const [result] = await world.toolMessages(final.id);
    assert.equal(result!.toolResult?.error, 'hook_denied');
    assert.match(result!.content, /refunds go through a person/);
    assert.deepEqual(server.calls, []);
    const decisions = await world.decisions({ operationId: final.id });
    assert.deepEqual(decisions.map((d) => [d.identifier, d.apiName, d.decision]), [['mcp__fixture', 'lookup', 'deny']]);
  });
});
