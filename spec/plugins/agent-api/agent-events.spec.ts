import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { AGENT_FUNCTION_SOURCE_ID, type Agent } from '../../../plugins/agent-api/agent.js';
import { MAX_FINISH_CONTINUATIONS } from '../../../plugins/agent-api/agent-event-seams.js';
import { useAgentFinish, useAgentStart, useResponseFinish, useResponseStart, type AgentFinishContext, type AgentStartContext } from '../../../plugins/agent-api/use-agent-events.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { hook, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { agentToolTurn, recordedModel, runAgent, startAgentKernel } from './agent-api-fixtures.js';

/** The render event hooks of document 001 (SEMANTICS.md), driven by the step loop through the agent source's lifecycle. */
describe('agent API: render event hooks', () => {
  let fx: RuntimeFixture | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });

  it('order: useResponseStart, then useAgentStart, then the model turns, then useAgentFinish, then useResponseFinish (once each)', async () => {
    const log: string[] = [];
    const Ordered = () => {
      useModel(recordedModel([agentToolTurn('work'), { text: 'done' }]));
      useTool({
        name: 'work',
        description: 'Works',
        run: () => {
          log.push('tool');
        },
      });
      useAgentFinish(() => void log.push('agentFinish'));
      useResponseFinish(() => void log.push('responseFinish'));
      useAgentStart(() => void log.push('agentStart'));
      useResponseStart(() => void log.push('responseStart'));
    };
    fx = await startAgentKernel([Ordered as Agent]);
    const steps = hook('beforeStep', (e) => void log.push(`step:${e.stepType}`));
    const handle = await fx.kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: 'Ordered', prompt: 'go', hooks: [steps] });
    assert.equal((await handle.completed()).status, 'done');
    assert.deepEqual(log, ['responseStart', 'agentStart', 'step:call_llm', 'step:call_tool', 'tool', 'step:call_llm', 'agentFinish', 'responseFinish']);
  });

  it('useAgentStart callbacks run concurrently; their appends reach the model before its first turn, in declaration order', async () => {
    const started: string[] = [];
    let fastStarted!: () => void;
    const fastHasStarted = new Promise<void>((resolve) => (fastStarted = resolve));
    const Intake = () => {
      useModel(recordedModel([{ text: 'ready' }]));
      useAgentStart(async ({ append }: AgentStartContext) => {
        started.push('slow started');
        // Run one after the other, the second would start only after this one ends (the fallback ends the wait then).
        await Promise.race([fastHasStarted, sleep(5000)]);
        started.push('slow ended');
        append({ kind: 'signal', type: 'intake', body: 'slow <loaded>', attributes: { source: 'crm' } });
      });
      useAgentStart(({ append }: AgentStartContext) => {
        started.push('fast started');
        fastStarted();
        append({ kind: 'signal', type: 'note', body: 'fast', tagName: 'memo' });
      });
    };
    fx = await startAgentKernel([Intake as Agent]);
    const final = await runAgent(fx.kernel, 'Intake', 'hello');
    assert.equal(final.status, 'done');
    assert.deepEqual(started, ['slow started', 'fast started', 'slow ended'], 'the second began before the first finished');
    const first = fx.model.requests[0]!.messages.filter((m) => m.role === 'user').map((m) => m.content);
    assert.deepEqual(first, ['hello', '<signal type="intake" source="crm">slow &lt;loaded&gt;</signal>', '<memo type="note">fast</memo>']);
  });

  it('a useAgentStart callback that throws fails the operation, naming its declaration index; the model never runs', async () => {
    const Broken = () => {
      useModel(recordedModel([{ text: 'never' }]));
      useAgentStart(() => undefined);
      useAgentStart(() => {
        throw new Error('the CRM is down');
      });
    };
    fx = await startAgentKernel([Broken as Agent]);
    const final = await runAgent(fx.kernel, 'Broken', 'go');
    assert.equal(final.status, 'error');
    assert.match(final.error!.message, /useAgentStart callback #1 threw: the CRM is down/);
    assert.equal(fx.model.requests.length, 0);
  });

  it('an append from useAgentFinish continues the same operation with the signal in front of the model; it finishes when nothing is appended', async () => {
    let checks = 0;
    const Enforcer = () => {
      useModel(recordedModel([{ text: 'first answer' }, agentToolTurn('post'), { text: 'posted' }]));
      useTool({ name: 'post', description: 'Posts the answer', run: () => 'ok' });
      useAgentFinish(({ response, append }: AgentFinishContext) => {
        checks++;
        if (response.toolCalls.some((c) => c.tool === 'post' && !c.isError)) return;
        append({ kind: 'signal', type: 'reminder', body: 'You did not call post.' });
      });
    };
    fx = await startAgentKernel([Enforcer as Agent]);
    const final = await runAgent(fx.kernel, 'Enforcer', 'answer me');
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'posted');
    assert.equal(checks, 2);
    assert.equal(final.state.finishContinuations, 1);
    const messages = await fx.kernel.listMessages(final.id);
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
    assert.equal(messages[2]!.content, '<signal type="reminder">You did not call post.</signal>');
    assert.equal(fx.model.requests[1]!.messages.at(-1)!.content, messages[2]!.content);
  });

  it(`useAgentFinish may continue a response ${MAX_FINISH_CONTINUATIONS} times; appending once more fails the operation`, async () => {
    let calls = 0;
    const Nagger = () => {
      useModel(recordedModel([{ text: 'again' }], { onEnd: 'repeat-last' }));
      useAgentFinish(({ append }: AgentFinishContext) => {
        calls++;
        append({ kind: 'signal', type: 'nag', body: `more (${calls})` });
      });
    };
    fx = await startAgentKernel([Nagger as Agent]);
    const final = await runAgent(fx.kernel, 'Nagger', 'go');
    assert.equal(final.status, 'error');
    assert.match(final.error!.message, /useAgentFinish continued the response 32 times, the most one response may/);
    assert.equal(final.state.finishContinuations, MAX_FINISH_CONTINUATIONS);
    assert.equal(fx.model.requests.length, MAX_FINISH_CONTINUATIONS + 1, 'the first turn and one per continuation');
    assert.equal(calls, MAX_FINISH_CONTINUATIONS + 1);
  });

  for (const [what, message, expected] of [
    ['a kind: "user" message', { kind: 'user', body: 'new input' }, /append\(\) only appends kind: "signal" messages/],
    ['a reserved signal type', { kind: 'signal', type: 'hookgate.recovery', body: 'x' }, /signal type "hookgate\.recovery" is reserved/],
    ['a tagName that is not an XML name', { kind: 'signal', type: 't', body: 'x', tagName: 'a><script' }, /tagName must be an XML name/],
    ['an unknown field', { kind: 'signal', type: 't', body: 'x', role: 'system' }, /append\(\) message is not valid/],
  ] as const) {
    it(`appending ${what} fails the operation with the reason`, async () => {
      const Appender = () => {
        useModel(recordedModel([{ text: 'done' }]));
        useAgentFinish(({ append }: AgentFinishContext) => append(message as never));
      };
      fx = await startAgentKernel([Appender as Agent]);
      const final = await runAgent(fx.kernel, 'Appender', 'go');
      assert.equal(final.status, 'error');
      assert.match(final.error!.message, expected);
      assert.equal((await fx.kernel.listMessages(final.id)).length, 2, 'nothing was appended');
    });
  }

  it('an append kept and called after its callback settled throws (valid only while the callback runs)', async () => {
    let kept: AgentFinishContext['append'] | undefined;
    const Keeper = () => {
      useModel(recordedModel([{ text: 'done' }]));
      useAgentFinish(({ append }: AgentFinishContext) => {
        kept = append;
      });
    };
    fx = await startAgentKernel([Keeper as Agent]);
    assert.equal((await runAgent(fx.kernel, 'Keeper', 'go')).status, 'done');
    assert.throws(() => kept!({ kind: 'signal', type: 'late', body: 'x' }), /append\(\) was called after its callback settled/);
  });

  it('metadata from useResponseStart and useResponseFinish is deep-merged (later wins) with __proto__, constructor and prototype dropped', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const Meta = () => {
      useModel(recordedModel([agentToolTurn('noop'), { text: 'done' }]));
      useTool({ name: 'noop', description: 'Nothing', run: () => null });
      useResponseStart(() => ({ trace: { id: 't-1', tags: ['a'] }, phase: 'start' }));
      useResponseStart(({ metadata }) => {
        seen.push({ ...metadata });
        return JSON.parse('{"__proto__":{"polluted":true},"constructor":{"x":1},"trace":{"span":"s-1","prototype":{"y":2}}}') as Record<string, unknown>;
      });
      useResponseFinish(({ metadata, response }) => ({ phase: 'finish', calls: response.toolCalls.length, sawSpan: (metadata.trace as { span?: string }).span, skipped: undefined }));
    };
    fx = await startAgentKernel([Meta as Agent]);
    const final = await runAgent(fx.kernel, 'Meta', 'go');
    assert.equal(final.status, 'done');
    assert.deepEqual(seen, [{ trace: { id: 't-1', tags: ['a'] }, phase: 'start' }]);
    assert.deepEqual(final.state.metadata, { trace: { id: 't-1', tags: ['a'], span: 's-1' }, phase: 'finish', calls: 1, sawSpan: 's-1' });
    assert.equal(Object.hasOwn(final.state.metadata!, '__proto__'), false);
    assert.equal(Object.hasOwn(final.state.metadata!, 'constructor'), false);
    assert.equal(Object.hasOwn(final.state.metadata!.trace as object, 'prototype'), false);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    // As stored, not only in memory.
    assert.deepEqual((await fx.kernel.store.getOperation(final.id))!.state.metadata, final.state.metadata);
  });

  for (const [what, callback, expected] of [
    ['returns a Promise', () => Promise.resolve({ a: 1 }), /useResponseStart callback #0 returned a Promise/],
    ['returns a string', () => 'meta', /useResponseStart callback #0 must return an object of metadata or nothing; got string/],
    ['returns an array', () => [1], /must return an object of metadata or nothing; got an array/],
    [
      'throws',
      () => {
        throw new Error('no clock');
      },
      /useResponseStart callback #0 threw: no clock/,
    ],
  ] as const) {
    it(`a useResponseStart callback that ${what} fails the operation before the model runs`, async () => {
      const Bad = () => {
        useModel(recordedModel([{ text: 'never' }]));
        useResponseStart(callback as never);
      };
      fx = await startAgentKernel([Bad as Agent]);
      const final = await runAgent(fx.kernel, 'Bad', 'go');
      assert.equal(final.status, 'error');
      assert.match(final.error!.message, expected);
      assert.equal(fx.model.requests.length, 0);
    });
  }

  it('a useResponseFinish callback that returns a Promise fails the operation instead of finishing it done', async () => {
    const Late = () => {
      useModel(recordedModel([{ text: 'done' }]));
      useResponseFinish((() => Promise.resolve({})) as never);
    };
    fx = await startAgentKernel([Late as Agent]);
    const final = await runAgent(fx.kernel, 'Late', 'go');
    assert.equal(final.status, 'error');
    assert.match(final.error!.message, /useResponseFinish callback #0 returned a Promise/);
  });

  it('useAgentFinish sees every tool call of the operation with its error flag, and the usage', async () => {
    let response: AgentFinishContext['response'] | undefined;
    const Inspector = () => {
      useModel(recordedModel([{ toolCalls: [{ identifier: 'agent', apiName: 'ok', args: {} }, { identifier: 'agent', apiName: 'bad', args: {} }] }, { text: 'done' }]));
      useTool({ name: 'ok', description: 'Works', run: () => 1 });
      useTool({ name: 'bad', description: 'Fails', run: () => Promise.reject(new Error('no')) });
      useAgentFinish((ctx: AgentFinishContext) => {
        response = ctx.response;
      });
    };
    fx = await startAgentKernel([Inspector as Agent]);
    await runAgent(fx.kernel, 'Inspector', 'go');
    assert.deepEqual(response!.toolCalls, [{ tool: 'ok', isError: false }, { tool: 'bad', isError: true }]);
    assert.ok(response!.usage.totalTokens > 0);
  });
});
