import assert from 'node:assert/strict';
import { AgentRunError } from '../../../plugins/agent-api/agent-errors.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useAgentStart, useResponseStart } from '../../../plugins/agent-api/use-agent-events.js';
import { useDelivery } from '../../../plugins/agent-api/use-delivery.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';

const WAIT = { toolCalls: [{ identifier: 'agent', apiName: 'wait', args: {} }] };

/** A gate the first response's tool waits on, and a promise that says the tool is running. */
function gates(): { waiting: Promise<void>; entered: () => void; gate: Promise<void>; release: () => void } {
  let entered!: () => void;
  let release!: () => void;
  const waiting = new Promise<void>((resolve) => (entered = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { waiting, entered, gate, release };
}

/** Document 001 / SEMANTICS: useAgentStart runs once per delivered message, joined deliveries included. */
describe('agent-api: useAgentStart for a delivery that joins the live response', function () {
  this.timeout(30_000);
  let runtime: AgentRuntimeHandle | undefined;
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
  });

  /** Sends until `count` submissions of the thread are stored (the later sends were admitted while the tool waits). */
  async function admitted(threadId: string, count: number): Promise<void> {
    for (;;) {
      if ((await runtime!.kernel.store.listSubmissions({ threadId })).length >= count) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  it('fires once for the first message and once per joined one, each seeing its delivery; appends go right after it, before the model reads it', async () => {
    const g = gates();
    const starts: string[] = [];
    let responseStarts = 0;
    function Greeter(): string {
      useModel({ provider: 'scripted', turns: [WAIT, { text: 'greeted all' }] });
      const delivery = useDelivery();
      useResponseStart(() => {
        responseStarts++;
        return {};
      });
      useAgentStart(({ append }) => {
        starts.push(delivery?.body ?? '?');
        append({ kind: 'signal', type: 'greeting', body: `hello ${delivery?.body ?? '?'}` });
      });
      useTool({ name: 'wait', description: 'Waits', run: async () => { g.entered(); await g.gate; return 'waited'; } });
      return 'Greet.';
    }
    runtime = await start({ agents: [Greeter], env: {} });
    const handle = init(Greeter, { id: 'g' });
    const first = handle.dispatch('first');
    await g.waiting;
    const second = init(Greeter, { id: 'g' }).dispatch('second');
    const third = init(Greeter, { id: 'g' }).dispatch('third');
    await admitted('agent:Greeter:g', 3);
    g.release();
    const replies = await Promise.all([first, second, third]);
    assert.deepEqual(replies.map((r) => r.text), ['greeted all', 'greeted all', 'greeted all']);
    assert.deepEqual(starts, ['first', 'second', 'third'], 'one start per delivered message, in arrival order');
    assert.equal(responseStarts, 1, 'the joined deliveries are part of the response already started');
    const messages = await runtime.kernel.store.listThreadMessages('agent:Greeter:g');
    const lines = messages.map((m) => `${m.role}:${m.content.replace(/\s+/g, ' ')}`);
    const at = (text: string) => lines.findIndex((l) => l.includes(text));
    assert.ok(at('user:first') < at('hello first') && at('hello first') < at('user:second'), lines.join('\n'));
    assert.equal(at('hello second'), at('user:second') + 1, lines.join('\n'));
    assert.equal(at('hello third'), at('user:third') + 1, lines.join('\n'));
    assert.ok(at('hello third') < at('assistant:greeted all'), lines.join('\n'));
    assert.equal(messages.filter((m) => m.content.includes('hello second')).length, 1, 'the second start ran once');
  });

  it('a joined delivery\'s start that throws fails the live response; the delivery then runs (and fails) as its own submission', async () => {
    const g = gates();
    function Picky(): string {
      useModel({ provider: 'scripted', turns: [WAIT, { text: 'never' }, { text: 'never again' }] });
      const delivery = useDelivery();
      useAgentStart(() => {
        if (delivery?.body === 'bad') throw new Error('no bad news');
      });
      useTool({ name: 'wait', description: 'Waits', run: async () => { g.entered(); await g.gate; return 'waited'; } });
      return 'Pick.';
    }
    runtime = await start({ agents: [Picky], env: {} });
    const first = init(Picky, { id: 'p' }).dispatch('fine');
    await g.waiting;
    const second = init(Picky, { id: 'p' }).dispatch('bad');
    await admitted('agent:Picky:p', 2);
    g.release();
    const [one, two] = await Promise.allSettled([first, second]);
    for (const outcome of [one, two]) {
      assert.equal(outcome.status, 'rejected');
      const err = (outcome as PromiseRejectedResult).reason as AgentRunError;
      assert.ok(err instanceof AgentRunError);
      assert.match(String((err.cause as Error | undefined)?.message), /useAgentStart callback #0 threw: no bad news/);
    }
    const subs = await runtime.kernel.store.listSubmissions({ threadId: 'agent:Picky:p' });
    assert.deepEqual(subs.map((s) => [s.status, s.joinedInto]), [['failed', undefined], ['failed', undefined]], 'the delivery was not stored as joined');
  });
});
