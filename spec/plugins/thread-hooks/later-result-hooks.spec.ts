import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ModelProviders, ToolSources } from '../../../kernel/tokens.js';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { defineSubagent } from '../../../plugins/agent-api/define-subagent.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useSubagent } from '../../../plugins/agent-api/use-subagent.js';
import { defineHook } from '../../../threads.js';
import { DeferredTool, RecordingModel, TestTools, callIdOf, scripted, toolTurn, until } from '../../helpers/runtime-fixtures.js';

/**
 * Results that arrive after their step (issue 15): a deferred completion, an
 * approved call resumed, a sub-agent's answer. Each runs `tool_call_done` and
 * the result hooks exactly once, and what the store holds is their result.
 */

/** Hooks that record each run in `seen` and mark the result they let through. */
function resultHooks(seen: string[]) {
  return [
    defineHook({ hook: 'tool_call_done', id: 'log_done', execute: (_s, c, r) => void seen.push(`done ${c.function.name} ${r.status}`) }),
    defineHook({
      hook: 'after_tool_call_success',
      id: 'mark_success',
      execute: async (state, c, r) => {
        seen.push(`success ${r.result}`);
        await state.injectMessage({ role: 'user', content: `note: ${c.function.name} answered` });
        return { ...r, result: `${r.result} [checked]` };
      },
    }),
    defineHook({ hook: 'after_tool_call_failure', id: 'explain_failure', execute: (_s, _c, r) => (seen.push(`failure ${r.error}`), { ...r, error: `Explained: ${r.error}` }) }),
    defineHook({ hook: 'before_store_tool_result', id: 'upper', execute: (_s, _c, r) => (seen.push(`store ${r.status}`), r.status === 'success' ? { ...r, result: String(r.result).toUpperCase() } : r) }),
  ];
}

describe('thread hooks: results that arrive later (deferred, approved, sub-agent answers)', function () {
  this.timeout(30_000);
  let dir: string;
  let kernel: Kernel;
  let logs: LogRecord[];
  let model: RecordingModel;
  let doneEvents: unknown[];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-later-results-')));
    logs = [];
    model = new RecordingModel();
    const tools = [new DeferredTool(), new TestTools()];
    const plugin = definePlugin({
      id: 'later-results-spec',
      provides: [ToolSources, ModelProviders],
      register: (ctx) => {
        for (const t of tools) ctx.bindValue(ToolSources, t);
        ctx.bindValue(ModelProviders, model);
      },
    });
    kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), plugins: [plugin], logger: createLogger({ level: 'debug', sink: (_l, r) => logs.push(r) }), env: {} });
    await kernel.start();
    doneEvents = [];
    kernel.events.on((e) => {
      if (e.type === 'thread_event' && e.event === 'tool_call_done') doneEvents.push(e.data);
    });
  });
  afterEach(async () => {
    await kernel.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const hookLogs = () => logs.filter((l) => l.msg.startsWith('[Hooks] ✗'));
  const statusOf = async (id: string) => (await kernel.getOperation(id))?.status;

  it('a deferred completion runs tool_call_done, the success hooks and before_store_tool_result once; the stored result and the model see their output; the injected message follows the result; a duplicate completion runs nothing', async () => {
    const seen: string[] = [];
    const agent = { id: 'waiter', model: scripted([toolTurn('t', 'later', {}, 'job-1'), { text: 'got it' }], { provider: 'recorded' }), tools: ['t/*'] } as AgentDefinition;
    const handle = await kernel.execAgent({ agent, prompt: 'start the job', threadHooks: resultHooks(seen) });
    await until(async () => (await statusOf(handle.operationId)) === 'waiting_tool', 10_000);
    assert.deepEqual(seen, [], 'no result hook runs for the empty placeholder');
    const callId = callIdOf(await kernel.listMessages(handle.operationId), 'job-1');
    assert.deepEqual(await kernel.completeToolCall(handle.operationId, callId, 'job output'), { published: true });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(await kernel.completeToolCall(handle.operationId, callId, 'second output'), { published: false });

    assert.deepEqual(seen, ['done t__later success', 'success job output', 'store success']);
    assert.deepEqual(doneEvents, [{ id: callId, name: 't__later', status: 'success' }]);
    const stored = await kernel.listMessages(handle.operationId);
    assert.deepEqual(stored.map((m) => [m.role, m.content]), [
      ['user', 'start the job'],
      ['assistant', ''],
      ['tool', 'JOB OUTPUT [CHECKED]'],
      ['user', 'note: t__later answered'],
      ['assistant', 'got it'],
    ]);
    assert.equal(stored[2]!.toolResult?.success, true);
    assert.deepEqual(model.requests[1]!.messages.slice(-2).map((m) => m.content), ['JOB OUTPUT [CHECKED]', 'note: t__later answered']);
    assert.deepEqual(hookLogs(), []);
  });

  it('a failed deferred result runs after_tool_call_failure (never success) once; the stored result keeps its status with the hook\'s text', async () => {
    const seen: string[] = [];
    const agent = { id: 'waiter', model: scripted([toolTurn('t', 'later', {}, 'job-1'), { text: 'sorry' }], { provider: 'recorded' }), tools: ['t/*'] } as AgentDefinition;
    const handle = await kernel.execAgent({ agent, prompt: 'start the job', threadHooks: resultHooks(seen) });
    await until(async () => (await statusOf(handle.operationId)) === 'waiting_tool', 10_000);
    const callId = callIdOf(await kernel.listMessages(handle.operationId), 'job-1');
    await kernel.completeToolCall(handle.operationId, callId, { content: 'Error: the job crashed', success: false, error: 'tool_error' });
    assert.equal((await handle.completed()).status, 'done');
    assert.deepEqual(seen, ['done t__later error', 'failure Error: the job crashed', 'store error']);
    const tool = (await kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, false);
    assert.equal(tool.toolResult?.error, 'tool_error');
    assert.match(tool.content, /Explained/);
    assert.deepEqual((await kernel.listMessages(handle.operationId)).map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
  });

  it('an approved call runs its result hooks once when it resumes; a rejected call is stored as rejected and runs none', async () => {
    const seen: string[] = [];
    const agent = {
      id: 'careful',
      model: scripted([{ toolCalls: [{ id: 'a', identifier: 'test', apiName: 'echo', args: { n: 1 } }] }, { toolCalls: [{ id: 'b', identifier: 'test', apiName: 'echo', args: { n: 2 } }] }, { text: 'after the rejection' }], { provider: 'recorded' }),
      tools: ['test/*'],
      approval: { tools: ['test/echo'] },
    } as AgentDefinition;
    const handle = await kernel.execAgent({ agent, prompt: 'echo twice', threadHooks: resultHooks(seen) });
    await until(async () => (await statusOf(handle.operationId)) === 'waiting_approval', 10_000);
    assert.deepEqual(seen, []);
    const stepsBefore = (await kernel.getOperation(handle.operationId))!.version;
    await kernel.approve(handle.operationId);
    await until(async () => (await statusOf(handle.operationId)) === 'waiting_approval' && (await kernel.getOperation(handle.operationId))!.version > stepsBefore, 10_000);
    assert.deepEqual(seen, ['done test__echo success', 'success echo: {"n":1}', 'store success']);
    const final = await (await kernel.rejectAndContinue(handle.operationId, { reason: 'not twice' })).completed();
    assert.equal(final.status, 'done');
    assert.equal(seen.length, 3, 'the rejected call ran no result hook');
    const tools = (await kernel.listMessages(handle.operationId)).filter((m) => m.role === 'tool');
    assert.deepEqual(tools.map((m) => [m.content, m.toolResult?.success, m.toolResult?.error]), [
      ['ECHO: {"N":1} [CHECKED]', true, undefined],
      ['The user rejected this tool call: not twice', false, 'human_rejected'],
    ]);
  });

  it("a sub-agent's answer runs the parent's tool_call_done and result hooks once, on the parent's thread; the child's thread is untouched", async () => {
    const seen: string[] = [];
    kernel.agents.define({ id: 'child', model: scripted([{ text: 'child answer' }]) });
    kernel.agents.define({ id: 'parent', subagents: ['child'], model: scripted([toolTurn('agents', 'child', { instruction: 'summarize' }, 'call-sub'), { text: 'parent done' }]) });
    const handle = await kernel.execAgent({ agentId: 'parent', prompt: 'go', threadHooks: resultHooks(seen) });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.deepEqual(seen, ['done agents__child success', 'success child answer', 'store success']);
    const stored = await kernel.listMessages(handle.operationId);
    assert.deepEqual(stored.map((m) => [m.role, m.content]), [
      ['user', 'go'],
      ['assistant', ''],
      ['tool', 'CHILD ANSWER [CHECKED]'],
      ['user', 'note: agents__child answered'],
      ['assistant', 'parent done'],
    ]);
    const [child] = await kernel.listOperations({ parentOperationId: handle.operationId });
    assert.deepEqual((await kernel.listMessages(child!.id)).map((m) => [m.role, m.content]), [['user', 'summarize'], ['assistant', 'child answer']]);
    assert.equal(doneEvents.length, 1);
  });

  it("a sub-agent that ends in error answers with a failure: the parent's failure hooks run once", async () => {
    const seen: string[] = [];
    kernel.agents.define({ id: 'child', model: scripted([{ error: 'model down' }]) });
    kernel.agents.define({ id: 'parent', subagents: ['child'], model: scripted([toolTurn('agents', 'child', { instruction: 'summarize' }, 'call-sub'), { text: 'parent done' }]) });
    const handle = await kernel.execAgent({ agentId: 'parent', prompt: 'go', threadHooks: resultHooks(seen) });
    assert.equal((await handle.completed()).status, 'done');
    assert.deepEqual(seen, ['done agents__child error', 'failure Error: sub-agent "child" ended with error: model down', 'store error']);
    const tool = (await kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool')!;
    assert.equal(tool.toolResult?.success, false);
    assert.equal(tool.toolResult?.error, 'agent_error');
    assert.match(tool.content, /^Explained: /);
  });
});

const fnSeen: string[] = [];

/** An agent function of document 001 that delegates to a subagent; its static thread hooks see the subagent's answer. */
function Lead(): string {
  useModel({ provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'agent', apiName: 'task', args: { agent: 'researcher', prompt: 'What is the answer?' } }] }, { text: 'The researcher says 42.' }] } as never);
  useSubagent(
    defineSubagent({
      name: 'researcher',
      description: 'Finds facts.',
      model: { provider: 'scripted', turns: [{ text: 'It is 42.' }] } as never,
      agent: () => 'You research.',
    }),
  );
  return 'You lead.';
}
(Lead as Agent).threadHooks = resultHooks(fnSeen);

describe('thread hooks: a subagent answer of an agent function', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle;

  beforeEach(async () => {
    fnSeen.length = 0;
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-later-results-fn-')));
    runtime = await start({ agents: [Lead as Agent], env: {}, db: { sqlite: path.join(dir, 'db.sqlite') } });
  });
  afterEach(async () => {
    await runtime.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("the delegated call's answer runs tool_call_done and the result hooks once; the thread stores their result", async () => {
    const reply = await init(Lead as Agent, { id: 'l-1' }).dispatch('start');
    assert.equal(reply.text, 'The researcher says 42.');
    assert.deepEqual(fnSeen, ['done agent__task success', 'success It is 42.', 'store success']);
    const stored = await runtime.kernel.store.listThreadMessages(agentThreadId('Lead', 'l-1'));
    assert.deepEqual(stored.map((m) => [m.role, m.content]), [
      ['user', 'start'],
      ['assistant', ''],
      ['tool', 'IT IS 42. [CHECKED]'],
      ['user', 'note: agent__task answered'],
      ['assistant', 'The researcher says 42.'],
    ]);
  });
});
