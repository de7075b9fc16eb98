import assert from 'node:assert/strict';
import * as v from 'valibot';
import type { DeliveredMessage } from '../../../plugins/agent-api/delivered-message.js';
import { init } from '../../../plugins/agent-api/init.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useAgentStart } from '../../../plugins/agent-api/use-agent-events.js';
import { useDelivery } from '../../../plugins/agent-api/use-delivery.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';

/** Document 001's `useDelivery`: the cursor over the message in front of the model, through start() and init(). */
describe('agent-api: useDelivery', function () {
  this.timeout(30_000);
  let runtime: AgentRuntimeHandle | undefined;
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
  });

  it('a render sees the submission\'s delivered message: a user message, or a signal with its attributes and tag', async () => {
    const seen: (DeliveredMessage | undefined)[] = [];
    function Reader(): string {
      useModel({ provider: 'scripted', turns: [{ text: 'one' }, { text: 'two' }] });
      seen.push(useDelivery());
      return 'Read.';
    }
    runtime = await start({ agents: [Reader], env: {} });
    await init(Reader, { id: 'r' }).dispatch('hello there');
    assert.deepEqual(seen.at(-1), { kind: 'user', body: 'hello there' });
    const signal = { kind: 'signal', type: 'deploy', body: 'v2 is <live>', attributes: { env: 'prod' }, tagName: 'event' } as const;
    await init(Reader, { id: 'r' }).dispatch({ message: signal });
    assert.deepEqual(seen.at(-1), signal);
    assert.ok(Object.isFrozen(seen.at(-1)), 'the delivery a render gets can be changed');
  });

  it('a signal a useAgentStart callback appends becomes the delivery of the renders after it', async () => {
    const seen: (DeliveredMessage | undefined)[] = [];
    function Intake(): string {
      useModel({ provider: 'scripted', turns: [{ text: 'done' }] });
      seen.push(useDelivery());
      useAgentStart(({ append }) => append({ kind: 'signal', type: 'intake', body: 'loaded' }));
      return 'Intake.';
    }
    runtime = await start({ agents: [Intake], env: {} });
    await init(Intake, { id: 'i' }).dispatch('start');
    assert.deepEqual(seen[0], { kind: 'user', body: 'start' });
    assert.deepEqual(seen.at(-1), { kind: 'signal', type: 'intake', body: 'loaded' });
  });

  it('a delivery that joins the live response moves the cursor to it (after the turn that read it)', async () => {
    const seen: (DeliveredMessage | undefined)[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waiting!: () => void;
    const started = new Promise<void>((resolve) => (waiting = resolve));
    function Joined(): string {
      useModel({
        provider: 'scripted',
        turns: [{ toolCalls: [{ identifier: 'agent', apiName: 'wait', args: {} }] }, { toolCalls: [{ identifier: 'agent', apiName: 'look', args: {} }] }, { text: 'both read' }],
      });
      const delivery = useDelivery();
      seen.push(delivery);
      useTool({ name: 'wait', description: 'Waits', run: async () => { waiting(); await gate; return 'waited'; } });
      useTool({ name: 'look', description: 'Looks', input: v.object({}), run: () => delivery?.body ?? 'none' });
      return 'Join.';
    }
    runtime = await start({ agents: [Joined], env: {} });
    const first = init(Joined, { id: 'j' }).dispatch('first');
    await started;
    const second = init(Joined, { id: 'j' }).dispatch('second');
    // The second send is admitted (and handed to the live response) before the tool returns.
    for (;;) {
      const subs = await runtime.kernel.store.listSubmissions({ threadId: 'agent:Joined:j' });
      if (subs.length === 2) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    release();
    assert.equal((await first).text, 'both read');
    assert.equal((await second).text, 'both read');
    assert.deepEqual(seen[0], { kind: 'user', body: 'first' });
    assert.deepEqual(seen.at(-1), { kind: 'user', body: 'second' });
    const bodies = seen.map((d) => d?.body);
    assert.deepEqual([...new Set(bodies)], ['first', 'second'], 'the cursor went back or skipped');
  });

  it('undefined on a bare render and in a subagent render; throws outside a render', () => {
    let bare: unknown = 'unset';
    renderAgent(() => { useModel({ provider: 'scripted', turns: [] }); bare = useDelivery(); return undefined; });
    assert.equal(bare, undefined);
    let sub: unknown = 'unset';
    renderAgent(() => { sub = useDelivery(); return undefined; }, { kind: 'subagent', delivery: { kind: 'user', body: 'parent' } });
    assert.equal(sub, undefined);
    assert.throws(() => useDelivery(), /useDelivery\(\) was called outside an agent render/);
  });
});
