import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as v from 'valibot';
import { AgentRenderError } from '../../../plugins/agent-api/agent-errors.js';
import { init } from '../../../plugins/agent-api/init.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useAgentStart } from '../../../plugins/agent-api/use-agent-events.js';
import { useDataWriter, type DataWriter } from '../../../plugins/agent-api/use-data-writer.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { usePersistentState } from '../../../plugins/agent-api/use-persistent-state.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';

const CALL_CARD = { toolCalls: [{ identifier: 'agent', apiName: 'card', args: { id: 'c-1' } }] };

/** Streams a card through two writes of one tool call, and a progress part from useAgentStart. */
function Cards(): string {
  useModel({ provider: 'scripted', turns: [CALL_CARD, { text: 'card shown' }, CALL_CARD, { text: 'card shown' }] });
  const card = useDataWriter('card', { schema: v.object({ id: v.string(), status: v.picklist(['loading', 'loaded']) }) });
  const progress = useDataWriter('progress');
  useAgentStart(() => progress({ step: 'start' }));
  useTool({
    name: 'card',
    description: 'Shows a card',
    input: v.object({ id: v.string() }),
    run: ({ data }: { data: { id: string } }) => {
      card({ id: data.id, status: 'loading' });
      card({ id: data.id, status: 'loaded' });
      return 'shown';
    },
  });
  return 'Show cards.';
}

/** Data parts of document 001 (`useDataWriter`), through start() and init(). */
describe('agent-api: useDataWriter', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-data-')));
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('AgentReply.data holds each part as its writes in order (tools and event callbacks); the model never sees them', async () => {
    runtime = await start({ agents: [Cards], env: {} });
    const reply = await init(Cards, { id: 'c-1' }).dispatch('show');
    assert.equal(reply.text, 'card shown');
    assert.deepEqual(reply.data, { card: [{ id: 'c-1', status: 'loading' }, { id: 'c-1', status: 'loaded' }], progress: [{ step: 'start' }] });
    const messages = await runtime.kernel.store.listThreadMessages('agent:Cards:c-1');
    assert.ok(!JSON.stringify(messages).includes('loading'), 'a data part reached the conversation');
  });

  it('the next response starts with no parts: a reply carries only its own response\'s writes', async () => {
    let writes = 1;
    function Counter(): string {
      const tickTurn = { toolCalls: [{ identifier: 'agent', apiName: 'tick', args: {} }] };
      useModel({ provider: 'scripted', turns: [tickTurn, { text: 'ticked' }, tickTurn, { text: 'ticked' }] });
      const tick = useDataWriter('tick');
      useTool({ name: 'tick', description: 'Ticks', run: () => { tick(writes++); return 'ok'; } });
      return 'Tick.';
    }
    runtime = await start({ agents: [Counter], env: {} });
    const handle = init(Counter, { id: 'k' });
    assert.deepEqual((await handle.dispatch('one')).data, { tick: [1] });
    assert.deepEqual((await handle.dispatch('two')).data, { tick: [2] });
  });

  it('the parts of a completed reply survive a restart on the same SQLite file (stored with the submission)', async () => {
    const db = { sqlite: path.join(dir, 'data.db') };
    runtime = await start({ agents: [Cards], env: {}, db });
    const reply = await init(Cards, { id: 'c-2' }).dispatch('show');
    await runtime.stop();
    runtime = await start({ agents: [Cards], env: {}, db });
    const stored = await runtime.kernel.store.getSubmission(reply.submissionId);
    assert.deepEqual(stored?.result?.data, reply.data);
    assert.equal(stored?.result?.data?.card?.length, 2);
    // The instance's own state is untouched by the reserved data value.
    assert.deepEqual((await init(Cards, { id: 'c-2', uid: reply.uid! }).dispatch('again')).data.card?.length, 2);
  });

  it('a write that is not JSON, fails the schema, is undefined or happens during a render throws naming the part, and stores nothing', async () => {
    const errors: unknown[] = [];
    let leaked: DataWriter | undefined;
    function Hostile(): string {
      useModel({ provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'agent', apiName: 'bad', args: {} }] }, { text: 'done' }] });
      const typed = useDataWriter('typed', { schema: v.object({ n: v.number() }) });
      const loose = useDataWriter('loose');
      leaked = loose;
      try { loose('during render'); } catch (err) { errors.push(err); }
      useTool({
        name: 'bad',
        description: 'Writes bad values',
        run: () => {
          const cycle: Record<string, unknown> = {};
          cycle.self = cycle;
          for (const attempt of [() => typed({ n: 'one' } as never), () => loose(() => 1), () => loose(new Date()), () => loose(cycle), () => loose(Number.NaN), () => loose(undefined)]) {
            try { attempt(); } catch (err) { errors.push(err); }
          }
          return 'tried';
        },
      });
      return 'Be hostile.';
    }
    runtime = await start({ agents: [Hostile], env: {} });
    const reply = await init(Hostile, { id: 'h' }).dispatch('go');
    assert.deepEqual(reply.data, {});
    assert.ok(leaked !== undefined);
    const fromTool = errors.filter((e) => !(e instanceof AgentRenderError && /during a render/.test(e.message)));
    assert.equal(fromTool.length, 6, String(errors));
    for (const err of errors) assert.ok(err instanceof AgentRenderError, String(err));
    assert.ok(errors.some((e) => /during a render/.test((e as Error).message) && /"loose"/.test((e as Error).message)));
    assert.match((fromTool[0] as Error).message, /data part "typed" was written a value its schema refuses at n/);
    assert.match((fromTool[1] as Error).message, /data part "loose" is not a JSON value: it holds a function/);
    assert.match((fromTool[2] as Error).message, /Date instance/);
    assert.match((fromTool[3] as Error).message, /a cycle/);
    assert.match((fromTool[4] as Error).message, /NaN/);
    assert.match((fromTool[5] as Error).message, /undefined/);
  });

  it('names: a duplicate in one render, an empty, a huge or a non-string name throws; a bare render\'s writer throws', () => {
    const render = (fn: () => void) => () => renderAgent(() => { useModel({ provider: 'scripted', turns: [] }); fn(); return undefined; });
    assert.throws(render(() => { useDataWriter('a'); useDataWriter('a'); }), /two useDataWriter declarations named "a"/);
    assert.throws(render(() => useDataWriter('')), AgentRenderError);
    assert.throws(render(() => useDataWriter('x'.repeat(10_000))), /at most 256 characters.*10000 characters/);
    assert.throws(render(() => useDataWriter(42 as unknown as string)), /got number/);
    assert.throws(render(() => useDataWriter('s', { schema: {} as never })), /valibot schema/);
    let writer: DataWriter | undefined;
    renderAgent(() => { useModel({ provider: 'scripted', turns: [] }); writer = useDataWriter('bare'); return undefined; });
    assert.throws(() => writer!(1), /data part "bare" has no response behind this render/);
    assert.throws(() => useDataWriter('outside'), /useDataWriter\(\) was called outside an agent render/);
    assert.throws(render(() => usePersistentState('\u0000hookgate.dataParts')), /reserved for the runtime/);
  });
});
