import assert from 'node:assert/strict';
import type { AgentSource, AgentView } from '../../../kernel/runtime/agent-source.js';
import type { ToolEntry } from '../../../kernel/runtime/call-facts.js';
import type { ToolDefinition, ToolSource } from '../../../kernel/tools.js';
import { recordHooks, scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** A source with one tool, `desk/hand-off`, whose execute answers `answer(args)` (a delegation, or anything else). */
function deskSource(answer: (args: Record<string, unknown>) => unknown, turns: unknown[]): AgentSource {
  const tool: ToolDefinition = {
    identifier: 'desk',
    apiName: 'hand-off',
    description: 'Hands the task to a colleague',
    parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    toolSource: 'desk-source',
  };
  const source: ToolSource = { id: 'desk-tools', list: () => [tool], execute: async (call) => answer(call.args) as never };
  const entry: ToolEntry = { tool, source };
  const view: AgentView = Object.freeze({ model: scripted(turns, { provider: 'recorded' }) as AgentView['model'], tools: [entry], allowList: ['desk/*'] });
  return { id: 'desk', resolve: () => view };
}

/** A tool source answering with a DelegatedToolResult runs the call as a sub-agent on the call_agent path (kernel/tools.ts). */
describe('runtime: tools that delegate', () => {
  let fx: RuntimeFixture;
  beforeEach(async () => {
    fx = await startKernel();
    fx.kernel.agents.define({ id: 'colleague', model: scripted([{ text: 'handled by the colleague' }], { provider: 'recorded' }) as never, tools: [] });
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  it('the call passes the gate, starts a child with parentOperationId, fires the call-agent hooks, and answers the child’s text', async () => {
    fx.kernel.agentSources.add(deskSource((args) => ({ delegate: { agentId: String(args.to), prompt: 'please handle it' } }), [toolTurn('desk', 'hand-off', { to: 'colleague' }), { text: 'done' }]));
    const recorder = recordHooks(['beforeToolCall', 'beforeCallAgent', 'afterCallAgent', 'onCallAgentError', 'afterToolCall']);
    const handle = await fx.kernel.execAgent({ agentSource: 'desk', agentId: 'boss', prompt: 'go', hooks: recorder.hooks });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    const [child] = await fx.kernel.store.listOperations({ parentOperationId: final.id });
    assert.equal(child!.agentId, 'colleague');
    assert.equal(child!.status, 'done');
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.content, 'handled by the colleague');
    assert.deepEqual(recorder.sequence(final.id).filter((t) => t !== 'afterToolCall'), ['beforeToolCall', 'beforeCallAgent', 'afterCallAgent']);
    const [before] = recorder.of('beforeCallAgent', final.id);
    assert.equal(before!.instruction, 'please handle it');
    assert.equal(before!.callerAgentId, 'boss');
  });

  it('a child that cannot start (an unknown agent) is answered now: afterCallAgent with success false, onCallAgentError, agent_error', async () => {
    fx.kernel.agentSources.add(deskSource(() => ({ delegate: { agentId: 'nobody', prompt: 'x' } }), [toolTurn('desk', 'hand-off', { to: 'nobody' }), { text: 'done' }]));
    const recorder = recordHooks(['beforeCallAgent', 'afterCallAgent', 'onCallAgentError']);
    const handle = await fx.kernel.execAgent({ agentSource: 'desk', agentId: 'boss', prompt: 'go', hooks: recorder.hooks });
    const final = await handle.completed();
    assert.deepEqual(recorder.sequence(final.id), ['beforeCallAgent', 'afterCallAgent', 'onCallAgentError']);
    assert.equal(recorder.of('afterCallAgent', final.id)[0]!.success, false);
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.error, 'agent_error');
  });

  it('a malformed delegation is the tool’s error: nothing starts, no call-agent hook fires', async () => {
    fx.kernel.agentSources.add(deskSource(() => ({ delegate: { agentId: '', prompt: 7 } }), [toolTurn('desk', 'hand-off', { to: 'x' }), { text: 'done' }]));
    const recorder = recordHooks(['beforeCallAgent', 'onToolCallError']);
    const handle = await fx.kernel.execAgent({ agentSource: 'desk', agentId: 'boss', prompt: 'go', hooks: recorder.hooks });
    const final = await handle.completed();
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.error, 'tool_error');
    assert.match(tool.content, /malformed delegation/);
    assert.deepEqual(recorder.sequence(final.id), ['onToolCallError']);
    assert.deepEqual(await fx.kernel.store.listOperations({ parentOperationId: final.id }), []);
  });
});
