import assert from 'node:assert/strict';
import { SqliteStore } from '../../../plugins/store-sqlite/sqlite-store.js';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AGENT_FUNCTION_SOURCE_ID, type Agent } from '../../../plugins/agent-api/agent.js';
import { ToolStepError } from '../../../plugins/agent-api/agent-errors.js';
import { defineTool, runAgentTool, type ToolStep } from '../../../plugins/agent-api/define-tool.js';
import { MAX_STEP_NAME, MAX_STEP_VALUE_CHARS, openToolStep, storeToolStepJournal } from '../../../plugins/agent-api/tool-step.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import type { OperationState } from '../../../kernel/store.js';
import type { RuntimeFixture } from '../../helpers/runtime-fixtures.js';
import { agentToolTurn, recordedModel, startAgentKernel } from './agent-api-fixtures.js';

function state(): OperationState {
  return { stepIndex: 0, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
}

const never = new AbortController().signal;

/** Rejects with ToolStepError whose message matches `message`. */
async function stepRefused(promise: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ToolStepError, `not a ToolStepError: ${String(err)}`);
    assert.equal(err.type, 'tool_step_invalid');
    assert.match(err.message, message);
    return true;
  });
}

/** Durable tools (document 001 `durable: true`, `ToolStep`): step.do recorded once, replayed for a re-executed call. */
describe('agent API: durable tools (step.do)', () => {
  let fx: RuntimeFixture | undefined;
  afterEach(async () => {
    await fx?.cleanup();
    fx = undefined;
  });

  it('a durable tool run by the model records each step under its call before do resolves; the model sees the result', async () => {
    const seenInside: unknown[] = [];
    let probe: ((toolCallId: string) => Promise<unknown>) | undefined;
    const Billing = () => {
      useModel(recordedModel([agentToolTurn('charge', { cents: 500 }), { text: 'charged' }]));
      useTool(defineTool({
        name: 'charge',
        description: 'Charges',
        durable: true,
        run: async ({ step, toolCallId }) => {
          const charge = await step.do('charge', () => ({ id: 'ch_1', cents: 500 }));
          // The record is in the store before do resolved.
          seenInside.push(await probe!(toolCallId));
          const receipt = await step.do(`receipt:${charge.id}`, () => 'sent');
          return { charge, receipt, toolCallId: toolCallId.length > 0 };
        },
      }));
    };
    fx = await startAgentKernel([Billing as Agent], { store: 'sqlite' });
    const store = fx.kernel.store;
    // The tool may run before execAgent resolves: the operation is found in the store.
    probe = async (toolCallId) => {
      const [op] = await store.listOperations();
      return (await store.listToolSteps(op!.id, toolCallId)).map((s) => s.name);
    };
    const handle = await fx.kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: 'Billing', prompt: 'go' });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
    assert.deepEqual(seenInside, [['charge']], tool.content);
    assert.deepEqual(JSON.parse(tool.content), { charge: { id: 'ch_1', cents: 500 }, receipt: 'sent', toolCallId: true });
    const steps = await store.listToolSteps(final.id, tool.toolCallId!);
    assert.deepEqual(steps.map((s) => [s.name, s.value]), [['charge', { id: 'ch_1', cents: 500 }], ['receipt:ch_1', 'sent']]);
  });

  describe('replay of a re-executed call (real SQLite store)', () => {
    let dir: string;
    let store: SqliteStore;
    beforeEach(async () => {
      dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-durable-')));
      store = new SqliteStore({ path: path.join(dir, 'steps.db'), backgroundCheckpoints: false });
      await store.migrate();
      await store.createOperation({ id: 'op-d', agentId: 'a', agent: { id: 'a' }, context: {}, state: state() }, [], []);
    });
    afterEach(async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('the second execution of a call returns the recorded values without running their fn, and runs the steps that were not recorded', async () => {
      const ran: string[] = [];
      let crash = true;
      const tool = defineTool({
        name: 'ship',
        description: 'Ships',
        durable: true,
        run: async ({ step }) => {
          const label = await step.do('label', () => { ran.push('label'); return { tracking: `T-${ran.length}` }; });
          if (crash) throw new Error('the process died here');
          const pickup = await step.do('pickup', () => { ran.push('pickup'); return 'booked'; });
          return { label, pickup };
        },
      });
      const journal = () => storeToolStepJournal(store, 'op-d', 'call-1');
      await assert.rejects(runAgentTool(tool, {}, 'call-1', never, { steps: journal() }), /the process died here/);
      crash = false;
      const second = await runAgentTool(tool, {}, 'call-1', never, { steps: journal() });
      assert.deepEqual(second.data, { label: { tracking: 'T-1' }, pickup: 'booked' });
      assert.deepEqual(ran, ['label', 'pickup'], "label's fn ran once, pickup's once");
      const third = await runAgentTool(tool, {}, 'call-1', never, { steps: journal() });
      assert.deepEqual(third.data, second.data);
      assert.deepEqual(ran, ['label', 'pickup'], 'a fully recorded call replays everything');
      // Another call of the same tool has steps of its own.
      await runAgentTool(tool, {}, 'call-2', never, { steps: storeToolStepJournal(store, 'op-d', 'call-2') });
      assert.deepEqual(ran, ['label', 'pickup', 'label', 'pickup']);
    });

    it('a record that another executor landed first wins: this execution returns that value', async () => {
      await store.recordToolStep({ operationId: 'op-d', toolCallId: 'call-1', name: 'n', value: 'theirs' });
      const journal = storeToolStepJournal(store, 'op-d', 'call-1');
      // Loaded before the other record: the journal's own record meets it.
      const racing = { load: async () => new Map(), record: journal.record };
      const { step } = openToolStep('t', racing);
      assert.equal(await step.do('n', () => 'mine'), 'theirs');
    });

    it('two connections (two processes on one file) racing to record one step: one record, both get its value', async () => {
      const other = new SqliteStore({ path: path.join(dir, 'steps.db'), backgroundCheckpoints: false });
      await other.migrate();
      try {
        const [mine, theirs] = await Promise.all([
          openToolStep('t', storeToolStepJournal(store, 'op-d', 'call-9')).step.do('pay', () => 'from-mine'),
          openToolStep('t', storeToolStepJournal(other, 'op-d', 'call-9')).step.do('pay', () => 'from-theirs'),
        ]);
        assert.equal(mine, theirs);
        assert.equal((await store.listToolSteps('op-d', 'call-9')).length, 1);
      } finally {
        await other.close();
      }
    });

    it('a replayed value is a fresh copy each time: the tool changing it changes nothing recorded', async () => {
      await store.recordToolStep({ operationId: 'op-d', toolCallId: 'c', name: 'obj', value: { list: [1] } });
      const { step } = openToolStep('t', storeToolStepJournal(store, 'op-d', 'c'));
      const value = await step.do('obj', () => ({ list: [] as number[] }));
      value.list.push(2);
      assert.deepEqual((await store.listToolSteps('op-d', 'c'))[0]!.value, { list: [1] });
    });
  });

  describe('attacks: hostile step names and values, misuse', () => {
    const names: Array<[string, unknown, RegExp]> = [
      ['an empty name', '', /empty step name/],
      ['a blank name', '  \t ', /control characters|empty step name/],
      ['a huge name', 'n'.repeat(MAX_STEP_NAME + 1), new RegExp(`a step name of ${MAX_STEP_NAME + 1} characters \\(at most ${MAX_STEP_NAME}\\)`)],
      ['a lone surrogate', 'step-\uD800', /not well-formed Unicode/],
      ['a NUL character', 'a\u0000b', /control characters/],
      ['a newline (log forging)', 'a\nINFO fake line', /control characters/],
      ['a non-string name', 42, /with a number name/],
    ];
    for (const [what, name, message] of names) {
      it(`refuses ${what} before running fn, recording nothing`, async () => {
        let ran = false;
        const recorded: string[] = [];
        const { step } = openToolStep('hostile', { load: async () => new Map(), record: async (n, value) => { recorded.push(n); return value; } });
        await stepRefused(step.do(name as string, () => { ran = true; return 1; }), message);
        assert.deepEqual([ran, recorded], [false, []]);
      });
    }

    it('a huge name is cut in the message, not echoed whole', async () => {
      const { step } = openToolStep('hostile');
      await assert.rejects(step.do('z'.repeat(100_000), () => 1), (err: unknown) => err instanceof Error && err.message.length < 400);
    });

    it('odd but well-formed unicode names are distinct steps, each recorded once (NFC and NFD apart, emoji, right-to-left override)', async () => {
      const records = new Map<string, unknown>();
      const { step } = openToolStep('t', { load: async () => new Map(), record: async (n, value) => { records.set(n, value); return value; } });
      const odd = ['caf\u00e9', 'cafe\u0301', '\u{1F680}:launch', '\u202Eevil', '\u0130stanbul'];
      for (const [i, name] of odd.entries()) assert.equal(await step.do(name, () => i), i);
      assert.deepEqual([...records.keys()], odd);
    });

    const values: Array<[string, () => unknown, RegExp]> = [
      ['undefined', () => undefined, /returned undefined, which JSON cannot carry/],
      ['a function', () => ({ f: () => 1 }), /"value\.f" is not a JSON value: it holds a function/],
      ['NaN', () => Number.NaN, /it holds the number NaN/],
      ['a BigInt', () => 1n, /it holds a bigint/],
      ['a Map', () => new Map([[1, 2]]), /it holds a Map instance/],
      ['a cycle', () => { const a: unknown[] = []; a.push(a); return a; }, /it holds a cycle/],
      ['a value past the size limit', () => 'x'.repeat(MAX_STEP_VALUE_CHARS), /characters of JSON \(at most 1048576\): record a pointer/],
    ];
    for (const [what, fn, message] of values) {
      it(`a step value holding ${what} throws and is not recorded`, async () => {
        const recorded: string[] = [];
        const { step } = openToolStep('t', { load: async () => new Map(), record: async (n, value) => { recorded.push(n); return value; } });
        await stepRefused(step.do('s', fn), message);
        assert.deepEqual(recorded, []);
      });
    }

    it('a name reused in one call throws, also while its first use is still running (concurrent do): fn runs once, one record', async () => {
      let runs = 0;
      const recorded: string[] = [];
      const { step } = openToolStep('t', { load: async () => new Map(), record: async (n, value) => { recorded.push(n); return value; } });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const first = step.do('same', async () => { runs += 1; await gate; return 'first'; });
      await stepRefused(step.do('same', () => { runs += 1; return 'second'; }), /used the step name "same" twice in one call/);
      release();
      assert.equal(await first, 'first');
      await stepRefused(step.do('same', () => 'third'), /twice in one call/);
      assert.deepEqual([runs, recorded], [1, ['same']]);
    });

    it('step.do after the tool returned throws; an fn still running when it returned is not recorded', async () => {
      let kept: ToolStep | undefined;
      let release!: () => void;
      let pending: Promise<unknown> | undefined;
      const recorded: string[] = [];
      const journal = { load: async () => new Map(), record: async (n: string, value: unknown) => { recorded.push(n); return value; } };
      const tool = defineTool({
        name: 'leaky',
        description: 'Keeps its step',
        durable: true,
        run: ({ step }) => {
          kept = step;
          pending = step.do('slow', () => new Promise((resolve) => (release = () => resolve('late'))));
          return 'returned';
        },
      });
      await runAgentTool(tool, {}, 'c', never, { steps: journal });
      await stepRefused(kept!.do('after', () => 1), /called step\.do\("after"\) after it returned/);
      release();
      await stepRefused(pending!, /step "slow" finished after the tool returned; its value was not recorded/);
      assert.deepEqual(recorded, []);
    });

    it('a rejecting fn passes its error through and records nothing; the name stays used in this call', async () => {
      const recorded: string[] = [];
      const { step } = openToolStep('t', { load: async () => new Map(), record: async (n, value) => { recorded.push(n); return value; } });
      await assert.rejects(step.do('flaky', () => Promise.reject(new Error('upstream 503'))), /upstream 503/);
      assert.deepEqual(recorded, []);
      await stepRefused(step.do('flaky', () => 1), /twice/);
    });

    it('a misused step the tool does not catch is a tool error the model sees; the operation goes on', async () => {
      const Misuse = () => {
        useModel(recordedModel([agentToolTurn('twice'), { text: 'recovered' }]));
        useTool({ name: 'twice', description: 'Twice', durable: true, run: async ({ step }) => { await step.do('a', () => 1); return step.do('a', () => 2); } });
      };
      fx = await startAgentKernel([Misuse as Agent]);
      const handle = await fx.kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: 'Misuse', prompt: 'go' });
      const final = await handle.completed();
      assert.deepEqual([final.status, final.state.lastText], ['done', 'recovered']);
      const tool = (await fx.kernel.listMessages(final.id)).find((m) => m.role === 'tool')!;
      assert.equal(tool.toolResult?.success, false);
      assert.match(tool.content, /Tool "twice" used the step name "a" twice in one call/);
      assert.deepEqual((await fx.kernel.store.listToolSteps(final.id, tool.toolCallId!)).map((s) => s.name), ['a']);
    });

    it('a model reusing one tool-call id for two calls does not replay the first call\'s steps into the second (the runtime mints call ids)', async () => {
      let runs = 0;
      const Reuse = () => {
        useModel(recordedModel([agentToolTurn('mint', {}, 'same-id'), agentToolTurn('mint', {}, 'same-id'), { text: 'ok' }]));
        useTool({ name: 'mint', description: 'Mints', durable: true, run: ({ step }) => step.do('mint', () => ++runs) });
      };
      fx = await startAgentKernel([Reuse as Agent]);
      const handle = await fx.kernel.execAgent({ agentSource: AGENT_FUNCTION_SOURCE_ID, agentId: 'Reuse', prompt: 'go' });
      const final = await handle.completed();
      const tools = (await fx.kernel.listMessages(final.id)).filter((m) => m.role === 'tool');
      assert.deepEqual(tools.map((t) => t.content), ['1', '2'], 'each call ran its own step');
      assert.notEqual(tools[0]!.toolCallId, tools[1]!.toolCallId);
    });

    it('without a journal (a standalone run) steps follow the same rules and record nothing', async () => {
      const tool = defineTool({ name: 'solo', description: 'Solo', durable: true, run: async ({ step }) => [await step.do('a', () => 1), await step.do('b', () => ({ x: 2 }))] });
      assert.deepEqual((await runAgentTool(tool, {}, 'c', never)).data, [1, { x: 2 }]);
      const reuse = defineTool({ name: 'solo2', description: 'Solo', durable: true, run: async ({ step }) => { await step.do('a', () => 1); return step.do('a', () => 1); } });
      await stepRefused(runAgentTool(reuse, {}, 'c', never), /twice/);
    });
  });
});
