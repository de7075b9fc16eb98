import assert from 'node:assert/strict';
import type { AgentSource, AgentSourceContext, AgentView } from '../../../kernel/runtime/agent-source.js';
import { AGENT_SOURCE_CONTEXT_KEY } from '../../../kernel/runtime/agent-source.js';
import type { ToolEntry } from '../../../kernel/runtime/call-facts.js';
import type { ToolDefinition, ToolSource } from '../../../kernel/tools.js';
import type { OperationRecord } from '../../../kernel/store.js';
import { hook, recordHooks, scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** What a test source was asked: the step, and whether the operation was stored yet. */
interface Asked {
  ref: string;
  stepIndex: number;
  stored: boolean;
  messageCount: number;
}

/**
 * A source whose answer is a function of the step: `views(stepIndex)` for the
 * step about to run (start is asked as step 0, before the operation is stored).
 * Every question is recorded.
 */
function stepSource(id: string, views: (stepIndex: number, context: AgentSourceContext) => AgentView | Promise<AgentView>): AgentSource & { asked: Asked[] } {
  const asked: Asked[] = [];
  return {
    id,
    asked,
    resolve(ref, context) {
      asked.push({ ref, stepIndex: context.stepIndex, stored: context.operation !== undefined, messageCount: context.messages.length });
      return views(context.stepIndex, context);
    },
  };
}

/** A tool that exists only in a source's views (as `defineTool` / MCP tools will): never in a ToolSource the kernel knows. */
function runtimeTool(): { entry: ToolEntry; runs: Array<Record<string, unknown>> } {
  const runs: Array<Record<string, unknown>> = [];
  const tool: ToolDefinition = {
    identifier: 'live',
    apiName: 'count',
    description: 'Counts (appears at run time)',
    parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    toolSource: 'live-source',
  };
  const source: ToolSource = {
    id: 'live-tools',
    list: () => [tool],
    execute: async (call) => {
      runs.push(structuredClone(call.args));
      return `counted ${String(call.args.n)}`;
    },
  };
  return { entry: { tool, source }, runs };
}

/** agent sources (issue 11 item 4): the agent read fresh at every step, through the kernel. */
describe('runtime: agent sources', () => {
  let fx: RuntimeFixture;
  let testEntries: ToolEntry[];
  const entry = (name: string) => testEntries.find((e) => `${e.tool.identifier}/${e.tool.apiName}` === name)!;

  beforeEach(async () => {
    fx = await startKernel();
    testEntries = fx.tools.list().map((tool) => ({ tool, source: fx.tools }));
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const model = (turns: unknown[]) => scripted(turns, { provider: 'recorded' }) as AgentView['model'];
  const turnRequests = () => fx.model.requests.filter((r) => r.purpose === 'turn');

  it('asks the source at start and before every step; the model sees the instructions and tools of its own turn', async () => {
    const turns = model([toolTurn('test', 'echo', { a: 1 }, 'c1'), { text: 'done' }]);
    const source = stepSource('steps', (stepIndex) =>
      stepIndex === 0
        ? { instructions: 'first instructions', model: turns, tools: [entry('test/echo')], allowList: ['test/*'] }
        : { instructions: 'later instructions', model: turns, tools: [entry('test/echo'), entry('other/echo')], allowList: ['test/echo', 'other/echo'] },
    );
    fx.kernel.agentSources.add(source);
    const handle = await fx.kernel.execAgent({ agentSource: 'steps', agentId: 'changing', prompt: 'go' });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal(final.agentId, 'changing');

    const [first, second] = turnRequests();
    assert.deepEqual(first!.messages[0], { role: 'system', content: 'first instructions' });
    assert.deepEqual(first!.toolNames, ['test/echo']);
    assert.deepEqual(second!.messages[0], { role: 'system', content: 'later instructions' });
    assert.deepEqual(second!.toolNames.sort(), ['other/echo', 'test/echo']);
    assert.equal(fx.tools.calls.length, 1);

    // Start (not stored yet), then steps 0 (model), 1 (tool), 2 (model) and the finish decision at 3.
    assert.deepEqual(
      source.asked.map((a) => [a.ref, a.stepIndex, a.stored]),
      [['changing', 0, false], ['changing', 0, true], ['changing', 1, true], ['changing', 2, true], ['changing', 3, true]],
    );
    assert.equal(source.asked[1]!.messageCount, 1, 'step 0 sees the prompt');
    // The operation stores its source and the definition of the start view.
    const stored = (await fx.kernel.getOperation(handle.operationId))!;
    assert.equal(stored.context[AGENT_SOURCE_CONTEXT_KEY], 'steps');
    assert.equal((stored.agent as { instructions?: string }).instructions, 'first instructions');
  });

  it('a tool the source drops between the model turn and its call is refused at the gate: nothing runs and no hook sees the call', async () => {
    const turns = model([toolTurn('test', 'echo', { secret: 'x' }, 'c1'), { text: 'done' }]);
    fx.kernel.agentSources.add(
      stepSource('dropping', (stepIndex) =>
        stepIndex === 0 ? { model: turns, tools: testEntries, allowList: ['test/echo'] } : { model: turns, tools: testEntries, allowList: ['other/echo'] },
      ),
    );
    const rec = recordHooks();
    const final = await (await fx.kernel.execAgent({ agentSource: 'dropping', agentId: 'a', prompt: 'go', hooks: rec.hooks })).completed();
    assert.equal(final.status, 'done');
    assert.equal(fx.tools.calls.length, 0, 'nothing executed');
    assert.equal(rec.of('beforeToolCall').length, 0);
    assert.equal(rec.of('afterToolCall').length, 0);
    // The model turn's afterStep saw the call (allowed then); the tool step's afterStep reports no result for it.
    const afterSteps = rec.of('afterStep');
    assert.deepEqual(afterSteps[0]!.toolCalls?.map((c) => `${c.identifier}/${c.apiName}`), ['test/echo']);
    assert.equal(afterSteps[1]!.stepType, 'call_tool');
    assert.equal(afterSteps[1]!.toolResults, undefined);
    const toolMessage = turnRequests()[1]!.messages.find((m) => m.role === 'tool')!;
    assert.equal(toolMessage.toolResult?.error, 'tool_not_allowed');
    assert.deepEqual(turnRequests()[1]!.toolNames, ['other/echo']);
  });

  it('a tool the source takes out of its tools (still covered by the allow-list) is refused as tool_not_found', async () => {
    const turns = model([toolTurn('test', 'echo', {}, 'c1'), { text: 'done' }]);
    fx.kernel.agentSources.add(
      stepSource('shrinking', (stepIndex) => ({ model: turns, tools: stepIndex === 0 ? testEntries : [entry('test/boom')], allowList: ['test/*'] })),
    );
    const rec = recordHooks(['beforeToolCall', 'afterToolCall']);
    const handle = await fx.kernel.execAgent({ agentSource: 'shrinking', agentId: 'a', prompt: 'go', hooks: rec.hooks });
    assert.equal((await handle.completed()).status, 'done');
    assert.equal(fx.tools.calls.length, 0);
    assert.equal(rec.events.length, 0);
    const tool = (await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.error, 'tool_not_found');
  });

  it('a tool the source adds (one no ToolSource of the kernel lists) is offered at the next turn and runs through the whole gate', async () => {
    const live = runtimeTool();
    const turns = model([toolTurn('test', 'echo', {}, 'c1'), toolTurn('live', 'count', { n: 3 }, 'c2'), { text: 'done' }]);
    fx.kernel.agentSources.add(
      stepSource('growing', (stepIndex) =>
        stepIndex === 0
          ? { model: turns, tools: [entry('test/echo')], allowList: ['*'] }
          : { model: turns, tools: [entry('test/echo'), live.entry], allowList: ['*'], approval: { tools: [] } },
      ),
    );
    const rec = recordHooks(['beforeToolCall', 'afterToolCall']);
    const final = await (await fx.kernel.execAgent({ agentSource: 'growing', agentId: 'a', prompt: 'go', hooks: rec.hooks })).completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(turnRequests()[0]!.toolNames, ['test/echo']);
    assert.deepEqual(turnRequests()[1]!.toolNames.sort(), ['live/count', 'test/echo']);
    assert.deepEqual(live.runs, [{ n: 3 }]);
    assert.deepEqual(rec.of('beforeToolCall').map((e) => [`${e.identifier}/${e.apiName}`, e.toolSource]), [['test/echo', 'test-source'], ['live/count', 'live-source']]);
    assert.equal(rec.of('afterToolCall')[1]!.result.content, 'counted 3');
  });

  it('a call made before its tool was offered is checked against the schema of the tool it would run, at the gate', async () => {
    const live = runtimeTool();
    const turns = model([toolTurn('live', 'count', { n: 'not a number' }, 'c1'), { text: 'done' }]);
    fx.kernel.agentSources.add(
      stepSource('late', (stepIndex) => (stepIndex === 0 ? { model: turns, tools: [], allowList: [] } : { model: turns, tools: [live.entry], allowList: ['live/*'] })),
    );
    const handle = await fx.kernel.execAgent({ agentSource: 'late', agentId: 'a', prompt: 'go' });
    assert.equal((await handle.completed()).status, 'done');
    assert.deepEqual(live.runs, []);
    const tool = (await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.error, 'invalid_arguments');
    assert.match(tool.content, /args\/n must be number/);
  });

  it('the approval requirement and limits are the step view\'s: a call parks when the next view requires approval', async () => {
    const turns = model([toolTurn('test', 'echo', {}, 'c1'), { text: 'done' }]);
    fx.kernel.agentSources.add(
      stepSource('strict', (stepIndex) => ({ model: turns, tools: testEntries, allowList: ['test/*'], ...(stepIndex > 0 ? { approval: { tools: ['test/echo'] } } : {}) })),
    );
    const handle = await fx.kernel.execAgent({ agentSource: 'strict', agentId: 'a', prompt: 'go' });
    const parked = await handle.settled();
    assert.equal(parked.status, 'waiting_approval');
    assert.equal(fx.tools.calls.length, 0);
    assert.equal((await (await fx.kernel.approve(handle.operationId)).completed()).status, 'done');
    assert.equal(fx.tools.calls.length, 1);

    fx.kernel.agentSources.add(stepSource('limited', () => ({ model: turns, tools: testEntries, allowList: ['test/*'], limits: { maxSteps: 1 } })));
    const limited = await (await fx.kernel.execAgent({ agentSource: 'limited', agentId: 'b', prompt: 'go' })).completed();
    assert.equal(limited.reason, 'max_steps');
  });

  it('a source that throws before a step ends the operation in error with AGENT_SOURCE_FAILED naming the source; onError sees it', async () => {
    const turns = model([toolTurn('test', 'echo', {}, 'c1'), { text: 'done' }]);
    fx.kernel.agentSources.add(
      stepSource('flaky', (stepIndex) => {
        if (stepIndex === 1) throw new Error('renderer crashed');
        return { model: turns, tools: testEntries, allowList: ['test/*'] };
      }),
    );
    const rec = recordHooks(['onError', 'onComplete']);
    const final = await (await fx.kernel.execAgent({ agentSource: 'flaky', agentId: 'a', prompt: 'go', hooks: rec.hooks })).completed();
    assert.equal(final.status, 'error');
    assert.equal(final.error?.code, 'AGENT_SOURCE_FAILED');
    assert.match(final.error!.message, /agent source "flaky" failed to resolve agent "a" for step 1: renderer crashed/);
    assert.equal(fx.tools.calls.length, 0);
    const [onError] = rec.of('onError');
    assert.equal(onError!.errorCode, 'AGENT_SOURCE_FAILED');
    assert.equal((onError!.errorDetail as { source?: string }).source, 'flaky');
    assert.equal(rec.of('onComplete')[0]!.reason, 'error');
  });

  it('a source whose promise rejects ends the operation the same way; one that returns an invalid view ends it with AGENT_SOURCE_INVALID', async () => {
    const turns = model([toolTurn('test', 'echo', {}, 'c1'), { text: 'done' }]);
    const good: AgentView = { model: turns, tools: testEntries, allowList: ['test/*'] };
    fx.kernel.agentSources.add(stepSource('async', async (stepIndex) => (stepIndex === 2 ? Promise.reject(new Error('lost the connection')) : good)));
    const rejected = await (await fx.kernel.execAgent({ agentSource: 'async', agentId: 'a', prompt: 'go' })).completed();
    assert.equal(rejected.error?.code, 'AGENT_SOURCE_FAILED');
    assert.match(rejected.error!.message, /"async".*step 2: lost the connection/);
    assert.equal(fx.tools.calls.length, 1, 'the step before ran');

    fx.kernel.agentSources.add(stepSource('broken', (stepIndex) => (stepIndex === 0 ? good : ({ model: turns, tools: testEntries, allowList: ['not a ref'] } as AgentView))));
    const invalid = await (await fx.kernel.execAgent({ agentSource: 'broken', agentId: 'b', prompt: 'go' })).completed();
    assert.equal(invalid.error?.code, 'AGENT_SOURCE_INVALID');
    assert.match(invalid.error!.message, /agent source "broken" \(agent "b"\).*allowList\.0/s);
  });

  it('at start: an unknown source, a throwing source or an invalid view rejects execAgent and nothing is stored', async () => {
    await assert.rejects(fx.kernel.execAgent({ agentSource: 'nowhere', agentId: 'a', prompt: 'go' }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'AGENT_SOURCE_NOT_FOUND');
      assert.match(err.message, /"nowhere" \(have: static\)/);
      return true;
    });
    fx.kernel.agentSources.add(stepSource('down', () => Promise.reject(new Error('unreachable'))));
    await assert.rejects(fx.kernel.execAgent({ agentSource: 'down', agentId: 'a', prompt: 'go' }), { code: 'AGENT_SOURCE_FAILED', message: /agent source "down".*unreachable/ });
    fx.kernel.agentSources.add(stepSource('dup', () => ({ model: model([]), tools: [testEntries[0]!, testEntries[0]!], allowList: [] })));
    await assert.rejects(fx.kernel.execAgent({ agentSource: 'dup', agentId: 'a', prompt: 'go' }), { code: 'AGENT_SOURCE_INVALID', message: /tools\[1\]: a second tool named "test\/echo"/ });
    fx.kernel.agentSources.add(stepSource('nomodel', () => ({ tools: [], allowList: [] }) as unknown as AgentView));
    await assert.rejects(fx.kernel.execAgent({ agentSource: 'nomodel', agentId: 'a', prompt: 'go' }), { code: 'AGENT_SOURCE_INVALID', message: /model/ });
    assert.deepEqual(await fx.kernel.listOperations(), []);
  });

  it("a view's sub-agents are defined agents: the child runs from the static source and does not inherit the parent's", async () => {
    fx.kernel.agents.define({ id: 'helper', instructions: 'helper rules', model: model([{ text: 'helped' }]) });
    const turns = model([{ toolCalls: [{ id: 's1', identifier: 'agents', apiName: 'helper', args: { instruction: 'help' } }] }, { text: 'done' }]);
    fx.kernel.agentSources.add(stepSource('parent', () => ({ model: turns, tools: [], allowList: [], subagents: ['helper'] })));
    const handle = await fx.kernel.execAgent({ agentSource: 'parent', agentId: 'boss', prompt: 'go' });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    const [child] = await fx.kernel.listOperations({ parentOperationId: handle.operationId });
    assert.equal(child!.agentId, 'helper');
    assert.equal(child!.context[AGENT_SOURCE_CONTEXT_KEY], undefined);
    assert.equal(child!.state.lastText, 'helped');
    assert.ok(turnRequests().some((r) => r.messages[0]?.content === 'helper rules'));
  });

  it('sources are added by a unique lowercase id; "static" is the agent files\' source', () => {
    const noop = (id: string) => ({ id, resolve: () => ({ model: { provider: 'scripted' }, tools: [], allowList: [] }) });
    assert.throws(() => fx.kernel.agentSources.add(noop('static')), { code: 'AGENT_SOURCE_INVALID', message: /agent files/ });
    assert.throws(() => fx.kernel.agentSources.add(noop('Bad Id')), { code: 'AGENT_SOURCE_INVALID', message: /"Bad Id" must be lowercase/ });
    assert.throws(() => fx.kernel.agentSources.add({ id: 'x' } as unknown as AgentSource), { code: 'AGENT_SOURCE_INVALID', message: /resolve/ });
    fx.kernel.agentSources.add(noop('once'));
    assert.throws(() => fx.kernel.agentSources.add(noop('once')), { code: 'AGENT_SOURCE_INVALID', message: /taken/ });
    assert.deepEqual(fx.kernel.agentSources.ids(), ['static', 'once']);
  });

  it('a static agent runs as before: the stored context names no source, and the static view is the definition itself', async () => {
    const definition = fx.kernel.agents.define({ id: 'plain', instructions: 'be plain', tools: ['test/echo'], model: model([toolTurn('test', 'echo', {}, 'c1'), { text: 'done' }]) });
    const handle = await fx.kernel.execAgent({ agentId: 'plain', prompt: 'go', context: { topicId: 't', [AGENT_SOURCE_CONTEXT_KEY]: 'spoofed' } });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(final.context, { topicId: 't' }, 'a caller cannot name a source through the context');
    assert.deepEqual(final.agent, definition);
    assert.deepEqual(turnRequests()[0]!.toolNames, ['test/echo']);

    const staticSource = fx.kernel.agentSources.get('static');
    const context = { definition } as unknown as AgentSourceContext;
    const view = staticSource.resolve('plain', context) as AgentView;
    assert.equal(staticSource.resolve('plain', context), view, 'one view per definition');
    assert.equal(view.instructions, 'be plain');
    assert.equal(view.allowList, definition.tools);
    assert.ok(view.tools instanceof Map && view.tools.has('test/echo') && view.tools.has('other/echo'), "the kernel's whole catalogue");
    // Without a stored definition it answers from the registry.
    assert.equal((staticSource.resolve('plain', { definition: undefined } as unknown as AgentSourceContext) as AgentView).instructions, 'be plain');
  });

  it('a source can wrap the static one: a defined agent with instructions that change per step', async () => {
    const base = fx.kernel.agents.define({ id: 'wrapped', instructions: 'base', tools: ['test/*'], model: model([toolTurn('test', 'echo', {}, 'c1'), { text: 'done' }]) });
    const staticSource = fx.kernel.agentSources.get('static');
    fx.kernel.agentSources.add({
      id: 'decorated',
      resolve: (ref, context) => {
        const view = staticSource.resolve(ref, { ...context, definition: base }) as AgentView;
        return { ...view, instructions: `${view.instructions} (step ${context.stepIndex})` };
      },
    });
    const seen: OperationRecord[] = [];
    const final = await (await fx.kernel.execAgent({ agentSource: 'decorated', agentId: 'wrapped', prompt: 'go', hooks: [hook('onComplete', (e) => void seen.push(e.finalState as OperationRecord))] })).completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(turnRequests().map((r) => r.messages[0]!.content), ['base (step 0)', 'base (step 2)']);
    assert.equal(seen[0]!.context[AGENT_SOURCE_CONTEXT_KEY], 'decorated');
  });
});
