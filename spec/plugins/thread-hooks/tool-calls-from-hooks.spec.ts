import assert from 'node:assert/strict';
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import { defineHook, type HookToolResult, type ThreadState } from '../../../threads.js';
import { scripted } from '../../helpers/runtime-fixtures.js';
import { call, startWorld, type World } from './tool-hooks-fixtures.js';

describe('thread hooks: state.invokeTool goes through the gate', () => {
  let w: World;
  beforeEach(async () => {
    w = await startWorld();
  });
  afterEach(async () => {
    await w.cleanup();
  });

  it('refuses what the allow-list, the exact name, the schema and the policies refuse; runs an allowed tool without tool hooks and stores nothing for it', async () => {
    const answers: Array<[string, HookToolResult | string]> = [];
    let nested: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) nested = { nested };
    const attempts: Array<[string, string, Record<string, unknown>]> = [
      ['not allowed', 'files__fail', {}],
      ['case', 'FILES__WRITE', {}],
      ['unicode look-alike', 'files__wr\u0456te', {}],
      ['slash form, other case', 'Files/write', {}],
      ['too deep', 'files__write', nested],
      ['huge', 'files__write', { content: 'x'.repeat(1_100_000) }],
      ['denied result', 'files/secret', {}],
      ['allowed', 'files/write', { path: 'side.txt' }],
    ];
    let hookRuns = 0;
    w.policy.deny = true;
    const handle = await w.kernel.execAgent({
      agent: { id: 'invoker', model: scripted([call('write', { path: 'main.txt' }), { text: 'ok' }], { provider: 'recorded' }), tools: ['files/write', 'files/secret'] } as AgentDefinition,
      prompt: 'go',
      threadHooks: [
        defineHook({
          hook: 'before_store_tool_result',
          id: 'invoke_others',
          execute: async (state, _c, r) => {
            if (hookRuns++ > 0) throw new Error('a tool hook ran for an invoked tool');
            for (const [label, name, args] of attempts) {
              try {
                answers.push([label, await state.invokeTool(name, args)]);
              } catch (err) {
                answers.push([label, `rejected ${(err as { code?: string }).code}: ${(err as Error).message.slice(0, 120)}`]);
              }
            }
            return r;
          },
        }),
        defineHook({ hook: 'tool_call_done', id: 'count_done', execute: (_s, c) => void w.timeline.push(`done ${c.function.name}`) }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    const by = new Map(answers);
    assert.deepEqual(by.get('not allowed'), { status: 'error', error: 'Tool "files/fail" is not available to this agent.' });
    assert.deepEqual(by.get('case'), { status: 'error', error: 'Tool "FILES__WRITE" does not exist.' });
    assert.deepEqual(by.get('unicode look-alike'), { status: 'error', error: 'Tool "files__wr\u0456te" does not exist.' });
    assert.deepEqual(by.get('slash form, other case'), { status: 'error', error: 'Tool "Files/write" does not exist.' });
    assert.match(String((by.get('too deep') as { error?: string }).error), /deeper|depth|nest/i);
    assert.match(String(by.get('huge')), /^rejected THREAD_HOOK_INVALID: .*more than 1000000/);
    assert.deepEqual(by.get('denied result'), { status: 'error', error: 'Secrets stay inside.' });
    assert.deepEqual(by.get('allowed'), { status: 'success', result: 'Wrote side.txt' });
    // The model's call, the denied secret (its tool ran; result control denied it) and the allowed one ran; nothing refused at the gate did.
    assert.equal(w.tools.runs, 3);
    assert.deepEqual(w.timeline.filter((t) => t.startsWith('done ')), ['done files__write']);
    const stored = (await w.kernel.listMessages(handle.operationId)).map((m) => [m.role, m.content]);
    assert.deepEqual(stored, [['user', 'go'], ['assistant', ''], ['tool', 'Wrote main.txt'], ['assistant', 'ok']]);
  });
});

describe('thread hooks: state.queueTool runs after the current step, through the gate', () => {
  let w: World;
  beforeEach(async () => {
    w = await startWorld();
  });
  afterEach(async () => {
    await w.cleanup();
  });
  const writerOnly = (id: string, turns: unknown[]) => ({ id, model: scripted(turns, { provider: 'recorded' }), tools: ['files/write'] }) as AgentDefinition;

  it('a queued call is stored as a call of its own and gated like a model call (a denied one runs nothing); odd names throw; tool_call_started is only for model calls', async () => {
    const thrown: string[] = [];
    let saved: ThreadState | undefined;
    const handle = await w.kernel.execAgent({
      agent: writerOnly('queuer', [call('write', { path: 'main' }), { text: 'ok' }]),
      prompt: 'go',
      threadHooks: [
        defineHook({
          hook: 'tool_call_done',
          id: 'queue_follow_ups',
          execute: (state, c) => {
            saved = state;
            w.timeline.push(`done ${JSON.parse(c.function.arguments).path ?? c.function.name}`);
            if (!c.function.arguments.includes('main')) return;
            state.queueTool('files__write', { path: 'queued' });
            state.queueTool('files/fail', {});
            for (const name of ['FILES__WRITE', 'files__wr\u0456te', '']) {
              try {
                state.queueTool(name, {});
              } catch (err) {
                thrown.push(`${(err as { code?: string }).code}`);
              }
            }
          },
        }),
        defineHook({ hook: 'tool_call_started', id: 'started', execute: (_s, c) => void w.timeline.push(`started ${c.function.arguments}`) }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(thrown, ['THREAD_HOOK_INVALID', 'THREAD_HOOK_INVALID', 'THREAD_HOOK_INVALID']);
    const stored = await w.kernel.listMessages(handle.operationId);
    assert.deepEqual(stored.map((m) => [m.role, m.content, (m.toolCalls ?? []).map((c) => `${c.identifier}/${c.apiName}`).join(',')]), [
      ['user', 'go', ''],
      ['assistant', '', 'files/write'],
      ['tool', 'Wrote main', ''],
      ['assistant', '', 'files/write,files/fail'],
      ['tool', 'Wrote queued', ''],
      ['tool', 'Tool "files/fail" is not available to this agent.', ''],
      ['assistant', 'ok', ''],
    ]);
    assert.equal(w.tools.runs, 2);
    assert.deepEqual(w.timeline.filter((t) => !t.startsWith('event') && !t.startsWith('tool_finished')), [`started ${JSON.stringify({ path: 'main' })}`, 'done main', 'done queued']);
    // The model's next turn reads both calls and both results.
    assert.deepEqual(w.model.requests[1]!.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant', 'tool', 'tool']);
    // Once the run ended, a queued call starts a run of its own: queue-tool-idle.spec.ts.
    assert.ok(saved);
  });

  it('a queued call whose before_create_message hook throws is not stored and does not run; the run goes on', async () => {
    const handle = await w.kernel.execAgent({
      agent: writerOnly('prevented', [call('write', { path: 'main' }), { text: 'ok' }]),
      prompt: 'go',
      threadHooks: [
        defineHook({ hook: 'tool_call_done', id: 'queue', execute: (state, c) => { if (c.function.arguments.includes('main')) state.queueTool('files/write', { path: 'queued' }); } }),
        defineHook({ hook: 'before_create_message', id: 'no_queued_calls', execute: (_s, m) => { if (String(m.tool_calls ?? '').includes('queued')) throw new Error('no queued calls here'); } }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual((await w.kernel.listMessages(handle.operationId)).map((m) => [m.role, m.content]), [['user', 'go'], ['assistant', ''], ['tool', 'Wrote main'], ['assistant', 'ok']]);
    assert.equal(w.tools.runs, 1);
    assert.ok(w.logs.some((l) => l.msg.startsWith('[Hooks] ✗') && JSON.stringify(l).includes('no queued calls here')));
  });
});
