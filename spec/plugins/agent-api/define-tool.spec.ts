import assert from 'node:assert/strict';
import type { ConversationStreamChunk } from '../../../plugins/agent-api/conversation-stream.js';
import * as v from 'valibot';
import type { OperationEvent, OperationEventOf } from '../../../kernel/runtime/operation-events.js';
import { MAX_TOOL_LOG_ATTRIBUTES, MAX_TOOL_LOG_LINES, MAX_TOOL_LOG_MESSAGE } from '../../../kernel/runtime/tool-log.js';
import { AGENT_FUNCTION_SOURCE_ID, type Agent } from '../../../plugins/agent-api/agent.js';
import { AgentApiError, AgentRenderError, ToolLegacyDefinitionError } from '../../../plugins/agent-api/agent-errors.js';
import { defineTool, type ToolInput, type ToolOutput } from '../../../plugins/agent-api/define-tool.js';
import { init } from '../../../plugins/agent-api/init.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { start, type AgentRuntimeHandle, currentRuntime } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import type { RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { agentToolTurn, recordedModel, startAgentKernel } from './agent-api-fixtures.js';
import * as root from '../../../index.js';

/** Runs agent `identity` once; resolves the record, its tool messages and every event of the run. */
async function runWithEvents(fx: RuntimeFixture, identity: string) {
  const handle = await fx.kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: identity, prompt: 'go' });
  const events: OperationEvent[] = [];
  for await (const event of handle.events()) events.push(event);
  const final = await handle.completed();
  const messages = await fx.kernel.listMessages(final.id);
  return { final, events, messages, tools: messages.filter((m) => m.role === 'tool') };
}

const logs = (events: OperationEvent[]) => events.filter((e): e is OperationEventOf<'tool_log'> => e.type === 'tool_log');

/** defineTool (document 001 "defineTool()"): the definition, output schemas, JSON results, input errors, context.log. */
describe('agent API: defineTool', () => {
  let fx: RuntimeFixture | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });

  describe('the definition', () => {
    for (const field of ['parameters', 'execute'] as const) {
      it(`the legacy "${field}" field throws ToolLegacyDefinitionError, a typed error with its wire type, naming the tool and the field`, () => {
        const options = { name: 'old_style', description: 'd', [field]: field === 'execute' ? () => 1 : { type: 'object' }, run: () => 1 };
        assert.throws(() => defineTool(options as never), (err: unknown) => {
          assert.ok(err instanceof ToolLegacyDefinitionError && err instanceof AgentApiError);
          assert.deepEqual([err.code, err.type, err.status, err.details], ['TOOL_LEGACY_DEFINITION', 'tool_legacy_definition', 500, { tool: 'old_style', field }]);
          assert.match(err.message, new RegExp(`tool "old_style": "${field}" is the legacy shape`));
          assert.deepEqual(JSON.parse(JSON.stringify(err)).type, 'tool_legacy_definition');
          return true;
        });
      });
    }

    it('the legacy shape alone (no run) is still the legacy error, and useTool refuses an inline one the same way', () => {
      assert.throws(() => defineTool({ name: 'x', description: 'd', parameters: {}, execute: () => 1 } as never), ToolLegacyDefinitionError);
      const Legacy = () => {
        useModel('recorded/x');
        useTool({ name: 'inline_old', description: 'd', execute: () => 1 } as never);
      };
      assert.throws(() => renderAgent(Legacy as Agent), (err: unknown) => err instanceof ToolLegacyDefinitionError && err.toolName === 'inline_old');
      assert.equal(root.ToolLegacyDefinitionError, ToolLegacyDefinitionError, 'exported from the package root');
    });

    const bad: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['an output that is not a valibot schema', { name: 'ok', description: 'd', output: { type: 'string' }, run: () => 1 }, 'output', /output must be a valibot schema/],
      ['a harness flag that is not a boolean', { name: 'ok', description: 'd', harness: 'yes', run: () => 1 }, 'harness', /harness must be a boolean/],
      ['a durable flag that is not a boolean', { name: 'ok', description: 'd', durable: 1, run: () => 1 }, 'durable', /durable must be a boolean/],
      ['a field tools do not have (a typo)', { name: 'ok', description: 'd', inputs: v.object({}), run: () => 1 }, 'inputs', /unknown field "inputs"/],
    ];
    for (const [what, options, field, message] of bad) {
      it(`refuses ${what}, naming the tool and the field`, () => {
        assert.throws(() => defineTool(options as never), (err: unknown) => err instanceof AgentRenderError && message.test(err.message) && /tool "ok"/.test(err.message) && err.details?.field === field);
      });
    }

    it('returns a frozen copy: the caller changing its options object afterwards changes nothing', () => {
      const options = { name: 'frozen', description: 'before', durable: true, output: v.string(), run: () => 'x' };
      const tool = defineTool(options);
      options.description = 'after';
      assert.ok(Object.isFrozen(tool));
      assert.equal(tool.description, 'before');
      assert.deepEqual([tool.durable, tool.harness, tool.output === options.output], [true, undefined, true]);
      assert.throws(() => { (tool as { name: string }).name = 'renamed'; }, TypeError);
      assert.equal(defineTool(tool as never), tool, 'a defined tool passes through as itself');
    });

    it('ToolInput / ToolOutput extract the inferred types', () => {
      const typed = defineTool({ name: 'typed', description: 'd', input: v.object({ id: v.string() }), output: v.object({ ok: v.boolean() }), run: ({ data }) => ({ ok: data.id.length > 0 }) });
      const input: ToolInput<typeof typed> = { id: 'a' };
      const output: ToolOutput<typeof typed> = { ok: true };
      assert.deepEqual([input, output], [{ id: 'a' }, { ok: true }]);
    });
  });

  describe('results', () => {
    it('an output schema parses the value before it is recorded: the model sees the parsed value', async () => {
      const Parsed = () => {
        useModel(recordedModel([agentToolTurn('quote'), { text: 'ok' }]));
        useTool({ name: 'quote', description: 'Quotes', output: v.object({ cents: v.number(), currency: v.optional(v.string(), 'EUR') }), run: () => ({ cents: 250 }) });
      };
      fx = await startAgentKernel([Parsed as Agent]);
      const { final, tools } = await runWithEvents(fx, 'Parsed');
      assert.equal(final.status, 'done');
      assert.deepEqual(JSON.parse(tools[0]!.content), { cents: 250, currency: 'EUR' });
      assert.equal(tools[0]!.toolResult?.success, true);
    });

    it('a value the output schema refuses is a tool error the model sees (ToolOutputValidationError naming the path); the submission goes on', async () => {
      const Mismatch = () => {
        useModel(recordedModel([agentToolTurn('quote'), { text: 'recovered' }]));
        useTool({ name: 'quote', description: 'Quotes', output: v.object({ cents: v.number() }), run: () => ({ cents: 'lots' }) as never });
      };
      fx = await startAgentKernel([Mismatch as Agent]);
      const { final, tools } = await runWithEvents(fx, 'Mismatch');
      assert.deepEqual([final.status, final.state.lastText], ['done', 'recovered']);
      assert.equal(tools[0]!.toolResult?.success, false);
      assert.equal(tools[0]!.toolResult?.error, 'tool_error');
      assert.match(tools[0]!.content, /Tool "quote" returned a value that does not match its output schema: cents: Invalid type: Expected number but received "lots"/);
      assert.equal(fx.model.requests[1]!.messages.at(-1)!.content, tools[0]!.content, 'the model read that error');
    });

    it('an output schema producing undefined is ToolOutputSerializationError, as a tool error', async () => {
      const Nothing = () => {
        useModel(recordedModel([agentToolTurn('maybe'), { text: 'ok' }]));
        useTool({ name: 'maybe', description: 'Maybe', output: v.optional(v.string()), run: () => undefined });
      };
      fx = await startAgentKernel([Nothing as Agent]);
      const { final, tools } = await runWithEvents(fx, 'Nothing');
      assert.equal(final.status, 'done');
      assert.match(tools[0]!.content, /Tool "maybe" output is not JSON-serializable: its output schema produced undefined/);
    });

    const notJson: Array<[string, () => unknown, RegExp]> = [
      ['a function', () => ({ callback: () => 1 }), /"output\.callback" is not a JSON value: it holds a function/],
      ['a class instance (a Date)', () => ({ at: new Date(0) }), /"output\.at" is not a JSON value: it holds a Date instance/],
      ['a non-finite number', () => [1, Number.NaN], /"output\[1\]" is not a JSON value: it holds the number NaN/],
      ['a BigInt', () => 10n, /it holds a bigint/],
      ['a cycle', () => { const a: Record<string, unknown> = {}; a.self = a; return a; }, /"output\.self" is not a JSON value: it holds a cycle/],
    ];
    for (const [what, value, message] of notJson) {
      it(`a value holding ${what} is ToolOutputSerializationError, a tool error the model sees`, async () => {
        const NotJson = () => {
          useModel(recordedModel([agentToolTurn('odd'), { text: 'went on' }]));
          useTool({ name: 'odd', description: 'Odd', run: value });
        };
        fx = await startAgentKernel([NotJson as Agent]);
        const { final, tools } = await runWithEvents(fx, 'NotJson');
        assert.deepEqual([final.status, final.state.lastText], ['done', 'went on']);
        assert.equal(tools[0]!.toolResult?.success, false);
        assert.match(tools[0]!.content, /Tool "odd" output is not JSON-serializable/);
        assert.match(tools[0]!.content, message);
      });
    }

    it('undefined reaches the model as null; a string as its JSON text', async () => {
      const Plain = () => {
        useModel(recordedModel([{ toolCalls: [{ identifier: 'agent', apiName: 'nothing', args: {} }, { identifier: 'agent', apiName: 'text', args: {} }] }, { text: 'ok' }]));
        useTool({ name: 'nothing', description: 'Nothing', run: () => undefined });
        useTool({ name: 'text', description: 'Text', run: () => 'plain' });
      };
      fx = await startAgentKernel([Plain as Agent]);
      const { tools } = await runWithEvents(fx, 'Plain');
      assert.deepEqual(tools.map((t) => t.content), ['null', '"plain"']);
    });
  });

  describe('arguments', () => {
    it('without an input schema the tool gets no data property, whatever the model sent', async () => {
      let seen: Record<string, unknown> | undefined;
      const NoInput = () => {
        useModel(recordedModel([agentToolTurn('bare', { ignored: true, n: 1 }), { text: 'ok' }]));
        useTool({ name: 'bare', description: 'Bare', run: (context) => { seen = { ...context }; return 1; } });
      };
      fx = await startAgentKernel([NoInput as Agent]);
      const { tools } = await runWithEvents(fx, 'NoInput');
      assert.equal(tools[0]!.toolResult?.success, true, 'the arguments are ignored, not refused');
      assert.ok(seen !== undefined);
      assert.equal('data' in seen, false);
      assert.equal('step' in seen, false, 'step only for durable tools');
      assert.deepEqual(Object.keys(seen).sort(), ['log', 'signal', 'toolCallId']);
    });

    it('arguments failing the input schema reach the model as a tool error naming the paths, and a corrected retry runs', async () => {
      const runs: unknown[] = [];
      const Retry = () => {
        useModel(recordedModel([
          agentToolTurn('book', { seats: 'two', guest: { email: 'a@b.example' } }),
          agentToolTurn('book', { seats: 2, guest: { email: 'not an address' } }),
          agentToolTurn('book', { seats: 2, guest: { email: 'a@b.example' } }),
          { text: 'booked' },
        ]));
        useTool({
          name: 'book',
          description: 'Books seats',
          input: v.object({ seats: v.number(), guest: v.object({ email: v.pipe(v.string(), v.email()) }) }),
          run: ({ data }) => { runs.push(data); return 'ok'; },
        });
      };
      fx = await startAgentKernel([Retry as Agent]);
      const { final, tools } = await runWithEvents(fx, 'Retry');
      assert.deepEqual([final.status, final.state.lastText], ['done', 'booked']);
      assert.deepEqual(runs, [{ seats: 2, guest: { email: 'a@b.example' } }], 'run only for the valid call');
      assert.deepEqual(tools.map((t) => t.toolResult?.success), [false, false, true]);
      // The JSON Schema check at the gate names the path of the first...
      assert.match(tools[0]!.content, /seats/);
      assert.match(tools[0]!.content, /call the tool again/i);
      // ...and what only the valibot schema checks (an e-mail format) is ToolInputValidationError with its dot path.
      assert.match(tools[1]!.content, /Arguments for tool "book" do not match its input schema: guest\.email: Invalid email: Received "not an address"\. Call the tool again with corrected arguments\./);
    });
  });

  describe('context.log', () => {
    it('lines reach event listeners as tool_log events of the call; never the conversation nor the model', async () => {
      const Logging = () => {
        useModel(recordedModel([agentToolTurn('slow', {}, 'native-1'), { text: 'done' }]));
        useTool({
          name: 'slow',
          description: 'Slow',
          run: ({ log }) => {
            log.info('fetched page 1', { page: 1 });
            log.warn('rate limited, waiting');
            log.error('page 3 failed');
            return 'finished';
          },
        });
      };
      fx = await startAgentKernel([Logging as Agent]);
      const { final, events, messages, tools } = await runWithEvents(fx, 'Logging');
      const lines = logs(events);
      assert.deepEqual(lines.map((l) => [l.level, l.message, l.attributes]), [['info', 'fetched page 1', { page: 1 }], ['warn', 'rate limited, waiting', undefined], ['error', 'page 3 failed', undefined]]);
      const started = events.find((e): e is OperationEventOf<'tool_started'> => e.type === 'tool_started')!;
      for (const line of lines) {
        assert.deepEqual([line.operationId, line.toolCallId, line.identifier, line.apiName], [final.id, started.toolCallId, 'agent', 'slow']);
        assert.deepEqual(Object.keys(line).sort().filter((k) => !['attributes'].includes(k)), ['apiName', 'identifier', 'level', 'message', 'operationId', 'stepIndex', 'toolCallId', 'type'], 'nothing but what the tool wrote and where');
      }
      assert.equal(tools[0]!.toolCallId, started.toolCallId);
      assert.equal(tools[0]!.content, '"finished"');
      const stored = JSON.stringify(messages);
      const asked = JSON.stringify(fx.model.requests);
      for (const text of ['fetched page 1', 'rate limited', 'page 3 failed']) {
        assert.equal(stored.includes(text), false, `stored: ${text}`);
        assert.equal(asked.includes(text), false, `shown to the model: ${text}`);
      }
    });

    it('lines are bounded: a long message is cut, large or non-JSON attributes are left out, a flood stops at the line limit', async () => {
      let late: (() => void) | undefined;
      const Flood = () => {
        useModel(recordedModel([agentToolTurn('flood'), { text: 'done' }]));
        useTool({
          name: 'flood',
          description: 'Floods',
          run: ({ log }) => {
            log.info('x'.repeat(MAX_TOOL_LOG_MESSAGE + 500));
            log.info('big', { blob: 'y'.repeat(MAX_TOOL_LOG_ATTRIBUTES) });
            log.info('odd', { n: 10n } as never);
            log.info(42 as never);
            for (let i = 0; i < MAX_TOOL_LOG_LINES + 50; i++) log.info(`line ${i}`);
            late = () => log.info('after the call returned');
            return 'ok';
          },
        });
      };
      fx = await startAgentKernel([Flood as Agent]);
      const { events } = await runWithEvents(fx, 'Flood');
      late!();
      const lines = logs(events);
      assert.equal(lines.length, MAX_TOOL_LOG_LINES + 1, 'the limit, then one line saying the rest are dropped');
      assert.deepEqual([lines[0]!.message.length, lines[0]!.truncated], [MAX_TOOL_LOG_MESSAGE, true]);
      assert.deepEqual([lines[1]!.message, lines[1]!.attributes, lines[1]!.truncated], ['big', undefined, true]);
      assert.deepEqual([lines[2]!.message, lines[2]!.attributes, lines[2]!.truncated], ['odd', undefined, true]);
      assert.equal(lines[3]!.message, '42');
      assert.deepEqual([lines.at(-1)!.level, lines.at(-1)!.truncated], ['warn', true]);
      assert.match(lines.at(-1)!.message, /more than 1000 log lines; the rest are dropped/);
      assert.equal(lines.some((l) => l.message === 'after the call returned'), false);
    });

    it("an agent runtime send's lines reach the runtime's operation-event listeners and, live-only, the conversation stream", async () => {
      let runtime: AgentRuntimeHandle | undefined;
      function Progress(): string {
        useModel({ provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'agent', apiName: 'work', args: {} }] }, { text: 'done' }] });
        useTool({ name: 'work', description: 'Works', run: ({ log }) => { log.info('halfway'); return 1; } });
        return 'Work.';
      }
      try {
        runtime = await start({ agents: [Progress], db: 'memory' });
        const heard: OperationEvent[] = [];
        const chunks: ConversationStreamChunk[] = [];
        const off = runtime.kernel.events.on((e) => heard.push(e));
        const reply = await init(Progress, { id: 'p1' }).dispatch('go', { onEvent: (c) => chunks.push(c) });
        off();
        assert.equal(reply.text, 'done');
        assert.deepEqual(logs(heard).map((l) => [l.level, l.message, l.apiName]), [['info', 'halfway', 'work']]);
        // The stream carries the line live (a tool-log chunk of the call), and stores nothing of it.
        const lines = chunks.filter((c) => c.type === 'tool-log');
        assert.deepEqual(lines.map((c) => [c.type === 'tool-log' && c.message, c.position.live]), [['halfway', 1]]);
        const history = await currentRuntime('spec').feed.read('agent:Progress:p1');
        assert.ok(history.chunks.length > 0 && history.chunks.every((c) => !JSON.stringify(c).includes('halfway')));
      } finally {
        await runtime?.stop();
      }
    });
  });
});
