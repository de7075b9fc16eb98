import assert from 'node:assert/strict';
import { AgentRenderError, InvalidRequestError } from '../../../plugins/agent-api/agent-errors.js';
import type { DispatchReceipt } from '../../../plugins/agent-api/dispatch.js';
import { init } from '../../../plugins/agent-api/init.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useDispatchMessage, type DispatchToSelf } from '../../../plugins/agent-api/use-dispatch-message.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';

const NOTIFY = { toolCalls: [{ identifier: 'agent', apiName: 'notify', args: {} }] };

/** Document 001's `useDispatchMessage`: a dispatcher to the agent's own instance, through start() and init(). */
describe('agent-api: useDispatchMessage', function () {
  this.timeout(30_000);
  let runtime: AgentRuntimeHandle | undefined;
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
  });

  it('a dispatch from a tool joins the live response: the model\'s next turn reads it, its submission settles with the host', async () => {
    const receipts: DispatchReceipt[] = [];
    let dispatcher: DispatchToSelf | undefined;
    function Notifier(): string {
      useModel({ provider: 'scripted', turns: [NOTIFY, { text: 'read the signal' }, { text: 'idle reply' }] });
      const dispatch = useDispatchMessage();
      dispatcher = dispatch;
      useTool({ name: 'notify', description: 'Notifies itself', run: async () => { receipts.push(await dispatch({ kind: 'signal', type: 'intake', body: 'issue loaded' })); return 'sent'; } });
      return 'Notify.';
    }
    runtime = await start({ agents: [Notifier], env: {} });
    const reply = await init(Notifier, { id: 'n' }).dispatch('go');
    assert.equal(reply.text, 'read the signal');
    assert.equal(receipts.length, 1);
    assert.equal(receipts[0]!.uid, reply.uid, 'the dispatch went to another incarnation');
    const joined = await runtime.kernel.store.getSubmission(receipts[0]!.submissionId);
    assert.deepEqual([joined?.status, joined?.joinedInto], ['completed', reply.submissionId]);
    const messages = await runtime.kernel.store.listThreadMessages('agent:Notifier:n');
    assert.ok(messages.some((m) => m.role === 'user' && m.content.includes('issue loaded') && m.content.includes('type="intake"')), 'the model never read the dispatched signal');

    // Idle: the same dispatcher (captured from a render) starts a new submission, answered on its own.
    const idle = await dispatcher!('are you there?');
    let settled = await runtime.kernel.store.getSubmission(idle.submissionId);
    while (settled !== undefined && !['completed', 'failed', 'aborted'].includes(settled.status)) {
      await new Promise((r) => setTimeout(r, 10));
      settled = await runtime.kernel.store.getSubmission(idle.submissionId);
    }
    assert.deepEqual([settled?.status, settled?.joinedInto, settled?.result?.text], ['completed', undefined, 'idle reply']);
  });

  it('each call is its own delivery (at-least-once): two calls, two submissions', async () => {
    const receipts: DispatchReceipt[] = [];
    function Twice(): string {
      useModel({ provider: 'scripted', turns: [NOTIFY, { text: 'done' }] });
      const dispatch = useDispatchMessage();
      useTool({ name: 'notify', description: 'Notifies twice', run: async () => { receipts.push(await dispatch('same'), await dispatch('same')); return 'sent'; } });
      return 'Twice.';
    }
    runtime = await start({ agents: [Twice], env: {} });
    await init(Twice, { id: 't' }).dispatch('go');
    assert.equal(new Set(receipts.map((r) => r.submissionId)).size, 2);
    assert.equal(new Set(receipts.map((r) => r.dispatchId)).size, 2);
  });

  it('a malformed message rejects with InvalidRequestError and stores nothing; during a render or on a bare render the dispatcher throws', async () => {
    const errors: unknown[] = [];
    function Hostile(): string {
      useModel({ provider: 'scripted', turns: [NOTIFY, { text: 'done' }] });
      const dispatch = useDispatchMessage();
      try { void dispatch('during render'); } catch (err) { errors.push(err); }
      useTool({
        name: 'notify',
        description: 'Sends bad messages',
        run: async () => {
          for (const bad of [{ kind: 'shout', body: 'x' }, { kind: 'signal', type: '', body: 'x' }, { kind: 'user', body: 42 }, { kind: 'signal', type: 't', body: 'x', tagName: '<script>' }]) {
            await dispatch(bad as never).then(() => errors.push('admitted'), (err: unknown) => errors.push(err));
          }
          return 'tried';
        },
      });
      return 'Hostile.';
    }
    runtime = await start({ agents: [Hostile], env: {} });
    await init(Hostile, { id: 'h' }).dispatch('go');
    const duringRender = errors.filter((e) => e instanceof AgentRenderError);
    assert.ok(duringRender.length >= 1 && duringRender.every((e) => /during a render/.test((e as Error).message)), String(errors));
    const fromTool = errors.filter((e) => !(e instanceof AgentRenderError));
    assert.equal(fromTool.length, 4);
    for (const err of fromTool) assert.ok(err instanceof InvalidRequestError, String(err));
    assert.equal((await runtime.kernel.store.listSubmissions({ threadId: 'agent:Hostile:h' })).length, 1, 'a refused dispatch stored a submission');

    let bare: DispatchToSelf | undefined;
    renderAgent(() => { useModel({ provider: 'scripted', turns: [] }); bare = useDispatchMessage(); return undefined; });
    assert.throws(() => bare!('hi'), /no agent instance behind this render/);
    assert.throws(() => renderAgent(() => { useDispatchMessage(); return undefined; }, { kind: 'subagent' }), /not available in a subagent render/);
    assert.throws(() => useDispatchMessage(), /outside an agent render/);
  });
});
