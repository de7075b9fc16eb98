import assert from 'node:assert/strict';
import type { StepCommit } from '../../../kernel/store.js';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { useAgentFinish } from '../../../plugins/agent-api/use-agent-events.js';
import { useInitialData } from '../../../plugins/agent-api/use-initial-data.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { usePersistentState } from '../../../plugins/agent-api/use-persistent-state.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { useSqliteRestart, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { addAgentFunctions, agentToolTurn, instanceThread, recordedModel, runAgent, startAgentKernel } from './agent-api-fixtures.js';

/** A counter agent: each operation's model calls `bump` once, then answers with the count it read at its last render. */
function Counter(): string {
  const [count, setCount] = usePersistentState('count', 0);
  // Turns across the thread: op 1 plays turns 0-1, op 2 turns 2-3 (the scripted model counts per thread).
  useModel(recordedModel([agentToolTurn('bump'), { text: 'bumped' }, agentToolTurn('bump'), { text: 'bumped again' }]));
  useTool({ name: 'bump', description: 'Adds one', run: () => setCount((n) => n + 1) });
  return `The count is ${count}.`;
}

/** `usePersistentState` (document 001, SEMANTICS.md): the thread's values, written with the step that changed them. */
describe('agent API: persistent state', () => {
  let fx: RuntimeFixture | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });

  /** Records every commit's threadValues on the kernel's store. */
  function recordCommits(target: RuntimeFixture): StepCommit[] {
    const commits: StepCommit[] = [];
    const store = target.kernel.store;
    const original = store.commitStep.bind(store);
    store.commitStep = (operationId, commit) => {
      commits.push(structuredClone(commit));
      return original(operationId, commit);
    };
    return commits;
  }

  it('a value set by a tool is read by the next render and by the next operation on the same thread', async () => {
    fx = await startAgentKernel([Counter as Agent]);
    const threadId = await instanceThread(fx.kernel, 'Counter', 'c1');
    await runAgent(fx.kernel, 'Counter', 'bump', { threadId });
    assert.deepEqual((await fx.kernel.store.getThread(threadId))!.values, { count: 1 });
    const second = await runAgent(fx.kernel, 'Counter', 'bump again', { threadId });
    assert.equal(second.status, 'done');
    assert.deepEqual((await fx.kernel.store.getThread(threadId))!.values, { count: 2 });
    const systems = fx.model.requests.map((r) => r.messages[0]!.content);
    assert.deepEqual(systems, ['The count is 0.', 'The count is 1.', 'The count is 1.', 'The count is 2.']);
  });

  it('the write commits in the same commit as the tool step that made it (and in no other)', async () => {
    fx = await startAgentKernel([Counter as Agent]);
    const commits = recordCommits(fx);
    const threadId = await instanceThread(fx.kernel, 'Counter', 'c1');
    await runAgent(fx.kernel, 'Counter', 'bump', { threadId });
    const withValues = commits.filter((c) => c.threadValues !== undefined);
    assert.equal(withValues.length, 1);
    assert.equal(withValues[0]!.step?.kind, 'call_tool');
    assert.deepEqual(withValues[0]!.threadValues, { count: 1 });
    assert.equal(withValues[0]!.messages?.[0]?.role, 'tool', 'with the tool result it produced');
  });

  it('an updater sees the writes buffered this turn; a deep-equal write is a no-op (nothing committed)', async () => {
    const Buffered = () => {
      const [profile, setProfile] = usePersistentState<{ tags: string[]; n: number }>('profile', { tags: [], n: 0 });
      useModel(recordedModel([agentToolTurn('twice'), agentToolTurn('same'), { text: `done` }]));
      useTool({
        name: 'twice',
        description: 'Writes twice',
        run: () => {
          setProfile({ tags: ['a'], n: 1 });
          setProfile((p) => ({ tags: [...p.tags, 'b'], n: p.n + 1 }));
        },
      });
      useTool({ name: 'same', description: 'Writes the current value again', run: () => setProfile({ n: 2, tags: ['a', 'b'] }) });
      return JSON.stringify(profile);
    };
    fx = await startAgentKernel([Buffered as Agent]);
    const commits = recordCommits(fx);
    const threadId = await instanceThread(fx.kernel, 'Buffered', 'b1');
    await runAgent(fx.kernel, 'Buffered', 'go', { threadId });
    assert.deepEqual((await fx.kernel.store.getThread(threadId))!.values, { profile: { tags: ['a', 'b'], n: 2 } });
    assert.equal(commits.filter((c) => c.threadValues !== undefined).length, 1, 'the deep-equal rewrite committed nothing');
  });

  it('setting undefined, or a value JSON cannot carry, is a tool error naming the state; nothing is stored', async () => {
    const Careless = () => {
      const [, setValue] = usePersistentState<unknown>('value', null);
      useModel(recordedModel([agentToolTurn('unset'), agentToolTurn('fn'), agentToolTurn('cycle'), { text: 'done' }]));
      useTool({ name: 'unset', description: 'Sets undefined', run: () => setValue(undefined) });
      useTool({ name: 'fn', description: 'Sets a Map', run: () => setValue({ deep: [new Map()] }) });
      useTool({
        name: 'cycle',
        description: 'Sets a cycle',
        run: () => {
          const a: Record<string, unknown> = {};
          a.self = a;
          setValue(a);
        },
      });
    };
    fx = await startAgentKernel([Careless as Agent]);
    const threadId = await instanceThread(fx.kernel, 'Careless', 'x', { values: { value: 'kept' } });
    const final = await runAgent(fx.kernel, 'Careless', 'go', { threadId });
    const tools = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool');
    assert.deepEqual(tools.map((t) => t.toolResult?.success), [false, false, false]);
    assert.match(tools[0]!.content, /state "value" cannot be set to undefined/);
    assert.match(tools[1]!.content, /state "value\.deep\[0\]" is not a JSON value: it holds a Map instance/);
    assert.match(tools[2]!.content, /state "value\.self" is not a JSON value: it holds a cycle/);
    assert.deepEqual((await fx.kernel.store.getThread(threadId))!.values, { value: 'kept' });
  });

  it('setting state during a render throws (the operation is refused at start, nothing stored)', async () => {
    const Eager = () => {
      const [, setN] = usePersistentState('n', 0);
      useModel('recorded/x');
      setN(1);
    };
    fx = await startAgentKernel([Eager as Agent]);
    const threadId = await instanceThread(fx.kernel, 'Eager', 'e');
    await assert.rejects(runAgent(fx.kernel, 'Eager', 'go', { threadId }), (err: Error) => /state "n" was set during a render/.test(err.message));
    assert.deepEqual((await fx.kernel.store.getThread(threadId))!.values, {});
  });

  it('a value that keys __proto__ is stored as an ordinary key, never reaching a prototype', async () => {
    const Hostile = () => {
      const [, setV] = usePersistentState<unknown>('v');
      useModel(recordedModel([agentToolTurn('poison'), { text: 'done' }]));
      useTool({ name: 'poison', description: 'Writes a hostile object', run: () => setV(JSON.parse('{"__proto__":{"polluted":true},"ok":1}')) });
    };
    fx = await startAgentKernel([Hostile as Agent]);
    const threadId = await instanceThread(fx.kernel, 'Hostile', 'h');
    await runAgent(fx.kernel, 'Hostile', 'go', { threadId });
    const values = (await fx.kernel.store.getThread(threadId))!.values as { v: Record<string, unknown> };
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(values.v.ok, 1);
    assert.deepEqual(Object.getOwnPropertyDescriptor(values.v, '__proto__')?.value, { polluted: true });
  });

  it('a write made in useAgentFinish commits with the operation\'s terminal commit', async () => {
    const Closer = () => {
      const [, setClosed] = usePersistentState('closed', false);
      useModel(recordedModel([{ text: 'bye' }]));
      useAgentFinish(() => setClosed(true));
    };
    fx = await startAgentKernel([Closer as Agent]);
    const commits = recordCommits(fx);
    const threadId = await instanceThread(fx.kernel, 'Closer', 'c');
    const final = await runAgent(fx.kernel, 'Closer', 'go', { threadId });
    assert.equal(final.status, 'done');
    const written = commits.filter((c) => c.threadValues !== undefined);
    assert.deepEqual(written.map((c) => [c.status, c.threadValues]), [['done', { closed: true }]]);
  });

  it('useInitialData returns the thread\'s recorded initial data in every render', async () => {
    const seen: unknown[] = [];
    const Scoped = () => {
      useModel(recordedModel([{ text: 'ok' }]));
      seen.push(useInitialData());
    };
    fx = await startAgentKernel([Scoped as Agent]);
    const threadId = await instanceThread(fx.kernel, 'Scoped', 's', { initialData: { channel: 'C42', ts: 1.5 } });
    await runAgent(fx.kernel, 'Scoped', 'go', { threadId });
    assert.ok(seen.length >= 2);
    for (const data of seen) assert.deepEqual(data, { channel: 'C42', ts: 1.5 });
  });

  describe('across a kernel restart (SQLite file)', () => {
    const restart = useSqliteRestart();

    it('the next kernel on the same file reads the value the first one committed, and goes on counting', async () => {
      const a = await restart.first();
      addAgentFunctions(a.kernel, [Counter as Agent]);
      const threadId = await instanceThread(a.kernel, 'Counter', 'durable');
      assert.equal((await runAgent(a.kernel, 'Counter', 'bump', { threadId })).status, 'done');
      await a.kernel.stop();

      const b = await restart.next();
      addAgentFunctions(b.kernel, [Counter as Agent]);
      assert.deepEqual((await b.kernel.store.getThread(threadId))!.values, { count: 1 });
      const second = await runAgent(b.kernel, 'Counter', 'bump again', { threadId });
      assert.equal(second.status, 'done');
      assert.equal(b.model.requests[0]!.messages[0]!.content, 'The count is 1.');
      assert.deepEqual((await b.kernel.store.getThread(threadId))!.values, { count: 2 });
    });
  });
});
