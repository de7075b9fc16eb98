import assert from 'node:assert/strict';
import { ThreadHooks } from '../../../kernel/tokens.js';
import type { ThreadHooksRuntime } from '../../../plugins/thread-hooks/index.js';
import { defineHook, type HookToolCall, type HookToolResult } from '../../../threads.js';
import { agent, call, startWorld, type World } from './tool-hooks-fixtures.js';

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
