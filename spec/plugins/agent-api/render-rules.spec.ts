import assert from 'node:assert/strict';
import * as v from 'valibot';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { AgentRenderError, ToolNameConflictError } from '../../../plugins/agent-api/agent-errors.js';
import { defineTool } from '../../../plugins/agent-api/define-tool.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { useAgentFinish, useAgentStart, useResponseFinish, useResponseStart } from '../../../plugins/agent-api/use-agent-events.js';
import { useInitialData } from '../../../plugins/agent-api/use-initial-data.js';
import { useInstruction } from '../../../plugins/agent-api/use-instruction.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { usePersistentState } from '../../../plugins/agent-api/use-persistent-state.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import type { RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { agentToolTurn, instanceThread, recordedModel, runAgent, startAgentKernel } from './agent-api-fixtures.js';

const echo = defineTool({ name: 'echo', description: 'Echoes', input: v.object({ text: v.string() }), run: ({ data }) => data.text });

/** Document 001 "Agent functions": the rules of one render, seen through a real kernel (memory store) and on bare renders. */
describe('agent API: the rules of rendering an agent function', () => {
  let fx: RuntimeFixture | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });

  /** Starts an operation of `agent` (named `Bad`) and returns the rejection of execAgent, after checking nothing was stored. */
  async function refusedAtStart(agent: Agent): Promise<Error> {
    fx = await startAgentKernel([{ agent, name: 'Bad' }]);
    const err = await runAgent(fx.kernel, 'Bad', 'go').then(
      () => assert.fail('expected execAgent to reject'),
      (e: unknown) => e as Error,
    );
    assert.deepEqual(await fx.kernel.store.listOperations(), [], 'a render error at start stores nothing');
    return err;
  }

  /** The AgentRenderError behind an AGENT_SOURCE_FAILED. */
  function renderErrorOf(err: Error): AgentRenderError {
    assert.equal((err as { code?: string }).code, 'AGENT_SOURCE_FAILED');
    const cause = (err as { cause?: unknown }).cause;
    assert.ok(cause instanceof AgentRenderError, `expected an AgentRenderError cause, got ${String(cause)}`);
    assert.equal(cause.type, 'invalid_request');
    return cause;
  }

  it('an async agent function is refused: "Agent functions must be synchronous."', async () => {
    const err = await refusedAtStart((async () => {
      useModel('recorded/x');
      return 'never';
    }) as unknown as Agent);
    assert.match(renderErrorOf(err).message, /agent "Bad": Agent functions must be synchronous\./);
  });

  it('a function returning a thenable (not a Promise) is refused the same way', async () => {
    const err = await refusedAtStart((() => {
      useModel('recorded/x');
      return { then: () => undefined };
    }) as unknown as Agent);
    assert.match(renderErrorOf(err).message, /must be synchronous/);
  });

  for (const [what, value, named] of [
    ['an object', { instructions: 'x' }, 'object'],
    ['a number', 42, 'number'],
    ['null', null, 'null'],
    ['an array', ['a'], 'an array'],
  ] as const) {
    it(`a function returning ${what} is refused, naming what it returned`, async () => {
      const err = await refusedAtStart((() => {
        useModel('recorded/x');
        return value;
      }) as unknown as Agent);
      assert.match(renderErrorOf(err).message, new RegExp(`returns its instruction string or nothing; it returned ${named}`));
    });
  }

  it('an agent function that calls another agent function directly is refused: "Re-entrant agent render."', async () => {
    const Inner = () => {
      useModel('recorded/x');
      return 'inner';
    };
    const err = await refusedAtStart((() => {
      useModel('recorded/x');
      return renderAgent(Inner as Agent).instructions;
    }) as Agent);
    assert.match(renderErrorOf(err).message, /Re-entrant agent render\./);
  });

  it('two tools with one name in one render throw ToolNameConflictError', async () => {
    const err = await refusedAtStart((() => {
      useModel('recorded/x');
      useTool(echo);
      useTool({ name: 'echo', description: 'another echo', run: () => 'b' });
    }) as Agent);
    const cause = (err as { cause?: unknown }).cause;
    assert.ok(cause instanceof ToolNameConflictError);
    assert.equal(cause.toolName, 'echo');
  });

  it('two state declarations with one name in one render throw', async () => {
    const err = await refusedAtStart((() => {
      useModel('recorded/x');
      usePersistentState('phase', 'a');
      usePersistentState('phase', 'b');
    }) as Agent);
    assert.match(renderErrorOf(err).message, /two usePersistentState declarations named "phase" in one render/);
  });

  it('useModel twice in one render throws, and a render without useModel throws', async () => {
    const twice = await refusedAtStart((() => {
      useModel('recorded/x');
      useModel('recorded/y');
    }) as Agent);
    assert.match(renderErrorOf(twice).message, /useModel\(\) was called twice in one render/);
    await fx!.cleanup();
    const never = await refusedAtStart((() => 'no model') as Agent);
    assert.match(renderErrorOf(never).message, /useModel\(\) was not called/);
  });

  it('a model specifier without a provider or model name is refused', async () => {
    const err = await refusedAtStart((() => {
      useModel('gpt-4o');
    }) as Agent);
    assert.match(renderErrorOf(err).message, /must be "provider\/model"/);
  });

  it('reading props.id on an operation with no instance behind it throws; with an instance it is the instance id', async () => {
    const seen: string[] = [];
    const Reader = (props: { id: string }) => {
      useModel(recordedModel([{ text: 'ok' }, { text: 'ok again' }]));
      seen.push(props.id);
      return `You serve instance ${props.id}.`;
    };
    fx = await startAgentKernel([Reader as Agent]);
    const bare = await runAgent(fx.kernel, 'Reader', 'go').catch((e: Error) => e);
    assert.ok(bare instanceof Error);
    assert.match(renderErrorOf(bare).message, /this render has no agent instance behind it, so props\.id is unavailable/);
    const threadId = await instanceThread(fx.kernel, 'Reader', 'customer-7');
    const done = await runAgent(fx.kernel, 'Reader', 'go', { threadId });
    assert.equal(done.status, 'done');
    assert.ok(seen.length >= 2 && seen.every((id) => id === 'customer-7'), `every render saw the instance id: ${seen.join(',')}`);
    assert.deepEqual(fx.model.requests[0]!.messages[0], { role: 'system', content: 'You serve instance customer-7.' });
  });

  it('a render error before a later step (state changed by a tool) ends the operation in error naming the rule', async () => {
    const Flaky = () => {
      const [broken, setBroken] = usePersistentState('broken', false);
      useModel(recordedModel([agentToolTurn('breakIt'), { text: 'never' }]));
      useTool({ name: 'breakIt', description: 'Breaks the next render', run: () => setBroken(true) });
      return broken ? (42 as unknown as string) : 'fine';
    };
    fx = await startAgentKernel([Flaky as Agent]);
    const threadId = await instanceThread(fx.kernel, 'Flaky', 'one');
    const final = await runAgent(fx.kernel, 'Flaky', 'go', { threadId });
    assert.equal(final.status, 'error');
    assert.equal(final.error?.code, 'AGENT_SOURCE_FAILED');
    assert.match(final.error!.message, /agent "Flaky": an agent function returns its instruction string or nothing; it returned number/);
  });

  it('the instruction document is the returned string, then each useInstruction in call order, joined with blank lines', async () => {
    const useTone = () => useInstruction('Be brief.');
    const Composer = () => {
      useInstruction('First addition.');
      useModel(recordedModel([{ text: 'hello' }]));
      useTone();
      useInstruction('Last addition.');
      return 'You are the composer.';
    };
    fx = await startAgentKernel([Composer as Agent]);
    assert.equal((await runAgent(fx.kernel, 'Composer', 'hi')).status, 'done');
    assert.deepEqual(fx.model.requests[0]!.messages[0], { role: 'system', content: 'You are the composer.\n\nFirst addition.\n\nBe brief.\n\nLast addition.' });
  });

  it('a tools-only agent (no return) has no system message; an empty returned string adds nothing', async () => {
    const Quiet = () => {
      useModel(recordedModel([{ text: 'a' }]));
    };
    const Empty = () => {
      useModel(recordedModel([{ text: 'b' }]));
      useInstruction('only this');
      return '';
    };
    fx = await startAgentKernel([Quiet as Agent, Empty as Agent]);
    await runAgent(fx.kernel, 'Quiet', 'hi');
    await runAgent(fx.kernel, 'Empty', 'hi');
    assert.notEqual(fx.model.requests[0]!.messages[0]!.role, 'system');
    assert.deepEqual(fx.model.requests[1]!.messages[0], { role: 'system', content: 'only this' });
  });

  describe('hooks outside a render', () => {
    const hooks: Array<[string, () => unknown]> = [
      ['useModel', () => useModel('recorded/x')],
      ['useTool', () => useTool(echo)],
      ['useInstruction', () => useInstruction('x')],
      ['usePersistentState', () => usePersistentState('n', 0)],
      ['useInitialData', () => useInitialData()],
      ['useAgentStart', () => useAgentStart(() => undefined)],
      ['useAgentFinish', () => useAgentFinish(() => undefined)],
      ['useResponseStart', () => useResponseStart(() => undefined)],
      ['useResponseFinish', () => useResponseFinish(() => undefined)],
    ];
    for (const [name, call] of hooks) {
      it(`${name}() called at module scope throws a message naming it`, () => {
        assert.throws(call, (err: unknown) => err instanceof AgentRenderError && err.message.startsWith(`${name}() was called outside an agent render`));
      });
    }

    it('a hook called from a tool while the operation runs is a tool error the model sees, naming the hook', async () => {
      const Sneaky = () => {
        useModel(recordedModel([agentToolTurn('sneak'), { text: 'done' }]));
        useTool({ name: 'sneak', description: 'Calls a hook', run: () => useInstruction('late') });
      };
      fx = await startAgentKernel([Sneaky as Agent]);
      const final = await runAgent(fx.kernel, 'Sneaky', 'go');
      assert.equal(final.status, 'done');
      const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
      assert.equal(tool.toolResult?.success, false);
      assert.match(tool.content, /useInstruction\(\) was called outside an agent render/);
    });
  });

  describe('bare renders (tests and tooling)', () => {
    it('renders without an instance: defaults for state, undefined initial data, a setter that throws', () => {
      let setter: ((n: number) => void) | undefined;
      const rendered = renderAgent((() => {
        useModel('openai/gpt-4o-mini');
        const [count, setCount] = usePersistentState('count', 3);
        setter = setCount;
        return `count ${count}, data ${String(useInitialData())}`;
      }) as Agent);
      assert.equal(rendered.instructions, 'count 3, data undefined');
      assert.deepEqual(rendered.model, { provider: 'openai', name: 'gpt-4o-mini' });
      assert.throws(() => setter!(4), /has no agent instance behind this render/);
    });

    it('splits a specifier at the first "/" only', () => {
      const rendered = renderAgent((() => useModel('openrouter/meta-llama/llama-3')) as Agent);
      assert.deepEqual(rendered.model, { provider: 'openrouter', name: 'meta-llama/llama-3' });
    });

    it('a subagent render needs no model and refuses instance-scoped hooks; useInitialData is undefined there', () => {
      const rendered = renderAgent((() => `data: ${String(useInitialData())}`) as Agent, { kind: 'subagent', initialData: { secret: 1 } });
      assert.equal(rendered.instructions, 'data: undefined');
      assert.throws(() => renderAgent((() => void usePersistentState('x')) as Agent, { kind: 'subagent' }), /usePersistentState\(\) is not available in a subagent render/);
      assert.throws(() => renderAgent((() => useAgentStart(() => undefined)) as Agent, { kind: 'subagent' }), /useAgentStart\(\) is not available in a subagent render/);
    });

    it('a render that threw leaves no render in progress (the next hook call outside one still throws)', () => {
      assert.throws(() => renderAgent((() => {
        throw new Error('boom');
      }) as Agent), /boom/);
      assert.throws(() => useInstruction('x'), /outside an agent render/);
    });
  });
});
