import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as v from 'valibot';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { defineTool } from '../../../plugins/agent-api/define-tool.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import { defineHook, type HookExecutionContext } from '../../../threads.js';

const seen: string[] = [];
const sources: Array<HookExecutionContext['source']> = [];

const getUserInput = defineTool({ name: 'get_user_input', description: 'Asks the user', input: v.object({ question: v.string() }), run: () => 'my badge is KX-9913' });
const lookupOrder = defineTool({ name: 'lookup_order', description: 'Looks an order up', input: v.object({ id: v.string() }), run: () => { throw new Error('order A-1 not found'); } });

/** The document's "Add a User Message from a Tool Result" with filtering of a sensitive value, as an agent function's static hooks. */
function Intake(): string {
  useModel({ provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'agent', apiName: 'get_user_input', args: { question: 'ssn?' } }, { identifier: 'agent', apiName: 'lookup_order', args: { id: 'A-1' } }] }, { text: 'noted' }] } as never);
  useTool(getUserInput);
  useTool(lookupOrder);
  return 'You take input.';
}
(Intake as Agent).threadHooks = [
  defineHook({ hook: 'tool_call_done', id: 'log_tool_done', execute: (_s, call, result, context) => void (seen.push(`done ${call.function.name} ${result.status}`), sources.push(context.source)) }),
  defineHook({ hook: 'after_tool_call_success', id: 'filter_sensitive_results', execute: (_s, _c, r) => ({ ...r, result: String(r.result).replace(/KX-\d+/g, 'KX-****') }) }),
  defineHook({
    hook: 'after_tool_call_success',
    id: 'convert_user_input',
    execute: async (state, call, result) => {
      if (call.function.name.endsWith('get_user_input')) await state.injectMessage({ role: 'user', content: JSON.parse(result.result ?? '""') as string });
      return result;
    },
  }),
  defineHook({ hook: 'after_tool_call_failure', id: 'explain_not_found', execute: (_s, _c, r) => (r.error?.includes('not found') ? { ...r, error: 'The requested item was not found.' } : r) }),
  defineHook({
    hook: 'before_store_tool_result',
    id: 'add_result_metadata',
    execute: async (state, call, r) => {
      await state.setValue(`tool_result:${call.id}`, { thread_id: state.threadId, status: r.status });
      return r;
    },
  }),
];

/** Tool hooks for agent functions of document 001 (issue 15), checked against the store. */
describe('thread hooks: tool calls of agent functions', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle;

  beforeEach(async () => {
    seen.length = 0;
    sources.length = 0;
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-tool-hooks-fn-')));
    runtime = await start({ agents: [Intake as Agent], env: {}, db: { sqlite: path.join(dir, 'db.sqlite') } });
  });
  afterEach(async () => {
    await runtime.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('the static hooks shape each result before it is stored; the injected user message follows the turn\'s results; values are set per call', async () => {
    const reply = await init(Intake as Agent, { id: 'i-1' }).dispatch('start');
    assert.equal(reply.text, 'noted');
    const threadId = agentThreadId('Intake', 'i-1');
    const stored = await runtime.kernel.store.listThreadMessages(threadId);
    assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant', 'tool', 'tool', 'user', 'assistant']);
    const [inputResult, orderResult] = stored.filter((m) => m.role === 'tool');
    assert.equal(JSON.parse(inputResult!.content), 'my badge is KX-****');
    assert.equal(orderResult!.content, 'The requested item was not found.');
    assert.equal(orderResult!.toolResult?.success, false);
    assert.equal(stored[4]!.content, 'my badge is KX-****');
    assert.ok(!JSON.stringify(stored).includes('KX-9913'));
    assert.deepEqual(seen, ['done agent__get_user_input success', 'done agent__lookup_order error']);
    assert.ok(sources.every((s) => s.kind === 'agent' && s.name === 'Intake'));
    const values = (await runtime.kernel.store.getThread(threadId))?.values ?? {};
    assert.deepEqual(values[`tool_result:${inputResult!.toolCallId}`], { thread_id: threadId, status: 'success' });
    assert.deepEqual(values[`tool_result:${orderResult!.toolCallId}`], { thread_id: threadId, status: 'error' });
  });
});
