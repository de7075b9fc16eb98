import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as v from 'valibot';
import type { AgentProps } from '../../../plugins/agent-api/agent.js';
import { AgentRunError } from '../../../plugins/agent-api/agent-errors.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useResponseFinish, useResponseStart } from '../../../plugins/agent-api/use-agent-events.js';
import { useInitialData } from '../../../plugins/agent-api/use-initial-data.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { usePersistentState } from '../../../plugins/agent-api/use-persistent-state.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';

const TURNS = [
  { toolCalls: [{ identifier: 'agent', apiName: 'note', args: { text: 'first' } }] },
  { text: 'noted first' },
  { toolCalls: [{ identifier: 'agent', apiName: 'note', args: { text: 'second' } }] },
  { text: 'noted second' },
];

/** An agent function: notes go to persistent state through a tool; the instructions show the instance and its initial data. */
function Notebook({ id }: AgentProps): string {
  useModel({ provider: 'scripted', turns: TURNS });
  const [notes, setNotes] = usePersistentState<string[]>('notes', []);
  const owner = useInitialData<{ owner: string }>()?.owner ?? 'nobody';
  useTool({ name: 'note', description: 'Keeps a note', input: v.object({ text: v.string() }), run: ({ data }: { data: { text: string } }) => setNotes((all) => [...all, data.text]) });
  return `Notebook ${id} of ${owner}: ${notes.join(', ') || 'empty'}`;
}
Notebook.initialData = v.object({ owner: v.string() });

/** Submissions running real agent functions (the render engine's agent-functions source), from start() and init(). */
describe('agent-api: agent functions through start() and init()', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-fn-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a handle send renders the function, runs its tool through the gate and replies; state carries to the next send', async () => {
    runtime = await start({ agents: [Notebook], env: {} });
    const handle = init(Notebook, { id: 'nb-1' });
    assert.equal((await handle.dispatch({ message: 'note first', initialData: { owner: 'ada' } })).text, 'noted first');
    assert.equal((await handle.dispatch('note second')).text, 'noted second');
    const thread = await runtime.kernel.store.getThread('agent:Notebook:nb-1');
    assert.deepEqual(thread?.values, { notes: ['first', 'second'] });
    assert.deepEqual(thread?.initialData, { owner: 'ada' });
  });

  it('AgentReply.metadata carries what useResponseStart and useResponseFinish returned', async () => {
    function Tagged(): string {
      useModel({ provider: 'scripted', turns: [{ text: 'tagged' }] });
      useResponseStart(() => ({ channel: 'email', trace: { start: 1 } }));
      useResponseFinish(() => ({ trace: { finish: 2 } }));
      return 'Tag every reply.';
    }
    runtime = await start({ agents: [Tagged], env: {} });
    const reply = await init(Tagged, { id: 't-1' }).dispatch('hi');
    assert.equal(reply.text, 'tagged');
    assert.deepEqual(reply.metadata, { channel: 'email', trace: { start: 1, finish: 2 } });
  });

  it('persistent state and the instance survive a restart on the same SQLite file', async () => {
    const db = { sqlite: path.join(dir, 'nb.db') };
    runtime = await start({ agents: [Notebook], env: {}, db });
    const first = await init(Notebook, { id: 'nb-2' }).dispatch({ message: 'note first', initialData: { owner: 'ada' } });
    await runtime.stop();
    runtime = await start({ agents: [Notebook], env: {}, db });
    const second = await init(Notebook, { id: 'nb-2', uid: first.uid! }).dispatch('note second');
    assert.equal(second.text, 'noted second');
    assert.deepEqual((await runtime.kernel.store.getThread('agent:Notebook:nb-2'))?.values, { notes: ['first', 'second'] });
  });

  it('a conversation longer than an agent file allows (60 tool calls) completes; a runaway one fails naming max_steps, never completes empty', async () => {
    const call = { toolCalls: [{ identifier: 'agent', apiName: 'tick', args: {} }] };
    function Long(): string {
      useModel({ provider: 'scripted', turns: [...Array.from({ length: 60 }, () => call), { text: 'sixty ticks' }] });
      useTool({ name: 'tick', description: 'Ticks', run: () => 'tick' });
      return 'Tick sixty times.';
    }
    function Runaway(): string {
      useModel({ provider: 'scripted', turns: [call], onEnd: 'repeat-last' });
      useTool({ name: 'tick', description: 'Ticks', run: () => 'tick' });
      return 'Tick forever.';
    }
    runtime = await start({ agents: [Long, Runaway], env: {} });
    assert.equal((await init(Long).dispatch('go')).text, 'sixty ticks');
    const err = await init(Runaway).dispatch('go').then(() => assert.fail('a runaway loop completed'), (e: unknown) => e);
    assert.ok(err instanceof AgentRunError, String(err));
    assert.equal(err.outcome, 'failed');
    assert.match(String((err.cause as Error).message), /max_steps/);
    assert.equal((await runtime.kernel.store.getSubmission(err.submissionId))?.status, 'failed');
  });
});
