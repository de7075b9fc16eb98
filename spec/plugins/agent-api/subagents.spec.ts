import assert from 'node:assert/strict';
import type { OperationRecord } from '../../../kernel/store.js';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { defineSubagent, GeneralSubagent, type SubagentDefinition } from '../../../plugins/agent-api/define-subagent.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useSubagent } from '../../../plugins/agent-api/use-subagent.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { recordHooks, until, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { PolicyWorld } from '../../integration/policies/harness.js';
import { addAgentFunctions, agentToolTurn, recordedModel, runAgent, startAgentKernel } from './agent-api-fixtures.js';

const CALL_AGENT_HOOKS = ['beforeCallAgent', 'afterCallAgent', 'onCallAgentError'] as const;

/** A researcher delegate with its own scripted model and a lookup tool. */
function researcher(turns: unknown[], lookups: string[] = []): SubagentDefinition {
  return defineSubagent({
    name: 'researcher',
    description: 'Finds facts in the knowledge base.',
    model: recordedModel(turns),
    agent: () => {
      useTool({ name: 'lookup', description: 'Looks a fact up', run: ({ toolCallId }: { toolCallId: string }) => (lookups.push(toolCallId), 'the answer is 42') });
      return 'You research.';
    },
  });
}

/** The operations of the fixture's store, children included. */
async function childrenOf(fx: { kernel: RuntimeFixture['kernel'] }, parent: OperationRecord): Promise<OperationRecord[]> {
  return fx.kernel.store.listOperations({ parentOperationId: parent.id });
}

/** Subagents (document 001 "defineSubagent()", "GeneralSubagent"): the task tool, child operations, the call-agent hooks. */
describe('agent API: subagents', function () {
  this.timeout(20000);
  let fx: RuntimeFixture | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });

  it('the task tool carries the roster (not the system prompt); a delegation is a child operation with parentOperationId whose answer the parent reads', async () => {
    const lookups: string[] = [];
    const sub = researcher([agentToolTurn('lookup'), { text: 'It is 42.' }], lookups);
    const Lead = () => {
      useModel(recordedModel([agentToolTurn('task', { agent: 'researcher', prompt: 'What is the answer?' }), { text: 'The researcher says 42.' }]));
      useSubagent(sub);
      useSubagent(GeneralSubagent);
      return 'You lead.';
    };
    fx = await startAgentKernel([Lead as Agent]);
    const recorder = recordHooks([...CALL_AGENT_HOOKS]);
    const final = await runAgent(fx.kernel, 'Lead', 'find the answer', { hooks: recorder.hooks });
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'The researcher says 42.');

    const first = fx.model.requests[0]!;
    assert.equal(first.messages[0]!.content, 'You lead.', 'no roster in the system prompt');
    assert.deepEqual(first.toolNames, ['agent/task']);
    const description = first.toolDescriptions['agent/task']!;
    assert.match(description, /Available agents:\n- \*\*researcher\*\* — Finds facts in the knowledge base\.\n- \*\*flue-general\*\* — /);

    const [child] = await childrenOf(fx, final);
    assert.ok(child, 'a child operation exists');
    assert.equal(child.parentOperationId, final.id);
    assert.equal(child.agentId, 'Lead.researcher');
    assert.equal(child.status, 'done');
    assert.equal(lookups.length, 1, "the child's own tool ran");
    const childRequest = fx.model.requests.find((r) => r.operationId === child.id)!;
    assert.equal(childRequest.messages[0]!.content, 'You research.');
    assert.equal(childRequest.messages[1]!.content, 'What is the answer?');
    assert.deepEqual(childRequest.toolNames, ['agent/lookup']);

    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, true);
    assert.equal(tool.content, 'It is 42.');
    assert.deepEqual((tool.toolResult?.data as { subOperationId?: string }).subOperationId, child.id);

    assert.deepEqual(recorder.sequence(final.id), ['beforeCallAgent', 'afterCallAgent']);
    const [before] = recorder.of('beforeCallAgent', final.id);
    assert.equal(before!.agentId, 'Lead.researcher');
    assert.equal(before!.callerAgentId, 'Lead');
    assert.equal(before!.instruction, 'What is the answer?');
    const [after] = recorder.of('afterCallAgent', final.id);
    assert.equal(after!.success, true);
    assert.equal(after!.subOperationId, child.id);
  });

  it('a child that fails fires onCallAgentError on the parent, and the parent reads an agent_error result', async () => {
    const sub = researcher([{ error: 'the knowledge base is down' }]);
    const Lead = () => {
      useModel(recordedModel([agentToolTurn('task', { agent: 'researcher', prompt: 'look it up' }), { text: 'It failed.' }]));
      useSubagent(sub);
    };
    fx = await startAgentKernel([Lead as Agent]);
    const recorder = recordHooks([...CALL_AGENT_HOOKS]);
    const final = await runAgent(fx.kernel, 'Lead', 'go', { hooks: recorder.hooks });
    assert.equal(final.status, 'done');
    const [child] = await childrenOf(fx, final);
    assert.equal(child!.status, 'error');
    assert.deepEqual(recorder.sequence(final.id), ['beforeCallAgent', 'afterCallAgent', 'onCallAgentError']);
    const [failure] = recorder.of('onCallAgentError', final.id);
    assert.equal(failure!.agentId, 'Lead.researcher');
    assert.match(failure!.error, /sub-agent "Lead\.researcher" ended with error: .*the knowledge base is down/);
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.error, 'agent_error');
    assert.match(tool.content, /the knowledge base is down/);
  });

  it('an unknown agent name is a factual miss listing the subagents available now; no child starts and no call-agent hook fires', async () => {
    const Lead = () => {
      useModel(recordedModel([agentToolTurn('task', { agent: 'writer', prompt: 'write' }), { text: 'ok' }]));
      useSubagent(researcher([{ text: 'x' }]));
      useSubagent(GeneralSubagent);
    };
    fx = await startAgentKernel([Lead as Agent]);
    const recorder = recordHooks([...CALL_AGENT_HOOKS]);
    const final = await runAgent(fx.kernel, 'Lead', 'go', { hooks: recorder.hooks });
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, true);
    assert.equal(tool.content, 'Subagent "writer" is not declared. Available subagents: researcher, flue-general.');
    assert.deepEqual(await childrenOf(fx, final), []);
    assert.deepEqual(recorder.sequence(final.id), []);
  });

  it("GeneralSubagent's child runs with the parent's model and none of its instructions, tools or subagents", async () => {
    const Lead = () => {
      // The child replays this script from its first turn: its task call is refused there (it has no task tool), then it answers.
      useModel(recordedModel([agentToolTurn('task', { agent: 'flue-general', prompt: 'summarize' }), { text: 'summary' }]));
      useTool({ name: 'secret', description: 'parent only', run: () => 'classified' });
      useSubagent(GeneralSubagent);
      return 'Parent instructions.';
    };
    fx = await startAgentKernel([Lead as Agent]);
    const final = await runAgent(fx.kernel, 'Lead', 'go');
    assert.equal(final.status, 'done');
    const [child] = await childrenOf(fx, final);
    assert.equal(child!.agentId, 'Lead.flue-general');
    const childRequests = fx.model.requests.filter((r) => r.operationId === child!.id);
    assert.ok(childRequests.length > 0, "the parent's model (the recorded provider) served the child");
    assert.deepEqual(childRequests[0]!.toolNames, []);
    assert.deepEqual(childRequests[0]!.messages.map((m) => m.role), ['user'], 'no system message');
    const childTool = (await fx.kernel.listMessages(child!.id)).find((m) => m.role === 'tool')!;
    assert.equal(childTool.toolResult?.error, 'tool_not_allowed');
  });

  it('a subagent declared later is delegated to through the live set, while the roster in the task description stays as first shown', async () => {
    let hired = false;
    const writer = defineSubagent({ name: 'writer', description: 'Writes.', agent: () => 'You write.', model: recordedModel([{ text: 'written' }]) });
    const Lead = () => {
      useModel(recordedModel([agentToolTurn('hire'), agentToolTurn('task', { agent: 'writer', prompt: 'write it' }), { text: 'done' }]));
      useTool({ name: 'hire', description: 'Hires a writer', run: () => void (hired = true) });
      useSubagent(researcher([{ text: 'x' }]));
      if (hired) useSubagent(writer);
    };
    fx = await startAgentKernel([Lead as Agent]);
    const final = await runAgent(fx.kernel, 'Lead', 'go');
    assert.equal(final.status, 'done');
    const descriptions = fx.model.requests.filter((r) => r.operationId === final.id).map((r) => r.toolDescriptions['agent/task']);
    assert.equal(new Set(descriptions).size, 1, 'the roster never changed');
    assert.ok(!descriptions[0]!.includes('writer'));
    const [child] = await childrenOf(fx, final);
    assert.equal(child!.agentId, 'Lead.writer');
    const tool = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool')[1]!;
    assert.equal(tool.content, 'written');
  });

  it('aborting the delegating operation while its child runs interrupts both', async () => {
    // Ten minutes: a parent that waited for the child would hit mocha's timeout.
    const slow = defineSubagent({ name: 'slow', description: 'Slow.', agent: () => 'Slow.', model: recordedModel([{ text: 'late', delayMs: 600_000 }]) });
    const Lead = () => {
      useModel(recordedModel([agentToolTurn('task', { agent: 'slow', prompt: 'take your time' }), { text: 'done' }]));
      useSubagent(slow);
    };
    fx = await startAgentKernel([Lead as Agent]);
    const recorder = recordHooks(['afterCallAgent']);
    const handle = await fx.kernel.execAgent({ agentSource: 'agent-functions', agentId: 'Lead', prompt: 'go', hooks: recorder.hooks });
    await until(() => recorder.of('afterCallAgent').length === 1);
    await fx.kernel.abort(handle.operationId);
    assert.equal((await handle.completed()).reason, 'interrupted');
    const child = await fx.kernel.waitForOperation(recorder.of('afterCallAgent')[0]!.subOperationId);
    assert.equal(child.agentId, 'Lead.slow');
    assert.equal(child.reason, 'interrupted');
    assert.equal(child.state.lastText, undefined);
  });

  it('a policy denies a tool of the child like any tool; the parent gets the child’s answer', async () => {
    const world = await PolicyWorld.create({
      'kb.yaml': `name: kb\npolicies:\n  - id: no-lookup\n    events: [beforeToolCall]\n    match: '^agent/lookup$'\n    effect: deny\n    reason: lookups are frozen\n`,
    });
    try {
      const kernel = await world.boot();
      const lookups: string[] = [];
      const sub = researcher([agentToolTurn('lookup'), { text: 'I could not look it up.' }], lookups);
      const Lead = () => {
        useModel(recordedModel([agentToolTurn('task', { agent: 'researcher', prompt: 'look it up' }), { text: 'done' }]));
        useSubagent(sub);
      };
      addAgentFunctions(kernel, [Lead as Agent]);
      const final = await runAgent(kernel, 'Lead', 'go');
      assert.equal(final.status, 'done');
      const [child] = await kernel.store.listOperations({ parentOperationId: final.id });
      assert.equal(lookups.length, 0, 'the denied tool never ran');
      const childTool = (await world.toolMessages(child!.id))[0]!;
      assert.equal(childTool.toolResult?.error, 'hook_denied');
      assert.match(childTool.content, /lookups are frozen/);
      const denials = (await world.decisions({ operationId: child!.id })).filter((d) => d.decision === 'deny');
      assert.deepEqual(denials.map((d) => [d.identifier, d.apiName]), [['agent', 'lookup']]);
      const parentTool = (await world.toolMessages(final.id))[0]!;
      assert.equal(parentTool.content, 'I could not look it up.');
    } finally {
      await world.cleanup();
    }
  });

  it('a policy on agent/task denies the delegation itself: no child starts', async () => {
    const world = await PolicyWorld.create({
      'deleg.yaml': `name: deleg\npolicies:\n  - id: no-delegation\n    events: [beforeToolCall]\n    match: '^agent/task$'\n    when: args.agent = "researcher"\n    effect: deny\n    reason: no delegation today\n`,
    });
    try {
      const kernel = await world.boot();
      const Lead = () => {
        useModel(recordedModel([agentToolTurn('task', { agent: 'researcher', prompt: 'x' }), { text: 'done' }]));
        useSubagent(researcher([{ text: 'never' }]));
      };
      addAgentFunctions(kernel, [Lead as Agent]);
      const recorder = recordHooks([...CALL_AGENT_HOOKS]);
      const final = await runAgent(kernel, 'Lead', 'go', { hooks: recorder.hooks });
      assert.equal((await world.toolMessages(final.id))[0]!.toolResult?.error, 'hook_denied');
      assert.deepEqual(await kernel.store.listOperations({ parentOperationId: final.id }), []);
      assert.deepEqual(recorder.sequence(final.id), []);
    } finally {
      await world.cleanup();
    }
  });
});
