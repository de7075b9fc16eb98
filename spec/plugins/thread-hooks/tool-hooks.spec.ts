import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { AgentDefinition } from '../../../kernel/agent-definition.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import type { ToolResult } from '../../../kernel/messages.js';
import { definePlugin } from '../../../kernel/plugin.js';
import type { OperationEvent } from '../../../kernel/runtime/operation-events.js';
import { ModelProviders, ThreadHooks, ToolPolicies, ToolSources } from '../../../kernel/tokens.js';
import type { ToolPolicy, ToolPolicyDecision } from '../../../kernel/tool-policy.js';
import type { ToolDefinition, ToolSource } from '../../../kernel/tools.js';
import type { ThreadHooksRuntime } from '../../../plugins/thread-hooks/index.js';
import { defineHook, type HookToolCall, type HookToolResult, type ThreadState } from '../../../threads.js';
import { RecordingModel, scripted } from '../../helpers/runtime-fixtures.js';

const PARAMS = { type: 'object', properties: { description: { type: 'string' } }, additionalProperties: true };

/** `files/write` (declares the progress argument `description`), `files/fail` (throws), `files/secret` (answers a secret). */
class FileTools implements ToolSource {
  readonly id = 'file-tools';
  runs = 0;
  list(): ToolDefinition[] {
    return [
      { identifier: 'files', apiName: 'write', description: 'Writes a file', parameters: PARAMS, progressArgument: 'description', toolSource: 'files' },
      { identifier: 'files', apiName: 'fail', description: 'Always fails', parameters: PARAMS, toolSource: 'files' },
      { identifier: 'files', apiName: 'secret', description: 'Answers a secret', parameters: PARAMS, toolSource: 'files' },
    ];
  }
  async execute(call: { apiName: string; args: Record<string, unknown> }): Promise<string | { content: string; data: unknown }> {
    this.runs += 1;
    if (call.apiName === 'fail') throw new Error('disk full at /home/alice');
    if (call.apiName === 'secret') return { content: 'token sk-live-123 for 123-45-6789', data: { ssn: '123-45-6789' } };
    return `Wrote ${String(call.args.path)}`;
  }
}

/** A result policy: denies `files/secret` results when `deny` is set, and redacts `sk-live-…` otherwise. */
class ResultPolicy implements ToolPolicy {
  deny = false;
  async evaluateToolCall(): Promise<ToolPolicyDecision> {
    return { effect: 'allow', policyIds: [] };
  }
  async evaluateToolResult(event: { apiName: string; result: ToolResult }): Promise<ToolPolicyDecision> {
    if (event.apiName !== 'secret') return { effect: 'allow', policyIds: [] };
    if (this.deny) return { effect: 'deny', reason: 'Secrets stay inside.', policyIds: ['no-secrets'] };
    return { effect: 'allow', policyIds: ['redact'], redactedResult: { ...event.result, content: event.result.content.replace(/sk-live-\d+/g, '[key]') } };
  }
}

interface World {
  kernel: Kernel;
  logs: LogRecord[];
  model: RecordingModel;
  tools: FileTools;
  policy: ResultPolicy;
  timeline: string[];
  events: OperationEvent[];
  cleanup(): Promise<void>;
}

/** A started kernel on a real SQLite file with the file tools, the result policy, the recorded model, and every event in `timeline`. */
async function startWorld(): Promise<World> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-tool-hooks-')));
  const logs: LogRecord[] = [];
  const tools = new FileTools();
  const policy = new ResultPolicy();
  const model = new RecordingModel();
  const plugin = definePlugin({
    id: 'tool-hooks-spec',
    provides: [ToolSources, ModelProviders, ToolPolicies],
    register: (ctx) => {
      ctx.bindValue(ToolSources, tools);
      ctx.bindValue(ModelProviders, model);
      ctx.bindValue(ToolPolicies, policy);
    },
  });
  const kernel = createKernel({ config: loadConfig({ cwd: dir, env: {} }), plugins: [plugin], logger: createLogger({ level: 'debug', sink: (_l, r) => logs.push(r) }), env: {} });
  await kernel.start();
  const timeline: string[] = [];
  const events: OperationEvent[] = [];
  kernel.events.on((e) => {
    events.push(e);
    if (e.type === 'thread_event') timeline.push(`event ${e.event} ${JSON.stringify(e.data)}`);
    if (e.type === 'tool_finished') timeline.push(`tool_finished ${e.result.content}`);
  });
  return { kernel, logs, model, tools, policy, timeline, events, cleanup: async () => { await kernel.stop(); await rm(dir, { recursive: true, force: true }); } };
}

const call = (apiName: string, args: Record<string, unknown> = {}) => ({ toolCalls: [{ identifier: 'files', apiName, args }] });
const agent = (id: string, turns: unknown[]): AgentDefinition => ({ id, model: scripted(turns, { provider: 'recorded' }), tools: ['files/write', 'files/fail', 'files/secret'] }) as AgentDefinition;

describe('thread hooks: tool calls of execAgent agents', () => {
  let w: World;
  beforeEach(async () => {
    w = await startWorld();
  });
  afterEach(async () => {
    await w.cleanup();
  });
  const hookLogs = () => w.logs.filter((l) => l.msg.startsWith('[Hooks] ✗'));

  it('runs started → done → success chain → before_store_tool_result in order, events before hooks; what is stored is what the stream and the model see', async () => {
    const { timeline } = w;
    const calls: HookToolCall[] = [];
    const handle = await w.kernel.execAgent({
      agent: agent('writer', [call('write', { description: 'writing index.html', path: 'index.html' }), { text: 'ok' }]),
      prompt: 'write it',
      threadHooks: [
        defineHook({ hook: 'tool_call_started', id: 'log_start', execute: (_s, c, progress) => void (calls.push(c), timeline.push(`started ${progress}`)) }),
        defineHook({ hook: 'tool_call_done', id: 'log_done', execute: (_s, _c, r) => void timeline.push(`done ${r.status} ${(r as { result?: string }).result}`) }),
        defineHook({ hook: 'after_tool_call_success', id: 'mark', execute: (_s, _c, r) => (timeline.push(`success1 ${r.result}`), { ...r, result: `${r.result} [checked]` }) }),
        defineHook({ hook: 'after_tool_call_success', id: 'keeps', execute: (_s, _c, r) => void timeline.push(`success2 ${r.result}`) }),
        defineHook({ hook: 'after_tool_call_failure', id: 'never', execute: () => void timeline.push('failure ran') }),
        defineHook({ hook: 'before_store_tool_result', id: 'upper', execute: (_s, _c, r) => (timeline.push(`store ${(r as { result?: string }).result}`), { ...r, result: String((r as { result?: string }).result).toUpperCase() }) }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    const messages = await w.kernel.listMessages(handle.operationId);
    const assistant = messages.find((m) => m.role === 'assistant' && m.toolCalls)!;
    const id = assistant.toolCalls![0]!.id;
    const tool = messages.find((m) => m.role === 'tool')!;
    assert.equal(tool.content, 'WROTE INDEX.HTML [CHECKED]');
    assert.equal(tool.toolResult?.success, true);
    assert.deepEqual(timeline, [
      `event tool_call_started ${JSON.stringify({ id, name: 'files__write', progress: 'writing index.html' })}`,
      'started writing index.html',
      `event tool_call_done ${JSON.stringify({ id, name: 'files__write', status: 'success' })}`,
      'done success Wrote index.html',
      'success1 Wrote index.html',
      'success2 Wrote index.html [checked]',
      'store Wrote index.html [checked]',
      'tool_finished WROTE INDEX.HTML [CHECKED]',
    ]);
    assert.deepEqual(calls, [{ id, type: 'function', function: { name: 'files__write', arguments: JSON.stringify({ description: 'writing index.html', path: 'index.html' }) } }]);
    assert.ok(Object.isFrozen(calls[0]) && Object.isFrozen(calls[0]!.function));
    assert.equal(w.model.requests[1]!.messages.at(-1)!.content, 'WROTE INDEX.HTML [CHECKED]');
    assert.deepEqual(hookLogs(), []);
  });

  it('a failed tool runs after_tool_call_failure (not success); a hook that changes its copy and throws is logged and the last good value goes on', async () => {
    const handle = await w.kernel.execAgent({
      agent: agent('failing', [call('fail'), { text: 'sorry' }]),
      prompt: 'try',
      threadHooks: [
        defineHook({ hook: 'after_tool_call_success', id: 'never', execute: () => { throw new Error('success hook ran'); } }),
        defineHook({ hook: 'after_tool_call_failure', id: 'half_then_throw', execute: (_s, _c, r) => { r.error = 'HALF-WRITTEN'; throw new Error('failure hook broke'); } }),
        defineHook({ hook: 'after_tool_call_failure', id: 'flip', execute: (_s, _c, r) => ({ ...r, status: 'success', result: 'all fine' }) as unknown as HookToolResult }),
        defineHook({ hook: 'after_tool_call_failure', id: 'explain', execute: (_s, _c, r) => (r.error?.includes('disk full') ? { ...r, error: 'The disk is full.' } : r) }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    const tool = (await w.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool')!;
    assert.equal(tool.content, 'The disk is full.');
    assert.equal(tool.toolResult?.success, false);
    assert.equal(tool.toolResult?.error, 'tool_error');
    const logged = hookLogs().map((l) => JSON.stringify(l));
    assert.equal(logged.length, 2, logged.join('\n'));
    assert.match(logged[0]!, /failure hook broke/);
    assert.match(logged[1]!, /changed the status/);
    assert.ok(!JSON.stringify(w.logs).includes('success hook ran'));
  });

  it("the gate decides first: a result control's denial is stored as it is (no hook un-denies it); a redaction is all hooks ever see", async () => {
    const seen: string[] = [];
    const hooks = [
      defineHook({ hook: 'tool_call_done', id: 'done', execute: (_s, _c, r) => void seen.push(`done ${r.status} ${JSON.stringify(r)}`) }),
      defineHook({ hook: 'after_tool_call_failure', id: 'undeny', execute: (_s, _c, r) => (seen.push('failure hook ran'), { ...r, error: 'token sk-live-123' }) }),
      defineHook({ hook: 'after_tool_call_success', id: 'peek', execute: (_s, _c, r) => void seen.push(`success ${r.result}`) }),
      defineHook({ hook: 'before_store_tool_result', id: 'sanitize_pii', execute: (_s, _c, r) => (r.status === 'success' ? { ...r, result: String(r.result).replace(/\b\d{3}-\d{2}-\d{4}\b/g, '***-**-****') } : { ...r, error: 'rewritten denial' }) }),
    ];
    w.policy.deny = true;
    const denied = await w.kernel.execAgent({ agent: agent('denied', [call('secret'), { text: 'ok' }]), prompt: 'leak', threadHooks: hooks });
    await denied.completed();
    const deniedTool = (await w.kernel.listMessages(denied.operationId)).find((m) => m.role === 'tool')!;
    assert.equal(deniedTool.content, 'Secrets stay inside.');
    assert.equal(deniedTool.toolResult?.error, 'hook_denied');
    assert.deepEqual(seen, [`done error ${JSON.stringify({ status: 'error', error: 'Secrets stay inside.' })}`]);

    seen.length = 0;
    w.policy.deny = false;
    const redacted = await w.kernel.execAgent({ agent: agent('redacted', [call('secret'), { text: 'ok' }]), prompt: 'leak', threadHooks: hooks });
    await redacted.completed();
    const tool = (await w.kernel.listMessages(redacted.operationId)).find((m) => m.role === 'tool')!;
    assert.equal(tool.content, 'token [key] for ***-**-****');
    // The tool's structured data held what the hook took out of the text: it is not stored.
    assert.equal(tool.toolResult?.data, undefined);
    assert.ok(!JSON.stringify(seen).includes('sk-live'));
    assert.ok(!JSON.stringify(w.events).includes('123-45-6789'), 'the stream never carried the unsanitized result');
  });

  it('injectMessage from a result hook stores in addition to the result, after the results of every call of the turn (never between a call and its result)', async () => {
    const handle = await w.kernel.execAgent({
      agent: agent('converter', [{ toolCalls: [{ identifier: 'files', apiName: 'write', args: { path: 'a' } }, { identifier: 'files', apiName: 'write', args: { path: 'b' } }] }, { text: 'thanks' }]),
      prompt: 'write two',
      threadHooks: [
        defineHook({
          hook: 'after_tool_call_success',
          id: 'convert_user_input',
          execute: async (state, c, r) => {
            const stored = await state.injectMessage({ role: 'user', content: `from ${c.function.name}: ${r.result}` });
            assert.equal(typeof stored.id, 'string');
            return r;
          },
        }),
        defineHook({ hook: 'before_create_message', id: 'tag_users', execute: (_s, m) => (m.role === 'user' ? { ...m, content: `[u] ${m.content}` } : undefined) }),
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    const rows = (await w.kernel.listMessages(handle.operationId)).map((m) => [m.role, m.content]);
    assert.deepEqual(rows, [
      ['user', '[u] write two'],
      ['assistant', ''],
      ['tool', 'Wrote a'],
      ['tool', 'Wrote b'],
      ['user', '[u] from files__write: Wrote a'],
      ['user', '[u] from files__write: Wrote b'],
      ['assistant', 'thanks'],
    ]);
    assert.deepEqual(w.model.requests[1]!.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'tool', 'user', 'user']);
  });

  it('tool_call_started: the run goes on after the started-wait without cancelling the hook; without hooks the events are still sent', async () => {
    (w.kernel.resolve(ThreadHooks) as ThreadHooksRuntime).toolCallStartedWaitMs = 50;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    const slow = await w.kernel.execAgent({
      agent: agent('slow', [call('write', { description: 'slowly' }), { text: 'ok' }]),
      prompt: 'go',
      threadHooks: [defineHook({ hook: 'tool_call_started', id: 'slow_start', execute: async () => { await gate; finished = true; } })],
    });
    const final = await slow.completed();
    assert.equal(final.status, 'done');
    assert.equal(w.tools.runs, 1);
    assert.equal(finished, false);
    release();
    await gate;
    await new Promise((r) => setImmediate(r));
    assert.equal(finished, true, 'the hook ran to its end');

    w.timeline.length = 0;
    const plain = await w.kernel.execAgent({ agent: agent('plain', [call('fail'), { text: 'ok' }]), prompt: 'go' });
    await plain.completed();
    const callId = (await w.kernel.listMessages(plain.operationId)).find((m) => m.role === 'tool')!.toolCallId;
    assert.deepEqual(w.timeline.slice(0, 2), [
      `event tool_call_started ${JSON.stringify({ id: callId, name: 'files__fail' })}`,
      `event tool_call_done ${JSON.stringify({ id: callId, name: 'files__fail', status: 'error' })}`,
    ]);
  });
});

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
    // On a thread with no running execution nothing is queued.
    assert.throws(() => saved!.queueTool('files/write', { path: 'late' }), (err: { code?: string }) => err.code === 'THREAD_HOOK_UNSUPPORTED');
    assert.equal((await w.kernel.listMessages(handle.operationId)).length, stored.length);
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
