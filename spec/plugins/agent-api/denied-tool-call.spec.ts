import assert from 'node:assert/strict';
import * as v from 'valibot';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { deny } from '../../helpers/webhook-receiver.js';
import { PolicyWorld } from '../../integration/policies/harness.js';
import { control, useWebhookWorld, type WebhookScene } from '../../integration/webhooks/harness.js';
import { addAgentFunctions, agentToolTurn, recordedModel, runAgent } from './agent-api-fixtures.js';

/** An agent function whose model asks for a refund; `refunds` counts the runs of the tool. */
function refunder(): { agent: Agent; refunds: () => number } {
  let runs = 0;
  const Refunder = () => {
    useModel(recordedModel([agentToolTurn('refund', { cents: 90_000 }), { text: 'I could not refund it.' }]));
    useTool({ name: 'refund', description: 'Refunds an order', input: v.object({ cents: v.number() }), run: () => ++runs });
    return 'You handle refunds.';
  };
  return { agent: Refunder as Agent, refunds: () => runs };
}

/** A tool call of an agent function denied by the gate document 000 describes: a policy, or a beforeToolCall control webhook (real SQLite, real loopback HTTP). */
describe('agent API: a denied tool call of an agent function', function () {
  this.timeout(20000);

  describe('by a policy', () => {
    let world: PolicyWorld | undefined;
    afterEach(async () => {
      await world?.cleanup();
      world = undefined;
    });

    it('a deny policy on agent/refund keeps run from running; the model sees hook_denied with the reason; the decision is logged', async () => {
      world = await PolicyWorld.create({
        'refunds.yaml': `name: refunds\npolicies:\n  - id: no-big-refunds\n    events: [beforeToolCall]\n    match: '^agent/refund$'\n    when: args.cents > 50000\n    effect: deny\n    reason: refunds over 500 need a manager\n`,
      });
      const kernel = await world.boot();
      const { agent, refunds } = refunder();
      addAgentFunctions(kernel, [agent]);
      const final = await runAgent(kernel, 'Refunder', 'refund my order');
      assert.equal(final.status, 'done');
      assert.equal(refunds(), 0, 'a denied call runs nothing');
      const [tool] = await world.toolMessages(final.id);
      assert.equal(tool!.toolResult?.error, 'hook_denied');
      assert.match(tool!.content, /refunds over 500 need a manager/);
      const decisions = await world.decisions({ operationId: final.id });
      assert.deepEqual(decisions.map((d) => [d.identifier, d.apiName, d.decision]), [['agent', 'refund', 'deny']]);
    });
  });

  describe('by a beforeToolCall control webhook', () => {
    let scene: WebhookScene;
    useWebhookWorld((s) => {
      scene = s;
    });

    it('a deny answer keeps run from running and the model sees the reason; the webhook saw agent/refund and its arguments', async () => {
      const kernel = await scene.world.boot();
      const { agent, refunds } = refunder();
      addAgentFunctions(kernel, [agent]);
      scene.receiver.route('/gate', deny('refunds are frozen'));
      const final = await runAgent(kernel, 'Refunder', 'refund my order', { hooks: [control('gate', 'beforeToolCall', scene.receiver.url('/gate'))] });
      assert.equal(final.status, 'done');
      assert.equal(refunds(), 0);
      const tool = (await kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
      assert.equal(tool.toolResult?.error, 'hook_denied');
      assert.equal(tool.content, 'refunds are frozen');
      const [request] = scene.receiver.to('/gate');
      assert.equal(request!.body.identifier, 'agent');
      assert.equal(request!.body.apiName, 'refund');
      assert.deepEqual(request!.body.args, { cents: 90_000 });
    });
  });
});
