import assert from 'node:assert/strict';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { defineSkill } from '../../../plugins/agent-api/define-skill.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useSkill } from '../../../plugins/agent-api/use-skill.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { recordHooks, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { PolicyWorld } from '../../integration/policies/harness.js';
import { addAgentFunctions, agentToolTurn, recordedModel, runAgent, startAgentKernel } from './agent-api-fixtures.js';

const faq = defineSkill({ name: 'faq', description: 'Answers common questions.', instructions: 'Look the question up in the FAQ first.' });
const refunds = defineSkill({
  name: 'refunds',
  description: 'Process refund requests against the orders API.',
  instructions: '1. Find the order.\n2. Refund at most the paid amount.',
  files: { 'refs/policy.md': 'Refunds within 30 days.', 'data/rates.bin': new Uint8Array([0, 1, 2, 3]) },
});

/** Skills (document 001 "defineSkill()", "Dynamic resources"): the catalog, activate_skill, the live set, through the scripted model. */
describe('agent API: skills', function () {
  this.timeout(20000);
  let fx: RuntimeFixture | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });

  it('the system prompt carries the skill catalog after the instructions, and activate_skill returns the instructions and the files', async () => {
    const Support = () => {
      useModel(recordedModel([agentToolTurn('activate_skill', { name: 'refunds' }), { text: 'Refunded.' }]));
      useSkill(faq);
      useSkill(refunds);
      return 'You are support.';
    };
    fx = await startAgentKernel([Support as Agent]);
    const final = await runAgent(fx.kernel, 'Support', 'refund order 7');
    assert.equal(final.status, 'done');
    const [first] = fx.model.requests;
    assert.deepEqual(first!.toolNames, ['agent/activate_skill']);
    const system = first!.messages[0]!;
    assert.equal(system.role, 'system');
    assert.equal(
      system.content,
      [
        'You are support.',
        '',
        '## Available Skills',
        '',
        'The following skills provide specialized instructions for specific tasks. When a task matches a skill description, call the `activate_skill` tool with that skill name before proceeding so its full instructions are loaded.',
        '',
        '- **faq** — Answers common questions.',
        '- **refunds** — Process refund requests against the orders API.',
      ].join('\n'),
    );
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, true);
    assert.equal(
      tool.content,
      [
        'Run the skill named "refunds".',
        '',
        '<skill_instructions>',
        '1. Find the order.\n2. Refund at most the paid amount.',
        '</skill_instructions>',
        '',
        'Supporting skill resources:',
        '<skill_resources>',
        '<skill_resource path="data/rates.bin" bytes="4" binary="true" />',
        '<skill_resource path="refs/policy.md">',
        'Refunds within 30 days.',
        '</skill_resource>',
        '</skill_resources>',
      ].join('\n'),
    );
    // The model read exactly that at its next turn.
    assert.equal(fx.model.requests[1]!.messages.at(-1)!.content, tool.content);
  });

  it('an unknown name is a factual miss (not an error) listing the skills available now', async () => {
    const Support = () => {
      useModel(recordedModel([agentToolTurn('activate_skill', { name: 'billing' }), { text: 'ok' }]));
      useSkill(faq);
      useSkill(refunds);
    };
    fx = await startAgentKernel([Support as Agent]);
    const final = await runAgent(fx.kernel, 'Support', 'hi');
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, true);
    assert.equal(tool.content, 'Skill "billing" is not available. Available skills: faq, refunds.');
  });

  it('without a skill there is no catalog and no activate_skill tool', async () => {
    const Plain = () => {
      useModel(recordedModel([{ text: 'hello' }]));
      return 'Plain.';
    };
    fx = await startAgentKernel([Plain as Agent]);
    await runAgent(fx.kernel, 'Plain', 'hi');
    assert.deepEqual(fx.model.requests[0]!.toolNames, []);
    assert.equal(fx.model.requests[0]!.messages[0]!.content, 'Plain.');
  });

  it('a skill declared conditionally is activatable as soon as it is declared, while the catalog the model read stays as it was', async () => {
    let unlocked = false;
    const Support = () => {
      useModel(recordedModel([agentToolTurn('unlock'), agentToolTurn('activate_skill', { name: 'refunds' }), agentToolTurn('lock'), agentToolTurn('activate_skill', { name: 'refunds' }), { text: 'done' }]));
      useTool({ name: 'unlock', description: 'Unlocks refunds', run: () => void (unlocked = true) });
      useTool({ name: 'lock', description: 'Locks refunds', run: () => void (unlocked = false) });
      useSkill(faq);
      if (unlocked) useSkill(refunds);
      return 'You are support.';
    };
    fx = await startAgentKernel([Support as Agent]);
    const final = await runAgent(fx.kernel, 'Support', 'refund');
    assert.equal(final.status, 'done');
    const systems = fx.model.requests.map((r) => r.messages[0]!.content);
    assert.equal(new Set(systems).size, 1, 'the system prompt never changed');
    assert.ok(systems[0]!.includes('- **faq**') && !systems[0]!.includes('refunds'));
    const results = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool').map((m) => m.content);
    assert.match(results[1]!, /^Run the skill named "refunds"\./, 'the live set answers activation');
    assert.equal(results[3], 'Skill "refunds" is not available. Available skills: faq.', 'and a removal too');
  });

  it('activate_skill passes the same gate as every tool: a policy denies it, the hooks see agent/activate_skill', async () => {
    const world = await PolicyWorld.create({
      'skills.yaml': `name: skills\npolicies:\n  - id: no-refund-skill\n    events: [beforeToolCall]\n    match: '^agent/activate_skill$'\n    when: args.name = "refunds"\n    effect: deny\n    reason: refund skill disabled\n`,
    });
    try {
      const kernel = await world.boot();
      const Support = () => {
        useModel(recordedModel([agentToolTurn('activate_skill', { name: 'refunds' }), agentToolTurn('activate_skill', { name: 'faq' }), { text: 'ok' }]));
        useSkill(faq);
        useSkill(refunds);
      };
      addAgentFunctions(kernel, [Support as Agent]);
      const recorder = recordHooks(['beforeToolCall', 'afterToolCall']);
      const final = await runAgent(kernel, 'Support', 'hi', { hooks: recorder.hooks });
      const tools = await world.toolMessages(final.id);
      assert.equal(tools[0]!.toolResult?.error, 'hook_denied');
      assert.match(tools[0]!.content, /refund skill disabled/);
      assert.match(tools[1]!.content, /^Run the skill named "faq"/);
      const decisions = await world.decisions({ operationId: final.id });
      const before = decisions.filter((d) => d.event === 'beforeToolCall').map((d) => [d.apiName, d.decision]);
      assert.deepEqual(before.sort(), [
        ['activate_skill', 'allow'],
        ['activate_skill', 'deny'],
      ]);
      assert.deepEqual(recorder.of('beforeToolCall').map((e) => [e.identifier, e.apiName, e.args]), [['agent', 'activate_skill', { name: 'faq' }]]);
    } finally {
      await world.cleanup();
    }
  });
});
