import assert from 'node:assert/strict';
import * as v from 'valibot';
import type { AgentSource, AgentSourceContext } from '../../../kernel/runtime/agent-source.js';
import { AGENT_FUNCTION_SOURCE_ID, type Agent } from '../../../plugins/agent-api/agent.js';
import { AgentRenderError } from '../../../plugins/agent-api/agent-errors.js';
import { agentFunctionSource } from '../../../plugins/agent-api/agent-function-source.js';
import { createAgentDirectory } from '../../../plugins/agent-api/agent-identity.js';
import { defineTool } from '../../../plugins/agent-api/define-tool.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { usePersistentState } from '../../../plugins/agent-api/use-persistent-state.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { hook, recordHooks, startKernel, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { agentToolTurn, instanceThread, recordedModel, runAgent, startAgentKernel } from './agent-api-fixtures.js';

const lookup = defineTool({
  name: 'lookup_order',
  description: 'Looks an order up by id',
  input: v.object({ orderId: v.pipe(v.string(), v.minLength(3), v.description('The order id')), verbose: v.optional(v.boolean()), tags: v.optional(v.array(v.picklist(['a', 'b']))) }),
  run: ({ data, toolCallId }) => ({ orderId: data.orderId, status: 'shipped', verbose: data.verbose ?? false, toolCallId: toolCallId.length > 0 }),
});

/** `useTool` / `defineTool` (document 001): tools the model calls, through the kernel's one gate. */
describe('agent API: tools of agent functions', () => {
  let fx: RuntimeFixture | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });

  it('the model is offered agent/<name> with the input schema as JSON Schema, calls it, and sees its JSON result', async () => {
    const Support = () => {
      useModel(recordedModel([agentToolTurn('lookup_order', { orderId: 'A-17', verbose: true }), { text: 'It shipped.' }]));
      useTool(lookup);
      return 'Support agent.';
    };
    fx = await startAgentKernel([Support as Agent]);
    const final = await runAgent(fx.kernel, 'Support', 'where is A-17?');
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'It shipped.');
    assert.deepEqual(fx.model.requests[0]!.toolNames, ['agent/lookup_order']);
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, true);
    assert.deepEqual(JSON.parse(tool.content), { orderId: 'A-17', status: 'shipped', verbose: true, toolCallId: true });
    // What the model read on its second turn is that same result.
    assert.equal(fx.model.requests[1]!.messages.at(-1)!.content, tool.content);
    assert.deepEqual(lookup.parameters, {
      type: 'object',
      properties: {
        orderId: { type: 'string', minLength: 3, description: 'The order id' },
        verbose: { type: 'boolean' },
        tags: { type: 'array', items: { enum: ['a', 'b'], type: 'string' } },
      },
      required: ['orderId'],
    });
  });

  it('arguments that break the input schema are refused before run: the model sees the error and run never ran', async () => {
    let runs = 0;
    const Strict = () => {
      useModel(recordedModel([agentToolTurn('count', { n: 'seven' }), { text: 'sorry' }]));
      useTool({ name: 'count', description: 'Counts', input: v.object({ n: v.number() }), run: () => ++runs });
    };
    fx = await startAgentKernel([Strict as Agent]);
    const final = await runAgent(fx.kernel, 'Strict', 'go');
    assert.equal(final.status, 'done');
    assert.equal(runs, 0);
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, false);
    assert.match(tool.content, /n/);
  });

  it('a tool that throws is a tool error the model sees; the operation goes on', async () => {
    const Thrower = () => {
      useModel(recordedModel([agentToolTurn('fail'), { text: 'recovered' }]));
      useTool({ name: 'fail', description: 'Fails', run: () => Promise.reject(new Error('the warehouse is offline')) });
    };
    fx = await startAgentKernel([Thrower as Agent]);
    const final = await runAgent(fx.kernel, 'Thrower', 'go');
    assert.equal(final.state.lastText, 'recovered');
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, false);
    assert.match(tool.content, /the warehouse is offline/);
  });

  it('a tool the latest render no longer mounts is refused at the gate (tool_not_found), its run never called', async () => {
    let runs = 0;
    const Shrinking = () => {
      const [armed, setArmed] = usePersistentState('armed', true);
      useModel(recordedModel([{ toolCalls: [{ identifier: 'agent', apiName: 'disarm', args: {} }, { identifier: 'agent', apiName: 'fire', args: {} }] }, { text: 'done' }]));
      useTool({ name: 'disarm', description: 'Removes fire', run: () => setArmed(false) });
      if (armed) useTool({ name: 'fire', description: 'Fires', run: () => ++runs });
    };
    fx = await startAgentKernel([Shrinking as Agent]);
    const threadId = await instanceThread(fx.kernel, 'Shrinking', 'x');
    const final = await runAgent(fx.kernel, 'Shrinking', 'go', { threadId });
    assert.equal(final.status, 'done');
    assert.equal(runs, 0);
    const [, fire] = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool');
    assert.equal(fire!.toolResult?.success, false);
    assert.match(String(fire!.toolResult?.error), /tool_not/);
  });

  it('every call passes the gate: a beforeToolCall hook sees agent/<name> with the call identity, and afterToolCall the result', async () => {
    const Hooked = () => {
      useModel(recordedModel([agentToolTurn('lookup_order', { orderId: 'B-1' }), { text: 'ok' }]));
      useTool(lookup);
    };
    fx = await startAgentKernel([Hooked as Agent]);
    const rec = recordHooks(['beforeToolCall', 'afterToolCall']);
    const handle = await fx.kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: 'Hooked', prompt: 'go', hooks: rec.hooks });
    await handle.completed();
    const [before] = rec.of('beforeToolCall');
    assert.equal(before!.identifier, 'agent');
    assert.equal(before!.apiName, 'lookup_order');
    assert.deepEqual(before!.args, { orderId: 'B-1' });
    const [after] = rec.of('afterToolCall');
    assert.equal(after!.result.success, true);
  });

  it('a beforeToolCall mock answers instead of run (the same gate as any tool)', async () => {
    let runs = 0;
    const Mocked = () => {
      useModel(recordedModel([agentToolTurn('charge', { cents: 500 }), { text: 'charged' }]));
      useTool({ name: 'charge', description: 'Charges a card', input: v.object({ cents: v.number() }), run: () => ++runs });
    };
    fx = await startAgentKernel([Mocked as Agent]);
    const mock = hook('beforeToolCall', (event) => {
      event.mock({ content: 'mocked charge', success: true });
    });
    const handle = await fx.kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: 'Mocked', prompt: 'go', hooks: [mock] });
    const final = await handle.completed();
    assert.equal(runs, 0);
    assert.equal((await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!.content, 'mocked charge');
  });

  describe('defineTool', () => {
    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a name models cannot call', { name: 'has space', description: 'd', run: () => 1 }, /name must be 1-64 letters/],
      ['an empty description', { name: 'ok', description: ' ', run: () => 1 }, /description must be a non-empty string/],
      ['no run', { name: 'ok', description: 'd' }, /run must be a function/],
      ['a non-object input', { name: 'ok', description: 'd', input: v.string(), run: () => 1 }, /input must be a valibot object schema/],
      ['an input that is not valibot', { name: 'ok', description: 'd', input: { type: 'object' }, run: () => 1 }, /input must be a valibot object schema/],
      ['an input the model cannot be told about', { name: 'ok', description: 'd', input: v.object({ when: v.date() }), run: () => 1 }, /input\.when: The "date" schema cannot be converted to JSON Schema/],
    ];
    for (const [what, options, message] of bad) {
      it(`refuses ${what}, naming the tool and the field`, () => {
        assert.throws(() => defineTool(options as never), (err: unknown) => err instanceof AgentRenderError && message.test(err.message));
      });
    }

    it('returns a frozen definition', () => {
      assert.ok(Object.isFrozen(lookup));
      assert.ok(Object.isFrozen(lookup.parameters));
    });
  });

  describe('views', () => {
    it('the source returns the same view object while nothing changed, and a new one when the instructions change', async () => {
      fx = await startKernel();
      let note = 'first';
      const Viewed = () => {
        useModel('recorded/x');
        useTool({ name: 'inline', description: 'An inline tool, new every render', run: () => note });
        return `note: ${note}`;
      };
      const source: AgentSource = agentFunctionSource(createAgentDirectory([Viewed as Agent]), fx.kernel.store);
      await fx.kernel.store.createThread({ id: 't-views', agentId: 'Viewed', instanceId: 'i' });
      const record = { id: 'op-views', threadId: 't-views', state: { stepIndex: 0 } };
      const context = (stepIndex: number): AgentSourceContext => ({ operationId: 'op-views', threadId: 't-views', stepIndex, operation: record as never, definition: undefined, messages: [] });
      const first = await source.resolve('Viewed', context(0));
      const second = await source.resolve('Viewed', context(1));
      assert.equal(second, first, 'an unchanged render is the same view (the runtime derives it once)');
      note = 'second';
      const third = await source.resolve('Viewed', context(2));
      assert.notEqual(third, first);
      assert.equal(third.instructions, 'note: second');
      assert.equal((third.tools as readonly unknown[])[0], (first.tools as readonly unknown[])[0], 'an unchanged tool keeps its entry');
    });
  });
});
