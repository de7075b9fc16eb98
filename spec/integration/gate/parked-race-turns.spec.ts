import assert from 'node:assert/strict';
import type { Kernel } from '../../../kernel/kernel.js';
import { hook, useKernelsOnOneFile } from '../../helpers/runtime-fixtures.js';
import { PaymentTools, race, terminal } from './parked-race-fixtures.js';

/**
 * Decisions, resumes, completions and aborts of one operation take turns in
 * a process. Guards for what that must not break: a call made from inside
 * the one being applied (a decision's observer) is not queued behind itself,
 * and two decisions on different pending calls both apply, one after the other.
 */
describe('gate: the changes of one parked operation take turns (SQLite file)', function () {
  this.timeout(60000);
  const kernels = useKernelsOnOneFile('parked-turns');
  let tools: PaymentTools;
  let k: Kernel;

  beforeEach(async () => {
    tools = new PaymentTools();
    k = await kernels.start(tools);
    k.agents.define({
      id: 'double-payer',
      tools: ['pay/*'],
      approval: { tools: ['pay/send'] },
      model: {
        provider: 'scripted',
        turns: [
          { toolCalls: [{ id: 'pay-1', identifier: 'pay', apiName: 'send', args: { to: 'a' } }, { id: 'pay-2', identifier: 'pay', apiName: 'send', args: { to: 'b' } }] },
          { text: 'both paid' },
        ],
      },
    });
  });

  it("an afterHumanIntervention observer that aborts the operation and waits for it does not wait on its own decision; nothing is paid", async () => {
    let abortedFromObserver = false;
    const observer = hook('afterHumanIntervention', async (event) => {
      await k.abort(event.operationId);
      abortedFromObserver = true;
    });
    const handle = await k.execAgent({ agentId: 'double-payer', prompt: 'pay', hooks: [observer] });
    assert.equal((await handle.settled()).status, 'waiting_approval');
    // Within the observer's own time limit: a queued abort would wait for the decision, which waits for the observer.
    await k.approve(handle.operationId);
    assert.equal(abortedFromObserver, true);
    const done = await terminal(k, handle.operationId);
    assert.equal(done.status, 'interrupted');
    assert.equal(tools.count(handle.operationId), 0);
  });

  for (const gap of ['same tick', 'setImmediate'] as const) {
    it(`approving the two pending calls separately at once (${gap}): both decisions apply, each payment runs once`, async () => {
      for (let round = 0; round < 8; round++) {
        const handle = await k.execAgent({ agentId: 'double-payer', prompt: 'pay' });
        const parked = await handle.settled();
        const [first, second] = parked.state.approval!.pendingTools.map((t) => t.toolCallId);
        const results = await race(() => k.approve(handle.operationId, { toolCallId: first! }), () => k.approve(handle.operationId, { toolCallId: second! }), gap);
        assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled'], `round ${round}`);
        const done = await terminal(k, handle.operationId);
        assert.equal(done.status, 'done', `round ${round}`);
        assert.equal(tools.count(handle.operationId), 2, `round ${round}`);
      }
    });
  }
});
