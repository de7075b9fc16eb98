import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { HookDispatcher } from '../../../kernel/hooks/hook-dispatcher.js';
import type { AgentHook, ToolCallHookContext } from '../../../kernel/hooks/hook-types.js';
import { createLogger } from '../../../kernel/logger.js';
import { hook, recordHooks, scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** Local mocks through beforeToolCall's `event.mock()` (document 000 "Local Mocking"; issue 3 item 5). */
describe('local mocks', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
    fx.kernel.agents.define({
      id: 'writer',
      tools: ['fs/*', 'test/*'],
      model: scripted([toolTurn('fs', 'writeFile', { path: 'out.txt', content: 'real' }, 'call-w'), { text: 'done' }], { provider: 'recorded' }),
    });
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  async function run(hooks: AgentHook[]) {
    const rec = recordHooks(['afterToolCall']);
    const handle = await fx.kernel.execAgent({ agentId: 'writer', prompt: 'go', hooks: [...hooks, ...rec.hooks] });
    const final = await handle.completed();
    return { rec, final, handle };
  }

  it('the first accepted mock wins: a second mock() returns false and the remaining handlers are skipped', async () => {
    const answers: boolean[] = [];
    const later: string[] = [];
    const { rec, final } = await run([
      hook('beforeToolCall', (e) => {
        answers.push(e.mock({ content: 'first' }));
        answers.push(e.mock({ content: 'second' }));
      }),
      hook('beforeToolCall', (e) => {
        later.push('ran');
        e.mock({ content: 'third' });
      }),
    ]);
    assert.equal(final.status, 'done');
    assert.deepEqual(answers, [true, false]);
    assert.deepEqual(later, []);
    assert.equal(rec.of('afterToolCall')[0]!.result.content, 'first');
  });

  it('a mocked tool does not run: the sandbox stays untouched', async () => {
    await run([hook('beforeToolCall', (e) => e.mock({ content: 'pretend I wrote it' }))]);
    assert.equal(existsSync(path.join(fx.sandbox, 'out.txt')), false);
  });

  it('without a mock the same tool runs and writes into the sandbox (control for the case above)', async () => {
    await run([hook('beforeToolCall', () => undefined)]);
    assert.equal(existsSync(path.join(fx.sandbox, 'out.txt')), true);
  });

  it('afterToolCall carries mocked: true and the mocked result, with success defaulting to true', async () => {
    const { rec } = await run([hook('beforeToolCall', (e) => e.mock({ content: '{"items":[]}' }))]);
    const [after] = rec.of('afterToolCall');
    assert.equal(after!.mocked, true);
    assert.equal(after!.result.content, '{"items":[]}');
    assert.equal(after!.result.success, true);
    assert.equal(after!.nativeToolCallId, 'call-w');
  });

  it('a mock can report failure: success: false is kept', async () => {
    const { rec } = await run([hook('beforeToolCall', (e) => e.mock({ content: 'disk full', success: false }))]);
    assert.equal(rec.of('afterToolCall')[0]!.result.success, false);
  });

  it('a handler that mocks and then throws still wins; later handlers are skipped and the error is logged', async () => {
    const later: string[] = [];
    const { rec, final } = await run([
      hook('beforeToolCall', (e) => {
        e.mock({ content: 'mocked then threw' });
        throw new Error('after mocking');
      }, { id: 'mock-then-throw' }),
      hook('beforeToolCall', (e) => {
        later.push('ran');
        e.mock({ content: 'too late' });
      }),
    ]);
    assert.equal(final.status, 'done');
    assert.deepEqual(later, []);
    assert.equal(rec.of('afterToolCall')[0]!.result.content, 'mocked then threw');
    assert.equal(rec.of('afterToolCall')[0]!.mocked, true);
    assert.equal(existsSync(path.join(fx.sandbox, 'out.txt')), false);
    assert.ok(fx.logs.some((l) => l.hookId === 'mock-then-throw' && l.error === 'after mocking'));
  });

  it('a throw before any mock does not stop a later handler from mocking', async () => {
    const { rec } = await run([
      hook('beforeToolCall', () => {
        throw new Error('first handler broke');
      }),
      hook('beforeToolCall', (e) => e.mock({ content: 'second handler mocked' })),
    ]);
    assert.equal(rec.of('afterToolCall')[0]!.result.content, 'second handler mocked');
    assert.equal(rec.of('afterToolCall')[0]!.mocked, true);
    assert.equal(existsSync(path.join(fx.sandbox, 'out.txt')), false);
  });

  it('a mock handler whose matcher does not match the tool never mocks it', async () => {
    const { rec } = await run([hook('beforeToolCall', (e) => e.mock({ content: 'wrong tool' }), { matcher: '^test/' })]);
    assert.equal(rec.of('afterToolCall')[0]!.mocked, false);
    assert.equal(existsSync(path.join(fx.sandbox, 'out.txt')), true);
  });

  it('the model sees the mocked result in its next turn', async () => {
    const { handle } = await run([hook('beforeToolCall', (e) => e.mock({ content: 'MOCKED-CONTENT' }))]);
    const turns = fx.model.requests.filter((r) => r.operationId === handle.operationId && r.purpose === 'turn');
    assert.equal(turns.length, 2);
    const toolMessage = turns[1]!.messages.find((m) => m.role === 'tool');
    const assistant = turns[1]!.messages.find((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0);
    // The answer is paired with the call it answers (under the runtime's id for it).
    assert.equal(toolMessage?.toolCallId, assistant?.toolCalls?.[0]?.id);
    assert.equal(assistant?.toolCalls?.[0]?.nativeId, 'call-w');
    assert.equal(toolMessage?.content, 'MOCKED-CONTENT');
  });

  describe('malformed mocks are refused at the call (issue 9, item 13)', () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['null', null, /mock\(\): expected a result object, got null/],
      ['an empty object', {}, /mock\(\): result\.content: expected a string, got undefined/],
      ['a string', 'str', /mock\(\): expected a result object, got a string/],
      ['a numeric content', { content: 123 }, /result\.content: expected a string, got 123/],
      ['an object content', { content: { a: 1 } }, /result\.content: expected a string, got an object/],
      ['a non-boolean success', { content: 'x', success: 'yes' }, /result\.success: expected a boolean/],
      ['a non-string error', { content: 'x', error: 5 }, /result\.error: expected a string/],
      ['a negative executionTime', { content: 'x', executionTime: -1 }, /result\.executionTime: expected a finite number >= 0/],
      ['an infinite executionTime', { content: 'x', executionTime: Infinity }, /result\.executionTime: expected a finite number >= 0/],
      ['a state without a string type', { content: 'x', state: { reason: 'r' } }, /result\.state\.type: expected a string/],
      ['a state that is not an object', { content: 'x', state: 'blocked' }, /result\.state: expected an object/],
      ['data that is not JSON (a function)', { content: 'x', data: { f: () => 1 } }, /result\.data\.f: expected JSON data, got a function/],
      ['data that is not JSON (a bigint)', { content: 'x', data: [1n] }, /result\.data\[0\]: expected JSON data, got a bigint/],
      ['a cycle', (() => { const d: Record<string, unknown> = {}; d.self = d; return { content: 'x', data: d }; })(), /result\.data\.self: a cycle/],
      ['an unknown field', { content: 'x', sucess: true }, /result\.sucess: unknown field/],
      ['an oversized result', { content: 'x'.repeat(1_048_577) }, /over 1048576 bytes/],
    ];
    for (const [what, value, message] of cases) {
      it(`mock(${what}) throws HOOK_MOCK_INVALID naming the field; the tool runs and nothing invalid is stored`, async () => {
        let thrown: unknown;
        let accepted: boolean | undefined;
        const { rec, final, handle } = await run([
          hook('beforeToolCall', (e) => {
            try {
              accepted = e.mock(value as never);
            } catch (err) {
              thrown = err;
            }
          }),
        ]);
        assert.equal(accepted, undefined, 'mock() did not return');
        assert.equal((thrown as { code?: string } | undefined)?.code, 'HOOK_MOCK_INVALID');
        assert.match((thrown as Error).message, message);
        assert.equal(final.status, 'done');
        // Not mocked: the real tool ran, and what is stored is its well-formed result.
        assert.equal(rec.of('afterToolCall')[0]!.mocked, false);
        assert.equal(existsSync(path.join(fx.sandbox, 'out.txt')), true);
        const tools = (await fx.kernel.listMessages(handle.operationId)).filter((m) => m.role === 'tool');
        assert.equal(tools.length, 1);
        assert.equal(typeof tools[0]!.content, 'string');
        assert.equal(tools[0]!.toolResult?.success, true);
      });
    }

    it('a handler that does not catch the refusal is logged as its error, and a later handler may still mock', async () => {
      const { rec, final } = await run([
        hook('beforeToolCall', (e) => void e.mock({ content: 7 } as never), { id: 'bad-mock' }),
        hook('beforeToolCall', (e) => void e.mock({ content: 'good' })),
      ]);
      assert.equal(final.status, 'done');
      assert.equal(rec.of('afterToolCall')[0]!.mocked, true);
      assert.equal(rec.of('afterToolCall')[0]!.result.content, 'good');
      assert.ok(fx.logs.some((l) => l.hookId === 'bad-mock' && /result\.content: expected a string/.test(String(l.error))));
    });

    it('a valid mock with every field is stored as a deep copy', async () => {
      const data = { items: [{ id: 1 }] };
      const supplied = { content: 'ok', success: false, error: 'tool_error', executionTime: 3, state: { type: 'custom', n: 1 }, data };
      const { rec, handle } = await run([hook('beforeToolCall', (e) => void e.mock(supplied))]);
      data.items[0]!.id = 2;
      supplied.state.type = 'changed';
      const result = rec.of('afterToolCall')[0]!.result;
      assert.deepEqual(result.data, { items: [{ id: 1 }] });
      assert.equal(result.state?.type, 'custom');
      const [tool] = (await fx.kernel.listMessages(handle.operationId)).filter((m) => m.role === 'tool');
      assert.equal(tool!.content, 'ok');
      assert.equal(tool!.toolResult?.error, 'tool_error');
    });
  });

  describe('HookDispatcher.dispatchBeforeToolCall', () => {
    const context: ToolCallHookContext = {
      toolCallId: 't1',
      assistantMessageId: 'm1',
      identifier: 'fs',
      apiName: 'readFile',
      args: {},
      callIndex: 0,
      stepIndex: 1,
      operationId: 'op-x',
      executor: 'server',
      timestamp: new Date().toISOString(),
    };

    it('returns { isMocked: true, result } for a mock and null when nothing mocks', async () => {
      const d = new HookDispatcher({ logger: createLogger({ level: 'silent' }) });
      d.register('op-x', [hook('beforeToolCall', (e) => e.mock({ content: 'x' }))]);
      assert.deepEqual(await d.dispatchBeforeToolCall('op-x', context), { isMocked: true, result: { content: 'x' } });
      // A second register() appends (issue 9, item 16), so the no-mock case is another operation.
      d.register('op-y', [hook('beforeToolCall', () => undefined)]);
      assert.equal(await d.dispatchBeforeToolCall('op-y', { ...context, operationId: 'op-y' }), null);
    });

    it('is always null in queue mode (handlers cannot run there)', async () => {
      const d = new HookDispatcher({ logger: createLogger({ level: 'silent' }), mode: 'queue' });
      let ran = false;
      d.register('op-x', [hook('beforeToolCall', (e) => {
        ran = true;
        e.mock({ content: 'x' });
      })]);
      assert.equal(await d.dispatchBeforeToolCall('op-x', context), null);
      assert.equal(ran, false);
    });

    it('the mocked result is a copy: changing the object passed to mock() afterwards changes nothing', async () => {
      const d = new HookDispatcher({ logger: createLogger({ level: 'silent' }) });
      const supplied = { content: 'original' };
      d.register('op-x', [hook('beforeToolCall', (e) => e.mock(supplied))]);
      const out = await d.dispatchBeforeToolCall('op-x', context);
      supplied.content = 'changed';
      assert.equal(out?.result.content, 'original');
    });
  });
});
