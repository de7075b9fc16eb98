import assert from 'node:assert/strict';
import type { OperationEvent, OperationHandle } from '../../index.js';
import { hook, scripted, startKernel, toolTurn, type RuntimeFixture } from '../helpers/runtime-fixtures.js';

/** Everything `run.events()` yields, until it ends. */
async function collect(handle: OperationHandle): Promise<OperationEvent[]> {
  const out: OperationEvent[] = [];
  for await (const event of handle.events()) out.push(event);
  return out;
}

/** The run handle of kernel.execAgent / approve: text() and a per-run events() iterator (issue 10, typed library). */
describe('kernel: run handle, text() and events()', () => {
  let fx: RuntimeFixture;
  /** Every event the kernel emitted, in order (the reference the handles are checked against). */
  let all: OperationEvent[];

  beforeEach(async () => {
    fx = await startKernel();
    all = [];
    fx.kernel.events.on((e) => all.push(e));
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const of = (operationId: string) => all.filter((e) => e.operationId === operationId);

  it('text() resolves the final assistant text; events() yields exactly this run\'s events in order, from operation_started to operation_finished', async () => {
    fx.kernel.agents.define({ id: 'a', tools: ['test/*'], model: scripted([{ text: 'calling', ...toolTurn('test', 'echo', { n: 1 }) }, { text: 'all done' }]) });
    const run = await fx.kernel.execAgent({ agentId: 'a', prompt: 'go', hooks: [hook('afterStep', () => undefined, { id: 'trace' })] });
    const events = await collect(run);
    assert.equal(await run.text(), 'all done');
    assert.deepEqual(events, of(run.operationId));
    assert.equal(events[0]!.type, 'operation_started');
    assert.equal(events.at(-1)!.type, 'operation_finished');
    const kinds = events.map((e) => e.type);
    for (const type of ['step_started', 'assistant_message', 'tool_started', 'tool_finished', 'step_finished', 'hook'] as const) assert.ok(kinds.includes(type), `${type} in ${kinds.join(', ')}`);
    // Typed: narrowing by `type` reaches each event's own fields.
    const finished = events.find((e) => e.type === 'tool_finished');
    assert.equal(finished?.type === 'tool_finished' ? finished.result.content : undefined, 'echo: {"n":1}');
    const delivered = events.filter((e) => e.type === 'hook').map((e) => (e.type === 'hook' ? `${e.hookType}:${e.hookId}` : ''));
    assert.deepEqual(delivered, ['afterStep:trace', 'afterStep:trace', 'afterStep:trace']);
  });

  it('events() called after the run ended replays every event from the start, and a second call gives the same', async () => {
    fx.kernel.agents.define({ id: 'a', model: scripted([{ text: 'hi' }]) });
    const run = await fx.kernel.execAgent({ agentId: 'a', prompt: 'go' });
    await run.completed();
    const first = await collect(run);
    assert.deepEqual(first, of(run.operationId));
    assert.deepEqual(first[0], { type: 'operation_started', operationId: run.operationId, agentId: 'a', parentOperationId: undefined });
    assert.deepEqual(await collect(run), first);
  });

  it('two runs at once: each handle gets only its own operation\'s events', async () => {
    fx.kernel.agents.define({ id: 'slow', model: scripted([{ text: 'slow answer', delayMs: 20 }]) });
    fx.kernel.agents.define({ id: 'fast', model: scripted([{ text: 'fast answer' }]) });
    const [slow, fast] = await Promise.all([fx.kernel.execAgent({ agentId: 'slow', prompt: 'a' }), fx.kernel.execAgent({ agentId: 'fast', prompt: 'b' })]);
    const [slowEvents, fastEvents] = await Promise.all([collect(slow), collect(fast)]);
    assert.deepEqual([await slow.text(), await fast.text()], ['slow answer', 'fast answer']);
    assert.ok(slowEvents.every((e) => e.operationId === slow.operationId));
    assert.ok(fastEvents.every((e) => e.operationId === fast.operationId));
    assert.deepEqual(slowEvents, of(slow.operationId));
    assert.deepEqual(fastEvents, of(fast.operationId));
  });

  it('a run that parks for approval: events() ends at the park; the approve handle\'s events() goes on to the end, and text() waits for it', async () => {
    fx.kernel.agents.define({ id: 'a', tools: ['test/*'], approval: { tools: ['test/echo'] }, model: scripted([toolTurn('test', 'echo'), { text: 'approved and done' }]) });
    const run = await fx.kernel.execAgent({ agentId: 'a', prompt: 'go' });
    const text = run.text();
    const parked = await collect(run);
    assert.equal((await fx.kernel.getOperation(run.operationId))?.status, 'waiting_approval');
    assert.ok(parked.some((e) => e.type === 'approval_requested'));
    assert.ok(!parked.some((e) => e.type === 'operation_finished'));
    assert.deepEqual(parked, of(run.operationId));

    const approved = await fx.kernel.approve(run.operationId);
    const rest = await collect(approved);
    assert.equal(rest.at(-1)!.type, 'operation_finished');
    assert.ok(!rest.some((e) => e.type === 'operation_started'));
    assert.deepEqual([...parked, ...rest], of(run.operationId));
    assert.equal(await text, 'approved and done');
    assert.equal(await approved.text(), 'approved and done');
  });

  it('a parent waiting for a sub-agent: events() does not end while it waits, and holds none of the child\'s events', async () => {
    fx.kernel.agents.define({ id: 'child', model: scripted([{ text: 'child answer', delayMs: 10 }]) });
    fx.kernel.agents.define({ id: 'parent', subagents: ['child'], model: scripted([toolTurn('agents', 'child', { instruction: 'help' }), { text: 'parent done' }]) });
    const run = await fx.kernel.execAgent({ agentId: 'parent', prompt: 'go' });
    const events = await collect(run);
    assert.equal(events.at(-1)!.type, 'operation_finished');
    assert.deepEqual(events, of(run.operationId));
    const [child] = await fx.kernel.listOperations({ parentOperationId: run.operationId });
    assert.ok(child && of(child.id).length > 0, 'the child emitted events of its own');
    assert.ok(events.every((e) => e.operationId === run.operationId));
    assert.equal(await run.text(), 'parent done');
  });

  it('text() of a run that ended in error rejects with OPERATION_NOT_DONE naming the status and the error', async () => {
    fx.kernel.agents.define({ id: 'a', model: scripted([{ error: 'rate limited' }]) });
    const run = await fx.kernel.execAgent({ agentId: 'a', prompt: 'go' });
    await assert.rejects(run.text(), (err: Error & { code?: string; details?: Record<string, unknown> }) => {
      assert.equal(err.code, 'OPERATION_NOT_DONE');
      assert.match(err.message, /ended error .*rate limited/);
      assert.equal(err.details?.status, 'error');
      return true;
    });
    const events = await collect(run);
    const last = events.at(-1)!;
    assert.equal(last.type === 'operation_finished' ? last.status : last.type, 'error');
  });

  it('kernel.stop() while the run is in flight: events() throws KERNEL_STOPPED after the events buffered so far', async () => {
    fx.kernel.agents.define({ id: 'slow', model: scripted([{ text: 'too late', delayMs: 600_000 }]) });
    const run = await fx.kernel.execAgent({ agentId: 'slow', prompt: 'go' });
    const seen: string[] = [];
    const iterating = (async () => {
      for await (const event of run.events()) {
        seen.push(event.type);
        if (event.type === 'step_started') void fx.kernel.stop();
      }
    })();
    await assert.rejects(iterating, { code: 'KERNEL_STOPPED' });
    assert.deepEqual(seen, ['operation_started', 'step_started']);
  });
});
