import assert from 'node:assert/strict';
import type { AgentHook } from '../../../kernel/hooks/hook-types.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { PolicyWorld } from '../policies/harness.js';

/**
 * Review of issue 9, item 3 (a hostile model): README's gate table says a call
 * outside the allow-list reaches no hook, policy, decision log, webhook or
 * mock. The model turn's afterStep event carries every tool call the model
 * made, refused ones included, with their arguments; a notification
 * receiver (or a local handler) learns the refused call before, and without,
 * the allow-list.
 */
describe('review: a call outside the allow-list leaks through afterStep', function () {
  this.timeout(20000);
  let world: PolicyWorld;
  let receiver: RecordingReceiver | undefined;

  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
    await world?.cleanup();
  });

  const forbidden = { id: 'w1', identifier: 'fs', apiName: 'writeFile', args: { path: 'x.txt', content: 'TOP-SECRET-ARGUMENT' } };

  async function boot(): Promise<Kernel> {
    world = await PolicyWorld.create({});
    return world.boot();
  }

  it('an afterStep notification webhook never sees the name or arguments of a call the allow-list refuses', async () => {
    receiver = await RecordingReceiver.start();
    const kernel = await boot();
    kernel.agents.define({ id: 'reader', tools: ['fs/readFile'], model: { provider: 'recorded', turns: [{ toolCalls: [forbidden] }, { text: 'done' }] } });
    const seenByHandler: string[] = [];
    const hooks: AgentHook[] = [
      { id: 'steps', type: 'afterStep', webhook: { url: receiver.url('/steps') } },
      { id: 'steps-local', type: 'afterStep', handler: (e) => void seenByHandler.push(JSON.stringify(e)) },
    ];
    const { operationId, status } = await world.run('reader', hooks);
    assert.equal(status, 'done');
    const [tool] = await world.toolMessages(operationId);
    assert.equal(tool!.toolResult?.error, 'tool_not_allowed');
    const delivered = JSON.stringify(receiver.requests.map((r) => r.body));
    assert.ok(receiver.requests.length > 0, 'afterStep notifications were sent');
    assert.ok(!delivered.includes('TOP-SECRET-ARGUMENT'), `the receiver got the refused call's arguments: ${delivered.slice(0, 600)}`);
    assert.ok(!delivered.includes('writeFile'), 'the receiver learned the refused tool name');
    assert.ok(!seenByHandler.join('\n').includes('TOP-SECRET-ARGUMENT'), 'a local afterStep handler got the refused call');
  });

  it('an operation that ends with a refused call still pending (maxSteps) hands it to no onComplete handler', async () => {
    const kernel = await boot();
    kernel.agents.define({
      id: 'short',
      tools: ['fs/readFile'],
      limits: { maxSteps: 1 },
      model: { provider: 'recorded', turns: [{ toolCalls: [forbidden] }, { text: 'done' }] },
    });
    const seen: string[] = [];
    const hooks: AgentHook[] = [{ id: 'end', type: 'onComplete', handler: (e) => void seen.push(JSON.stringify(e)) }];
    const { status } = await world.run('short', hooks);
    assert.equal(status, 'done');
    assert.equal(seen.length, 1);
    // (finalState.agent holds the scripted turns themselves; look only at the state the run left.)
    const state = JSON.stringify(JSON.parse(seen[0]!).finalState.state);
    assert.ok(!state.includes('TOP-SECRET-ARGUMENT'), `onComplete got the refused call in finalState.state: ${state.slice(0, 600)}`);
  });
});
