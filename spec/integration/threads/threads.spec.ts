import assert from 'node:assert/strict';
import { isHookgateError } from '../../../kernel/errors.js';
import type { Message } from '../../../kernel/messages.js';
import { activeMessages } from '../../../kernel/runtime/running-operation.js';
import { recordHooks, scripted, startKernel, toolTurn, type RecordedRequest, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** What a model message says, for comparing conversations: role, text, and the tools it asked for. */
function said(m: Message): string {
  const calls = m.toolCalls?.length ? ` [${m.toolCalls.map((c) => `${c.identifier}/${c.apiName}`).join(', ')}]` : '';
  return `${m.role}: ${m.content}${calls}`;
}

/** The model turns (not summaries) of one operation, in order. */
function turnsOf(fx: RuntimeFixture, operationId: string): RecordedRequest[] {
  return fx.model.requests.filter((r) => r.operationId === operationId && r.purpose === 'turn');
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<Error> {
  const err = await promise.then(() => assert.fail(`expected ${code}`), (e: unknown) => e);
  assert.ok(isHookgateError(err, code as never), `expected ${code}, got ${String((err as Error)?.stack ?? err)}`);
  return err as Error;
}

/**
 * One script for the whole thread: the turn counter goes on across its
 * operations, so op 1 plays turns 0-1, op 2 turns 2-3, op 3 turn 4.
 */
const THREAD_SCRIPT = [
  toolTurn('test', 'echo', { n: 1 }, 'c1'),
  { text: 'answer one' },
  toolTurn('test', 'echo', { n: 2 }, 'c2'),
  { text: 'answer two' },
  { text: 'answer three' },
];

for (const store of ['memory', 'sqlite'] as const) {
  describe(`threads through the kernel (${store} store)`, () => {
    let fx: RuntimeFixture;

    beforeEach(async () => {
      fx = await startKernel({ store });
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    it('a thread continued over three execAgent calls shows its whole history to the model, in order', async () => {
      fx.kernel.agents.define({ id: 'talker', tools: ['test/*'], instructions: 'Be helpful.', model: scripted(THREAD_SCRIPT, { provider: 'recorded' }) });
      const rec = recordHooks(['beforeStep', 'onComplete']);
      const first = await (await fx.kernel.execAgent({ agentId: 'talker', prompt: 'prompt one', hooks: rec.hooks })).completed();
      assert.equal(first.status, 'done');
      assert.equal(first.threadId, `thread_${first.id}`);
      const threadId = first.threadId;
      const second = await (await fx.kernel.execAgent({ agentId: 'talker', prompt: 'prompt two', threadId, hooks: rec.hooks })).completed();
      const third = await (await fx.kernel.execAgent({ agentId: 'talker', prompt: 'prompt three', threadId, hooks: rec.hooks })).completed();
      assert.deepEqual([second.status, third.status, second.threadId, third.threadId], ['done', 'done', threadId, threadId]);
      assert.equal(third.state.lastText, 'answer three');

      const [turn] = turnsOf(fx, third.id);
      assert.deepEqual(turn!.messages.map(said), [
        'system: Be helpful.',
        'user: prompt one',
        'assistant:  [test/echo]',
        'tool: echo: {"n":1}',
        'assistant: answer one',
        'user: prompt two',
        'assistant:  [test/echo]',
        'tool: echo: {"n":2}',
        'assistant: answer two',
        'user: prompt three',
      ]);
      // Tool messages answer the calls of the assistant message before them, across operations too.
      const calls = turn!.messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.id);
      assert.deepEqual(turn!.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId), calls);

      // The store: one thread, positions 1..11 across the three operations; each operation's own view unchanged.
      const thread = await fx.kernel.store.listThreadMessages(threadId);
      assert.deepEqual(thread.map((m) => m.position), thread.map((_, i) => i + 1));
      assert.deepEqual([...new Set(thread.map((m) => m.operationId))], [first.id, second.id, third.id]);
      assert.deepEqual((await fx.kernel.listMessages(third.id)).map(said), ['user: prompt three', 'assistant: answer three']);
      assert.deepEqual((await fx.kernel.store.listThreadOperations(threadId)).map((o) => o.id), [first.id, second.id, third.id]);
      // Every hook event names the thread.
      assert.ok(rec.events.length >= 6);
      for (const e of rec.events) assert.equal((e.event as { threadId?: string }).threadId, threadId, e.type);
    });

    it('with compaction in between, the model sees the summaries in place of the compacted messages of earlier operations', async () => {
      const big = (tag: string) => toolTurn('test', 'echo', { text: tag.repeat(300) }, `c-${tag}`);
      fx.kernel.agents.define({
        id: 'long',
        tools: ['test/*'],
        compaction: { thresholdTokens: 150, keepRecent: 2 },
        model: scripted([big('a'), { text: 'answer one' }, big('b'), { text: 'answer two' }, { text: 'answer three' }], { provider: 'recorded' }),
      });
      const first = await (await fx.kernel.execAgent({ agentId: 'long', prompt: 'PROMPT ONE' })).completed();
      const threadId = first.threadId;
      await (await fx.kernel.execAgent({ agentId: 'long', prompt: 'PROMPT TWO', threadId })).completed();
      const third = await (await fx.kernel.execAgent({ agentId: 'long', prompt: 'prompt three', threadId })).completed();
      assert.equal(third.status, 'done');
      assert.ok(third.state.compactions >= 1, 'the thread was compacted');

      const all = await fx.kernel.store.listThreadMessages(threadId, { includeCompacted: true });
      assert.ok(all.some((m) => m.operationId === first.id && m.compactedInto !== undefined), "a later compaction replaced op 1's messages");
      const summaries = all.filter((m) => m.role === 'summary' && m.compactedInto === undefined);
      assert.ok(summaries.length >= 1);

      // The third operation's last turn saw exactly the thread as stored then: the active messages, summaries first,
      // that is everything but the answer it gave.
      const turns = turnsOf(fx, third.id);
      const last = turns[turns.length - 1]!;
      const stored = activeMessages(await fx.kernel.store.listThreadMessages(threadId));
      assert.equal(stored[stored.length - 1]!.content, 'answer three');
      assert.deepEqual(last.messages.map(said), stored.slice(0, -1).map(said));
      assert.equal(last.messages[last.messages.length - 1]!.content, 'prompt three');
      assert.equal(last.messages.some((m) => m.content === 'PROMPT ONE'), false);
      assert.ok(last.messages.some((m) => m.role === 'summary'));
    });

    it('refuses to continue a thread that is waiting (THREAD_BUSY), an unknown thread and another agent\'s thread, storing nothing', async () => {
      fx.kernel.agents.define({
        id: 'careful',
        tools: ['fs/*'],
        approval: { tools: ['fs/writeFile'] },
        model: scripted([toolTurn('fs', 'writeFile', { path: 'n.txt', content: 'x' }, 'w'), { text: 'written' }, { text: 'again' }]),
      });
      fx.kernel.agents.define({ id: 'other', model: scripted([{ text: 'hi' }]) });
      const parked = await (await fx.kernel.execAgent({ agentId: 'careful', prompt: 'write it' })).settled();
      assert.equal(parked.status, 'waiting_approval');
      const before = (await fx.kernel.store.listOperations()).length;

      const busy = await rejectsWith(fx.kernel.execAgent({ agentId: 'careful', prompt: 'more', threadId: parked.threadId }), 'THREAD_BUSY');
      assert.match(busy.message, new RegExp(parked.id));
      await rejectsWith(fx.kernel.execAgent({ agentId: 'careful', prompt: 'more', threadId: 'thread_nope' }), 'THREAD_NOT_FOUND');
      const mismatch = await rejectsWith(fx.kernel.execAgent({ agentId: 'other', prompt: 'more', threadId: parked.threadId }), 'THREAD_AGENT_MISMATCH');
      assert.match(mismatch.message, /careful/);
      assert.equal((await fx.kernel.store.listOperations()).length, before);

      // Once decided and done, the thread takes the next operation.
      const done = await (await fx.kernel.approve(parked.id)).completed();
      assert.equal(done.status, 'done');
      const next = await (await fx.kernel.execAgent({ agentId: 'careful', prompt: 'more', threadId: parked.threadId })).completed();
      assert.deepEqual([next.status, next.state.lastText, next.threadId], ['done', 'again', parked.threadId]);
    });
  });
}
