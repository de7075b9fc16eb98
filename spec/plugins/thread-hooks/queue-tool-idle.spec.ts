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
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import { TERMINAL_STATUSES, type OperationRecord } from '../../../kernel/store.js';
import { defineHook, type ThreadState } from '../../../threads.js';
import { scripted, until } from '../../helpers/runtime-fixtures.js';
import { RecordingReceiver, deny } from '../../helpers/webhook-receiver.js';
import { startWorld, type World } from './tool-hooks-fixtures.js';

/**
 * `state.queueTool()` on an idle thread (issue 15 item 6): the call starts a
 * run of the thread, through the same gate as every call; a call message
 * `before_create_message` prevents is not stored and the run settles failed.
 * The attacks come first. Everything is checked against the store.
 */
describe('thread hooks: state.queueTool on an idle thread', function () {
  this.timeout(30_000);
  let w: World;
  let receiver: RecordingReceiver | undefined;
  beforeEach(async () => {
    w = await startWorld();
  });
  afterEach(async () => {
    await w.cleanup();
    await receiver?.close();
    receiver = undefined;
  });

  const writer = (turns: unknown[]) => ({ id: 'writer', model: scripted(turns, { provider: 'recorded' }), tools: ['files/write'] }) as AgentDefinition;
  const hookLogs = () => w.logs.filter((l) => l.msg.startsWith('[Hooks] ✗'));
  const threadOps = (threadId: string) => w.kernel.store.listThreadOperations(threadId);
  const texts = async (threadId: string) =>
    (await w.kernel.store.listThreadMessages(threadId)).map((m) => [m.role, m.content, (m.toolCalls ?? []).map((c) => `${c.identifier}/${c.apiName}`).join(',')]);

  /** Runs the agent once to its end, keeping the ThreadState its hooks got; then the thread is idle. */
  async function idleThread(agent: AgentDefinition, extra: { hooks?: unknown[]; threadHooks?: ReturnType<typeof defineHook>[] } = {}) {
    let saved: ThreadState | undefined;
    const handle = await w.kernel.execAgent({
      agent,
      prompt: 'hi',
      userId: 'user-7',
      ...(extra.hooks ? { hooks: extra.hooks as never } : {}),
      threadHooks: [defineHook({ hook: 'after_create_message', id: 'keep_state', execute: (state) => void (saved = state) }), ...(extra.threadHooks ?? [])],
    });
    const first = await handle.completed();
    assert.equal(first.status, 'done');
    return { state: saved!, first };
  }

  /** Waits for the run a queued call started on the thread, and resolves it once it ended. */
  async function queuedRun(threadId: string): Promise<OperationRecord> {
    let run: OperationRecord | undefined;
    await until(async () => {
      const ops = await threadOps(threadId);
      run = ops.length > 1 ? ops.at(-1) : undefined;
      return run !== undefined && TERMINAL_STATUSES.has(run.status);
    }, 15_000);
    return run!;
  }

  it('attack: unknown and look-alike names, a bad name or arguments, and huge arguments throw THREAD_HOOK_INVALID at once; no run starts, nothing is stored', async () => {
    const { state, first } = await idleThread(writer([{ text: 'first answer' }]));
    const before = await texts(first.threadId);
    const attempts: Array<[unknown, unknown]> = [
      ['files/nope', {}],
      ['FILES__WRITE', {}],
      ['files__wr\u0456te', {}],
      ['files__write\u200b', {}],
      ['', {}],
      [42, {}],
      ['files/write', 'not an object'],
      ['files/write', ['a list']],
      ['files/write', { content: 'x'.repeat(1_100_000) }],
    ];
    for (const [name, args] of attempts) {
      assert.throws(() => state.queueTool(name as string, args as Record<string, unknown>), (err: { code?: string; message?: string }) => err.code === 'THREAD_HOOK_INVALID' && (err.message ?? '').length < 600, String(name).slice(0, 40));
    }
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await threadOps(first.threadId)).length, 1, 'no run started');
    assert.deepEqual(await texts(first.threadId), before);
    assert.equal(w.tools.runs, 0);
  });

  it("attack: a tool the agent may not call, queued on an idle thread, is refused by the gate's allow-list in the run it starts; the tool never runs", async () => {
    const { state, first } = await idleThread(writer([{ text: 'first answer' }, { text: 'cannot do that' }]));
    state.queueTool('files/fail', {});
    const run = await queuedRun(first.threadId);
    assert.equal(run.status, 'done');
    assert.equal(w.tools.runs, 0);
    assert.deepEqual((await texts(first.threadId)).slice(2), [
      ['assistant', '', 'files/fail'],
      ['tool', 'Tool "files/fail" is not available to this agent.', ''],
      ['assistant', 'cannot do that', ''],
    ]);
  });

  it("attack: the thread's webhook control (beforeToolCall, responseHandling toolCall) denies the queued call in the new run; the tool never runs", async () => {
    receiver = await RecordingReceiver.start();
    receiver.route('/before', deny('no writes after hours'));
    const control = { id: 'before-gate', type: 'beforeToolCall', webhook: { url: receiver.url('/before'), responseHandling: 'toolCall' } };
    const { state, first } = await idleThread(writer([{ text: 'first answer' }, { text: 'denied, ok' }]), { hooks: [control] });
    state.queueTool('files/write', { path: 'late.txt' });
    const run = await queuedRun(first.threadId);
    assert.equal(run.status, 'done');
    assert.equal(w.tools.runs, 0, 'the denied tool never ran');
    assert.equal(receiver.to('/before').length, 1);
    assert.match(receiver.to('/before')[0]!.rawBody, /late\.txt/, 'the control saw the queued call');
    const stored = (await w.kernel.store.listThreadMessages(first.threadId)).slice(2);
    assert.deepEqual(stored.map((m) => m.role), ['assistant', 'tool', 'assistant']);
    assert.equal(stored[1]!.toolResult?.success, false);
    assert.equal(stored[1]!.toolResult?.error, 'hook_denied');
    assert.match(stored[1]!.content, /no writes after hours/);
  });

  it('starts a run of the idle thread: the calls queued together are stored in one assistant message, run through the gate with tool_call_done and the result hooks, and the model answers; same agent, user and thread', async () => {
    const done: string[] = [];
    const { state, first } = await idleThread(writer([{ text: 'first answer' }, { text: 'both written' }]), {
      threadHooks: [
        defineHook({ hook: 'tool_call_done', id: 'log_done', execute: (_s, c, r) => void done.push(`${c.function.name} ${r.status}`) }),
        defineHook({ hook: 'after_tool_call_success', id: 'mark', execute: (_s, _c, r) => ({ ...r, result: `${r.result} [hooked]` }) }),
        defineHook({ hook: 'tool_call_started', id: 'never_for_queued', execute: () => void done.push('started') }),
      ],
    });
    state.queueTool('files/write', { path: 'one.txt' });
    state.queueTool('files__write', { path: 'two.txt' });
    const run = await queuedRun(first.threadId);
    assert.equal(run.status, 'done', JSON.stringify(run.error));
    assert.equal((await threadOps(first.threadId)).length, 2, 'one run for the calls queued together');
    assert.deepEqual([run.agentId, run.userId, run.threadId, run.parentOperationId], ['writer', 'user-7', first.threadId, undefined]);
    assert.deepEqual(await texts(first.threadId), [
      ['user', 'hi', ''],
      ['assistant', 'first answer', ''],
      ['assistant', '', 'files/write,files/write'],
      ['tool', 'Wrote one.txt [hooked]', ''],
      ['tool', 'Wrote two.txt [hooked]', ''],
      ['assistant', 'both written', ''],
    ]);
    assert.equal(w.tools.runs, 2);
    assert.deepEqual(done, ['files__write success', 'files__write success']);
    // The model of the new run read the whole thread, the queued calls and their results included.
    assert.deepEqual(w.model.requests.at(-1)!.messages.map((m) => m.role), ['user', 'assistant', 'assistant', 'tool', 'tool']);
    assert.deepEqual(hookLogs(), []);
  });

  it('a queued call message before_create_message prevents is not stored; the tool does not run and the run fails (message_hook_error)', async () => {
    const { state, first } = await idleThread(writer([{ text: 'first answer' }, { text: 'never' }]), {
      threadHooks: [defineHook({ hook: 'before_create_message', id: 'no_calls_at_rest', execute: (_s, m) => { if (m.tool_calls) throw new Error('no tool calls on an idle thread'); } })],
    });
    const before = await texts(first.threadId);
    state.queueTool('files/write', { path: 'late.txt' });
    const run = await queuedRun(first.threadId);
    // The run fails as a prevented sent message fails one (status `error`, reason message_hook_error).
    assert.equal(run.status, 'error');
    assert.equal(run.reason, 'message_hook_error');
    assert.equal(run.error?.code, 'MESSAGE_HOOK_ERROR');
    assert.match(run.error?.message ?? '', /queued on the idle thread: no tool calls on an idle thread/);
    assert.deepEqual(await texts(first.threadId), before);
    assert.equal(w.tools.runs, 0);
  });

  it('a tool queued from after_create_message of the final answer (the run still finishing) is not lost: it runs in that run', async () => {
    let queued = false;
    const handle = await w.kernel.execAgent({
      agent: writer([{ text: 'final answer' }, { text: 'after the follow-up' }]),
      prompt: 'hi',
      threadHooks: [
        defineHook({
          hook: 'after_create_message',
          id: 'follow_up',
          execute: (state, m) => {
            if (m.role === 'assistant' && m.content === 'final answer' && !queued) {
              queued = true;
              state.queueTool('files/write', { path: 'follow-up.txt' });
            }
          },
        }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal((await threadOps(final.threadId)).length, 1);
    assert.deepEqual((await texts(final.threadId)).slice(1), [
      ['assistant', 'final answer', ''],
      ['assistant', '', 'files/write'],
      ['tool', 'Wrote follow-up.txt', ''],
      ['assistant', 'after the follow-up', ''],
    ]);
  });

  it("attack: a tool queued on a finished sub-agent's idle thread runs there and never answers the parent's call again", async () => {
    let childState: ThreadState | undefined;
    w.kernel.agents.define({ id: 'child', model: scripted([{ text: 'child answer' }, { text: 'child wrote it' }], { provider: 'recorded' }), tools: ['files/write'] });
    w.kernel.agents.define({ id: 'parent', subagents: ['child'], model: scripted([{ toolCalls: [{ identifier: 'agents', apiName: 'child', args: { instruction: 'summarize' } }] }, { text: 'parent done' }], { provider: 'recorded' }) });
    const handle = await w.kernel.execAgent({
      agentId: 'parent',
      prompt: 'go',
      threadHooks: [defineHook({ hook: 'after_subagent_created', id: 'keep_child', execute: (_s, child) => void (childState = child) })],
    });
    const parent = await handle.completed();
    assert.equal(parent.status, 'done');
    const parentMessages = await w.kernel.listMessages(parent.id);
    const [child] = await w.kernel.listOperations({ parentOperationId: parent.id });
    await until(async () => (await w.kernel.getOperation(child!.id))?.status === 'done', 10_000);
    childState!.queueTool('files/write', { path: 'child.txt' });
    const run = await queuedRun(child!.threadId);
    assert.equal(run.status, 'done', JSON.stringify(run.error));
    assert.equal(run.parentOperationId, undefined);
    assert.equal(run.context['hookgate.parentToolCallId'], undefined);
    assert.deepEqual((await texts(child!.threadId)).slice(2), [['assistant', '', 'files/write'], ['tool', 'Wrote child.txt', ''], ['assistant', 'child wrote it', '']]);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await w.kernel.listMessages(parent.id), parentMessages, "the parent's thread is untouched");
    assert.equal((await w.kernel.getOperation(parent.id))!.version, parent.version);
  });

  it('refuses (THREAD_HOOK_UNSUPPORTED) while the thread waits for a human, storing nothing', async () => {
    let saved: ThreadState | undefined;
    const agent = { id: 'careful', model: scripted([{ toolCalls: [{ identifier: 'files', apiName: 'write', args: { path: 'a' } }] }], { provider: 'recorded' }), tools: ['files/write'], approval: { tools: ['files/write'] } } as AgentDefinition;
    const handle = await w.kernel.execAgent({ agent, prompt: 'hi', threadHooks: [defineHook({ hook: 'after_create_message', id: 'keep_state', execute: (state) => void (saved = state) })] });
    await until(async () => (await w.kernel.getOperation(handle.operationId))?.status === 'waiting_approval', 10_000);
    const before = await texts((await w.kernel.getOperation(handle.operationId))!.threadId);
    assert.throws(() => saved!.queueTool('files/write', { path: 'b' }), (err: { code?: string; message?: string }) => err.code === 'THREAD_HOOK_UNSUPPORTED' && /waiting_approval/.test(err.message ?? ''));
    await new Promise((r) => setTimeout(r, 100));
    const threadId = (await w.kernel.getOperation(handle.operationId))!.threadId;
    assert.deepEqual(await texts(threadId), before);
    assert.equal((await threadOps(threadId)).length, 1);
  });
});

let fnState: ThreadState | undefined;
const fnWrites: string[] = [];

/** An agent function of document 001 whose hook keeps its ThreadState; a tool queued later starts a run from the agent source. */
function Scribe(): string {
  useModel({ provider: 'scripted', turns: [{ text: 'noted' }, { text: 'written' }] } as never);
  useTool(defineTool({ name: 'write_note', description: 'Writes a note', input: v.object({ text: v.string() }), run: ({ data }) => (fnWrites.push(data.text), `wrote ${data.text}`) }));
  return 'You take notes.';
}
(Scribe as Agent).threadHooks = [defineHook({ hook: 'after_create_message', id: 'keep_state', execute: (state) => void (fnState = state) })];

describe('thread hooks: state.queueTool on the idle thread of an agent function', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle;
  beforeEach(async () => {
    fnState = undefined;
    fnWrites.length = 0;
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-idle-fn-')));
    runtime = await start({ agents: [Scribe as Agent], env: {}, db: { sqlite: path.join(dir, 'db.sqlite') } });
  });
  afterEach(async () => {
    await runtime.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("starts a run of the instance's thread from its agent source: the call is stored, runs the agent's own tool, and the model answers", async () => {
    const reply = await init(Scribe as Agent, { id: 's-1' }).dispatch('remember milk');
    assert.equal(reply.text, 'noted');
    const threadId = agentThreadId('Scribe', 's-1');
    fnState!.queueTool('agent__write_note', { text: 'milk' });
    await until(async () => {
      const ops = await runtime.kernel.store.listThreadOperations(threadId);
      return ops.length === 2 && TERMINAL_STATUSES.has(ops[1]!.status);
    }, 15_000);
    const ops = await runtime.kernel.store.listThreadOperations(threadId);
    assert.equal(ops[1]!.status, 'done', JSON.stringify(ops[1]!.error));
    assert.deepEqual(fnWrites, ['milk']);
    const stored = await runtime.kernel.store.listThreadMessages(threadId);
    assert.deepEqual(stored.map((m) => [m.role, m.content]), [['user', 'remember milk'], ['assistant', 'noted'], ['assistant', ''], ['tool', '"wrote milk"'], ['assistant', 'written']]);
  });
});
