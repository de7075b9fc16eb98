import assert from 'node:assert/strict';
import type { AfterToolCallEvent, AgentHook } from '../../../kernel/hooks/hook-types.js';
import { compileToolMatcher } from '../../../kernel/hooks/matcher.js';
import { hook, recordHooks, scripted, startKernel, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** Tool matchers: re2 against `${identifier}/${apiName}` (document 000 "Webhook Hooks"; issue 3 item 3). */
describe('tool matchers', () => {
  describe('compileToolMatcher', () => {
    it('^fs/read matches fs/readFile but not fs/writeFile nor http/readFile', () => {
      const m = compileToolMatcher('^fs/read');
      assert.equal(m.test('fs', 'readFile'), true);
      assert.equal(m.test('fs', 'writeFile'), false);
      assert.equal(m.test('http', 'readFile'), false);
    });

    it('an unanchored pattern matches anywhere in identifier/apiName', () => {
      const m = compileToolMatcher('readFile');
      assert.equal(m.test('fs', 'readFile'), true);
      assert.equal(m.test('http', 'readFile'), true);
      assert.equal(m.test('fs', 'writeFile'), false);
    });

    it('an anchored alternation matches exactly its members', () => {
      const m = compileToolMatcher('^(fs/readFile|fs/listDir)$');
      assert.equal(m.test('fs', 'readFile'), true);
      assert.equal(m.test('fs', 'listDir'), true);
      assert.equal(m.test('fs', 'readFileSync'), false);
      assert.equal(m.test('xfs', 'readFile'), false);
      assert.equal(m.test('fs', 'writeFile'), false);
    });

    for (const [label, pattern] of [['omitted', undefined], ['empty', ''], ['*', '*']] as const) {
      it(`${label} matches every tool, and events without identifier`, () => {
        const m = compileToolMatcher(pattern);
        assert.equal(m.matchesAll, true);
        assert.equal(m.test('fs', 'readFile'), true);
        assert.equal(m.test('anything', 'else'), true);
        assert.equal(m.test(undefined, undefined), true);
      });
    }

    it('a non-trivial matcher never matches an event without identifier or apiName', () => {
      const m = compileToolMatcher('.*');
      assert.equal(m.test(undefined, 'readFile'), false);
      assert.equal(m.test('fs', undefined), false);
      assert.equal(m.test(undefined, undefined), false);
    });

    for (const pattern of ['(?=x)', '^fs/(?!write)', '(?<=fs/)read', '(a)\\1', '(?<n>a)\\k<n>']) {
      it(`rejects ${pattern} with a message saying re2 cannot run it`, () => {
        assert.throws(() => compileToolMatcher(pattern), (err: Error) => {
          assert.match(err.message, /re2 cannot run/);
          assert.ok(err.message.includes(JSON.stringify(pattern)));
          return true;
        });
      });
    }

    it('rejects a syntax error as an invalid regular expression, not as lookaround', () => {
      assert.throws(() => compileToolMatcher('(fs'), (err: Error) => {
        assert.match(err.message, /not a valid regular expression/);
        assert.doesNotMatch(err.message, /re2 cannot run/);
        return true;
      });
    });

    it('accepts named groups, which re2 supports', () => {
      const m = compileToolMatcher('^(?<id>fs)/read');
      assert.equal(m.test('fs', 'readFile'), true);
    });
  });

  describe('matchers in a run', () => {
    let fx: RuntimeFixture;

    beforeEach(async () => {
      fx = await startKernel();
      fx.kernel.agents.define({
        id: 'worker',
        tools: ['test/*', 'other/*'],
        model: scripted([
          { toolCalls: [
            { id: 'c-echo', identifier: 'test', apiName: 'echo', args: {} },
            { id: 'c-other', identifier: 'other', apiName: 'echo', args: {} },
            { id: 'c-boom', identifier: 'test', apiName: 'boom', args: {} },
          ] },
          { text: 'done' },
        ]),
      });
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    async function run(hooks: AgentHook[]) {
      return (await fx.kernel.execAgent({ agentId: 'worker', prompt: 'go', hooks })).completed();
    }

    it('a matcher selects which tool calls reach beforeToolCall, afterToolCall and onToolCallError handlers', async () => {
      const seen: string[] = [];
      await run([
        hook('beforeToolCall', (e) => seen.push(`before ${e.nativeToolCallId}`), { matcher: '^test/' }),
        hook('afterToolCall', (e) => seen.push(`after ${e.nativeToolCallId}`), { matcher: '^other/echo$' }),
        hook('onToolCallError', (e) => seen.push(`error ${e.nativeToolCallId}`), { matcher: '^test/(echo|boom)$' }),
        hook('onToolCallError', (e) => seen.push(`unmatched error ${e.nativeToolCallId}`), { matcher: '^other/' }),
      ]);
      assert.deepEqual(seen, ['before c-echo', 'after c-other', 'before c-boom', 'error c-boom']);
    });

    it('handlers with omitted, empty or * matchers see every tool call', async () => {
      const rec: Record<string, string[]> = { omitted: [], empty: [], star: [] };
      await run([
        hook('afterToolCall', (e) => rec.omitted!.push(e.nativeToolCallId!)),
        hook('afterToolCall', (e) => rec.empty!.push(e.nativeToolCallId!), { matcher: '' }),
        hook('afterToolCall', (e) => rec.star!.push(e.nativeToolCallId!), { matcher: '*' }),
      ]);
      for (const list of Object.values(rec)) assert.deepEqual(list, ['c-echo', 'c-other', 'c-boom']);
    });

    it('registration rejects a lookaround matcher with a message saying re2 cannot run it', async () => {
      await assert.rejects(run([hook('beforeToolCall', () => undefined, { matcher: '^fs/(?!write)' })]), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'HOOK_INVALID');
        assert.match(err.message, /re2 cannot run/);
        return true;
      });
      assert.deepEqual(await fx.kernel.listOperations(), []);
    });

    it('an event without identifier does not reach a hook with a non-trivial matcher', async () => {
      const seen: string[] = [];
      fx.kernel.hooks.register('op-m', [
        hook('afterToolCall', () => seen.push('matcher'), { matcher: '.*' }),
        hook('afterToolCall', () => seen.push('no matcher')),
      ]);
      const event = { operationId: 'op-m', toolCallId: 'x', result: { content: '', success: true }, mocked: false } as unknown as AfterToolCallEvent;
      await fx.kernel.hooks.dispatch('op-m', 'afterToolCall', event);
      assert.deepEqual(seen, ['no matcher']);
    });

    it('the recorder (no matchers) sees all three tool calls; the run is unaffected by matchers', async () => {
      const rec = recordHooks(['afterToolCall']);
      const final = await run([...rec.hooks, hook('afterToolCall', () => undefined, { matcher: '^nothing$' })]);
      assert.equal(final.status, 'done');
      assert.equal(rec.of('afterToolCall').length, 3);
      assert.equal(fx.tools.calls.length, 3);
    });
  });
});
