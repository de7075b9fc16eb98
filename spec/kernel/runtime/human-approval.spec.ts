import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { AgentHook } from '../../../kernel/hooks/hook-types.js';
import { callIdOf, nativeIdOf, recordHooks, scripted, startKernel, toolTurn, useSqliteRestart, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

const WRITE = toolTurn('fs', 'writeFile', { path: 'note.txt', content: 'approved content' }, 'call-w');

function careful(provider: 'scripted' | 'recorded' = 'scripted') {
  return {
    id: 'careful',
    tools: ['fs/*'],
    approval: { tools: ['fs/writeFile'] },
    model: scripted([WRITE, { text: 'finished' }], { provider }),
  };
}

/** Human approval: park, approve, reject, rejectAndContinue, and approval after a restart (issue 3 item 6). */
describe('runtime: human approval', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const note = () => path.join(fx.sandbox, 'note.txt');

  it('a tool that needs approval parks the operation: waiting_approval, beforeHumanIntervention, tool not run', async () => {
    fx.kernel.agents.define(careful());
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'write', hooks: rec.hooks });
    const parked = await handle.settled();
    assert.equal(parked.status, 'waiting_approval');
    assert.deepEqual(parked.state.approval?.pendingTools.map((t) => t.nativeToolCallId), ['call-w']);
    assert.deepEqual(parked.state.approval?.pendingTools.map((t) => t.toolCallId), [callIdOf(await fx.kernel.listMessages(handle.operationId), 'call-w')]);
    assert.equal((await fx.kernel.getOperation(handle.operationId))?.status, 'waiting_approval');
    assert.deepEqual(rec.sequence().slice(-3), ['beforeStep', 'beforeHumanIntervention', 'afterStep']);
    assert.equal(rec.of('beforeStep').at(-1)!.stepType, 'request_human_approve');
    assert.equal(rec.of('beforeToolCall').length, 0);
    assert.equal(rec.of('onComplete').length, 0);
    assert.equal(existsSync(note()), false);
    await fx.kernel.abort(handle.operationId);
  });

  it('approve resumes the run: afterHumanIntervention, the tool runs, the run completes', async () => {
    fx.kernel.agents.define(careful());
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'write', hooks: rec.hooks });
    await handle.settled();
    const final = await (await fx.kernel.approve(handle.operationId)).completed();
    assert.equal(final.status, 'done');
    assert.equal(final.reason, 'done');
    assert.equal(readFileSync(note(), 'utf8'), 'approved content');
    assert.equal(rec.of('afterHumanIntervention')[0]!.action, 'approve');
    const after = rec.sequence().slice(rec.sequence().indexOf('afterHumanIntervention'));
    assert.deepEqual(after, ['afterHumanIntervention', 'beforeStep', 'beforeToolCall', 'afterToolCall', 'afterStep', 'beforeStep', 'afterStep', 'onComplete']);
  });

  it('reject halts the run: onStopByHumanIntervention, reason interrupted, the tool never runs, the model is not asked again', async () => {
    fx.kernel.agents.define(careful('recorded'));
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'write', hooks: rec.hooks });
    await handle.settled();
    const final = await (await fx.kernel.reject(handle.operationId, { reason: 'not allowed' })).completed();
    assert.equal(final.status, 'interrupted');
    assert.equal(final.reason, 'interrupted');
    assert.equal(existsSync(note()), false);
    assert.deepEqual(rec.sequence().slice(-3), ['afterHumanIntervention', 'onStopByHumanIntervention', 'onComplete']);
    assert.equal(rec.of('onStopByHumanIntervention')[0]!.rejectionReason, 'not allowed');
    assert.equal(rec.of('onComplete')[0]!.reason, 'interrupted');
    assert.equal(fx.model.requests.length, 1);
    const tool = (await fx.kernel.listMessages(handle.operationId)).find((m) => m.role === 'tool');
    assert.equal(tool?.toolResult?.error, 'human_rejected');
  });

  it('rejectAndContinue: the model sees the rejection reason and the run goes on', async () => {
    fx.kernel.agents.define(careful('recorded'));
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'write', hooks: rec.hooks });
    await handle.settled();
    const final = await (await fx.kernel.rejectAndContinue(handle.operationId, { reason: 'use a different file name' })).completed();
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'finished');
    assert.equal(existsSync(note()), false);
    assert.equal(rec.of('onStopByHumanIntervention').length, 0);
    const second = fx.model.requests[1]!;
    const tool = second.messages.find((m) => m.role === 'tool');
    assert.equal(nativeIdOf(second.messages, tool?.toolCallId), 'call-w');
    assert.match(tool!.content, /use a different file name/);
  });

  it('approve on an operation that is not waiting fails with OPERATION_NOT_WAITING', async () => {
    fx.kernel.agents.define({ id: 'plain', model: scripted([{ text: 'hi' }]) });
    const handle = await fx.kernel.execAgent({ agentId: 'plain', prompt: 'hi' });
    await handle.completed();
    await assert.rejects(fx.kernel.approve(handle.operationId), { code: 'OPERATION_NOT_WAITING' });
  });

  it('a decision for a tool call that is not pending fails with OPERATION_NOT_WAITING and keeps the operation parked', async () => {
    fx.kernel.agents.define(careful());
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'write' });
    await handle.settled();
    await assert.rejects(fx.kernel.approve(handle.operationId, { toolCallId: 'call-nope' }), { code: 'OPERATION_NOT_WAITING' });
    assert.equal((await fx.kernel.getOperation(handle.operationId))?.status, 'waiting_approval');
    await fx.kernel.abort(handle.operationId);
  });

  it('two pending calls: approving one keeps the operation parked until the other is decided', async () => {
    fx.kernel.agents.define({
      id: 'two',
      tools: ['fs/*'],
      approval: { tools: ['fs/writeFile'] },
      model: scripted([
        { toolCalls: [
          { id: 'w1', identifier: 'fs', apiName: 'writeFile', args: { path: 'one.txt', content: '1' } },
          { id: 'w2', identifier: 'fs', apiName: 'writeFile', args: { path: 'two.txt', content: '2' } },
        ] },
        { text: 'done' },
      ]),
    });
    const handle = await fx.kernel.execAgent({ agentId: 'two', prompt: 'write' });
    const parked = await handle.settled();
    assert.deepEqual(parked.state.approval?.pendingTools.map((t) => t.nativeToolCallId), ['w1', 'w2']);
    const [w1, w2] = parked.state.approval!.pendingTools.map((t) => t.toolCallId);
    const still = await (await fx.kernel.approve(handle.operationId, { toolCallId: w1 })).settled();
    assert.equal(still.status, 'waiting_approval');
    assert.deepEqual(still.state.approval?.pendingTools.map((t) => t.toolCallId), [w2]);
    assert.equal(existsSync(path.join(fx.sandbox, 'one.txt')), false, 'nothing runs while a decision is outstanding');
    const final = await (await fx.kernel.rejectAndContinue(handle.operationId, { toolCallId: w2, reason: 'only one' })).completed();
    assert.equal(final.status, 'done');
    assert.equal(existsSync(path.join(fx.sandbox, 'one.txt')), true);
    assert.equal(existsSync(path.join(fx.sandbox, 'two.txt')), false);
  });

  it('two concurrent approvals of one parked operation: one wins, the other is refused, the tool runs once', async () => {
    fx.kernel.agents.define({ ...careful(), tools: ['fs/*', 'test/*'], approval: { tools: ['test/echo'] }, model: scripted([toolTurn('test', 'echo', {}, 'c1'), { text: 'done' }]) });
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'go' });
    await handle.settled();
    const outcomes = await Promise.allSettled([fx.kernel.approve(handle.operationId), fx.kernel.approve(handle.operationId)]);
    assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    assert.equal(refused.reason.code, 'OPERATION_NOT_WAITING');
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal(fx.tools.calls.length, 1);
  });

  it('abort of a parked operation ends it as interrupted', async () => {
    fx.kernel.agents.define(careful());
    const rec = recordHooks(['onComplete']);
    const handle = await fx.kernel.execAgent({ agentId: 'careful', prompt: 'write', hooks: rec.hooks });
    await handle.settled();
    await fx.kernel.abort(handle.operationId);
    const final = await handle.completed();
    assert.equal(final.reason, 'interrupted');
    assert.equal(rec.of('onComplete')[0]!.reason, 'interrupted');
  });

  describe('after a restart (SQLite)', () => {
    const restart = useSqliteRestart();
    let a: RuntimeFixture | undefined;
    let b: RuntimeFixture | undefined;

    async function parkInA(hooks: AgentHook[] = []) {
      a = await restart.first();
      a.kernel.agents.define(careful());
      const handle = await a.kernel.execAgent({ agentId: 'careful', prompt: 'write', hooks });
      assert.equal((await handle.settled()).status, 'waiting_approval');
      await a.kernel.stop();
      b = await restart.next();
      return handle.operationId;
    }

    it('a new kernel on the same data dir approves; the tool runs and the messages are stored', async () => {
      const operationId = await parkInA();
      assert.equal((await b!.kernel.getOperation(operationId))?.status, 'waiting_approval');
      const final = await (await b!.kernel.approve(operationId)).completed();
      assert.equal(final.status, 'done');
      assert.equal(final.state.lastText, 'finished');
      assert.equal(readFileSync(path.join(b!.sandbox, 'note.txt'), 'utf8'), 'approved content');
      const messages = await b!.kernel.listMessages(operationId);
      assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
      assert.match(messages[2]!.content, /wrote/);
      assert.deepEqual((await b!.kernel.listSteps(operationId)).map((s) => s.kind), ['call_llm', 'request_human_approve', 'call_tool', 'call_llm']);
    });

    /** A persisted webhook hook (never delivered before the park), whose stored row is then damaged. */
    async function parkWithDamagedHooks(row: string) {
      const operationId = await parkInA([{ id: 'notify', type: 'onComplete', webhook: { url: 'http://127.0.0.1:9/hook' } }]);
      const db = new Database(path.join(a!.dir, '.hookgate', 'hookgate.db'));
      try {
        assert.equal(db.prepare('UPDATE hook_registrations SET hook = ? WHERE operation_id = ?').run(row, operationId).changes, 1);
      } finally {
        db.close();
      }
      return operationId;
    }

    for (const [what, row] of [
      ['not JSON', '{ this is not json'],
      ['JSON that is not a webhook hook', JSON.stringify({ id: 'gate', type: 'beforeToolCall', handler: 'gone' })],
    ] as const) {
      it(`persisted hooks that are ${what}: approving on a new kernel ends the operation with status error; the tool never runs`, async () => {
        const operationId = await parkWithDamagedHooks(row);
        const final = await (await b!.kernel.approve(operationId)).completed();
        assert.equal(final.status, 'error');
        assert.equal(final.reason, 'error');
        assert.ok(final.error?.message);
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(existsSync(path.join(b!.sandbox, 'note.txt')), false);
        assert.equal((await b!.kernel.getOperation(operationId))?.status, 'error');
      });
    }

    it('persisted hooks that fail to restore are reported with HOOK_RESTORE_FAILED', async () => {
      const operationId = await parkWithDamagedHooks(JSON.stringify({ id: 'gate', type: 'beforeToolCall', handler: 'gone' }));
      const final = await (await b!.kernel.approve(operationId)).completed();
      assert.equal(final.error?.code, 'HOOK_RESTORE_FAILED');
    });

    it('a new kernel on the same data dir rejects; the run halts as interrupted', async () => {
      const operationId = await parkInA();
      const final = await (await b!.kernel.reject(operationId, { reason: 'no' })).completed();
      assert.equal(final.reason, 'interrupted');
      assert.equal(existsSync(path.join(b!.sandbox, 'note.txt')), false);
    });
  });
});
