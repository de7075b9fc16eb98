import assert from 'node:assert/strict';
import type { OperationRecord } from '../../../kernel/store.js';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { defineSkill } from '../../../plugins/agent-api/define-skill.js';
import { defineSubagent, type SubagentDefinition } from '../../../plugins/agent-api/define-subagent.js';
import { MAX_DELEGATION_DEPTH } from '../../../plugins/agent-api/framework-tools.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useSkill } from '../../../plugins/agent-api/use-skill.js';
import { useSubagent } from '../../../plugins/agent-api/use-subagent.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { recordHooks, until, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { PolicyWorld } from '../../integration/policies/harness.js';
import { addAgentFunctions, agentToolTurn, recordedModel, runAgent, startAgentKernel } from './agent-api-fixtures.js';

const faq = defineSkill({ name: 'faq', description: 'Answers common questions.', instructions: 'Use the FAQ.' });

/** A hostile model and careless authors against skills and subagents. */
describe('agent API: skills and subagents under attack', function () {
  this.timeout(30000);
  let fx: RuntimeFixture | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });

  it('a subagent that delegates to itself stops at the delegation depth with a clear tool error, and every level still answers', async () => {
    const looper: SubagentDefinition = defineSubagent({
      name: 'looper',
      description: 'Delegates to itself.',
      model: recordedModel([agentToolTurn('task', { agent: 'looper', prompt: 'again' }), { text: 'bottom reached' }]),
      agent: () => {
        useSubagent(looper);
        return 'Loop.';
      },
    });
    const Root = () => {
      useModel(recordedModel([agentToolTurn('task', { agent: 'looper', prompt: 'start' }), { text: 'root done' }]));
      useSubagent(looper);
    };
    fx = await startAgentKernel([Root as Agent]);
    const recorder = recordHooks(['beforeCallAgent', 'onToolCallError']);
    const final = await runAgent(fx.kernel, 'Root', 'go', { hooks: recorder.hooks });
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'root done');
    const all = await fx.kernel.store.listOperations({});
    const chain: OperationRecord[] = [final];
    for (let next = all.find((o) => o.parentOperationId === final.id); next; next = all.find((o) => o.parentOperationId === chain.at(-1)!.id)) chain.push(next);
    assert.equal(chain.length, MAX_DELEGATION_DEPTH + 1, 'the root and one child per level, no more');
    assert.deepEqual(chain.map((o) => o.agentId), ['Root', 'Root.looper', 'Root.looper.looper', 'Root.looper.looper.looper', 'Root.looper.looper.looper.looper']);
    assert.ok(chain.every((o) => o.status === 'done'));
    const deepest = chain.at(-1)!;
    const refused = (await fx.kernel.listMessages(deepest.id)).find((m) => m.role === 'tool')!;
    assert.equal(refused.toolResult?.error, 'tool_error');
    assert.match(refused.content, /Maximum delegation depth \(4\) exceeded: agent "Root\.looper\.looper\.looper\.looper" is 4 delegations deep/);
    assert.equal(recorder.of('beforeCallAgent').length, MAX_DELEGATION_DEPTH, 'one delegation per level, the refused one never started');
    assert.equal(recorder.of('onToolCallError').length, 1);
  });

  it('hostile names to activate_skill and task are factual misses: path tricks, prototype keys, control characters, a huge name (quoted and cut)', async () => {
    const huge = 'x'.repeat(100_000);
    const names = ['../../etc/passwd', '__proto__', 'constructor', 'FAQ', 'faq\n', '\u0000', huge];
    const Support = () => {
      useModel(
        recordedModel([
          ...names.map((name) => agentToolTurn('activate_skill', { name })),
          ...names.map((name) => agentToolTurn('task', { agent: name, prompt: 'p' })),
          { text: 'done' },
        ]),
      );
      useSkill(faq);
      useSubagent(defineSubagent({ name: 'helper', description: 'Helps.', agent: () => 'Help.', model: recordedModel([{ text: 'never' }]) }));
    };
    fx = await startAgentKernel([Support as Agent]);
    const final = await runAgent(fx.kernel, 'Support', 'go');
    assert.equal(final.status, 'done');
    const results = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool');
    assert.equal(results.length, names.length * 2);
    results.slice(0, names.length).forEach((m, i) => {
      assert.equal(m.toolResult?.success, true);
      assert.equal(m.content, `Skill ${JSON.stringify(names[i]!.length > 80 ? `${names[i]!.slice(0, 80)}…` : names[i])} is not available. Available skills: faq.`);
    });
    results.slice(names.length).forEach((m) => assert.match(m.content, /^Subagent ".*" is not declared\. Available subagents: helper\.$/s));
    assert.ok(results.every((m) => m.content.length < 300), 'a huge name is never echoed whole');
    assert.ok(results.every((m) => !m.content.includes('\n') && !m.content.includes('\u0000')), 'control characters are escaped');
    assert.deepEqual(await fx.kernel.store.listOperations({ parentOperationId: final.id }), []);
  });

  it('wrong argument types and extra arguments are refused by the schema before anything runs (the model may retry)', async () => {
    const Support = () => {
      useModel(
        recordedModel([
          agentToolTurn('activate_skill', { name: 7 }),
          agentToolTurn('activate_skill', { name: 'faq', path: '../x' }),
          agentToolTurn('task', { agent: ['helper'], prompt: 'p' }),
          agentToolTurn('task', { agent: 'helper' }),
          { text: 'done' },
        ]),
      );
      useSkill(faq);
      useSubagent(defineSubagent({ name: 'helper', description: 'Helps.', agent: () => 'Help.', model: recordedModel([{ text: 'never' }]) }));
    };
    fx = await startAgentKernel([Support as Agent]);
    const final = await runAgent(fx.kernel, 'Support', 'go');
    const results = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool');
    assert.deepEqual(results.map((m) => m.toolResult?.error), ['invalid_arguments', 'invalid_arguments', 'invalid_arguments', 'invalid_arguments']);
    assert.deepEqual(await fx.kernel.store.listOperations({ parentOperationId: final.id }), []);
  });

  it('a model calling task on an agent that declares no subagent gets tool_not_found; the ids of children are not callable tools', async () => {
    const Plain = () => {
      useModel(recordedModel([agentToolTurn('task', { agent: 'x', prompt: 'p' }), { toolCalls: [{ identifier: 'agents', apiName: 'Plain.x', args: { instruction: 'p' } }] }, { text: 'done' }]));
      useTool({ name: 'noop', description: 'Nothing', run: () => null });
    };
    fx = await startAgentKernel([Plain as Agent]);
    const final = await runAgent(fx.kernel, 'Plain', 'go');
    const results = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool');
    assert.deepEqual(results.map((m) => m.toolResult?.error), ['tool_not_found', 'tool_not_allowed']);
    assert.deepEqual(await fx.kernel.store.listOperations({ parentOperationId: final.id }), []);
  });

  it('a child operation started by hand (no delegating operation) fails at start, naming why', async () => {
    const Lead = () => {
      useModel(recordedModel([{ text: 'x' }]));
      useSubagent(defineSubagent({ name: 'helper', description: 'Helps.', agent: () => 'Help.' }));
    };
    fx = await startAgentKernel([Lead as Agent]);
    await assert.rejects(fx.kernel.execAgent({ agentSource: 'agent-functions', agentId: 'Lead.helper', prompt: 'sneak in' }), /agent "Lead\.helper" is a subagent of "Lead": it runs only as a task delegated by it/);
  });

  it('after a restart a parked child resumes: its subagent is found again by rendering the delegating agent from the store', async () => {
    const world = await PolicyWorld.create({
      'ask.yaml': `name: ask\npolicies:\n  - id: ask-lookup\n    events: [beforeToolCall]\n    match: '^agent/lookup$'\n    effect: ask\n    reason: a human checks lookups\n`,
    });
    const lookups: string[] = [];
    const sub = defineSubagent({
      name: 'researcher',
      description: 'Finds facts.',
      model: recordedModel([agentToolTurn('lookup'), { text: 'It is 42.' }]),
      agent: () => {
        useTool({ name: 'lookup', description: 'Looks up', run: () => (lookups.push('ran'), 'the answer is 42') });
        return 'You research.';
      },
    });
    const Lead = () => {
      useModel(recordedModel([agentToolTurn('task', { agent: 'researcher', prompt: 'find it' }), { text: 'Lead: 42.' }]));
      useSubagent(sub);
    };
    try {
      const first = await world.boot();
      addAgentFunctions(first, [Lead as Agent]);
      const handle = await first.execAgent({ agentSource: 'agent-functions', agentId: 'Lead', prompt: 'go' });
      let child: OperationRecord | undefined;
      await until(async () => {
        child = (await first.store.listOperations({ parentOperationId: handle.operationId }))[0];
        return child?.status === 'waiting_approval';
      }, 15000);
      await first.stop();

      const second = await world.boot();
      addAgentFunctions(second, [Lead as Agent]);
      await second.approve(child!.id);
      const parent = await second.waitForOperation(handle.operationId);
      assert.equal(parent.status, 'done');
      assert.equal(parent.state.lastText, 'Lead: 42.');
      assert.deepEqual(lookups, ['ran']);
      const parentTool = (await world.toolMessages(handle.operationId))[0]!;
      assert.equal(parentTool.content, 'It is 42.');
    } finally {
      await world.cleanup();
    }
  });
});
