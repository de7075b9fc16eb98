import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ToolSources } from '../../../kernel/tokens.js';
import type { ToolSource } from '../../../kernel/tools.js';
import type { OperationRecord } from '../../../kernel/store.js';
import { callIdOf } from '../../helpers/runtime-fixtures.js';
import { eventually } from '../policies/harness.js';

/**
 * Review of issue 9 (a failing environment): a deferred completion (a
 * sub-agent finishing, or kernel.completeToolCall) that arrives while the
 * parent's loop is running another call of the same turn. publishDeferred
 * copies the in-memory state, writes it without a compare-and-swap, and the
 * loop's step commit (also without one) writes its own older copy back: the
 * deferred id comes back and the operation never finishes. Now a completion
 * waits for the step in progress (steps, completions and decisions of one
 * operation take turns), so each reads what the other committed.
 */
describe('review: a deferred completion racing the step that runs the next call', function () {
  this.timeout(20000);
  let dir: string;
  let kernel: Kernel | undefined;

  afterEach(async () => {
    await kernel?.stop().catch(() => undefined);
    kernel = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  function tools() {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const runs: string[] = [];
    let slowStarted = false;
    const source: ToolSource = {
      id: 'race-tools',
      list: () => [
        { identifier: 'async', apiName: 'job', description: 'answers later', parameters: { type: 'object' }, toolSource: 'race' },
        { identifier: 'slow', apiName: 'run', description: 'takes a while', parameters: { type: 'object' }, toolSource: 'race' },
      ],
      execute: async (call) => {
        runs.push(`${call.identifier}/${call.apiName}`);
        if (call.identifier === 'async') return { deferred: true };
        slowStarted = true;
        await gate;
        return 'slow done';
      },
    };
    const plugin = definePlugin({ id: 'race-tools', provides: [ToolSources], register: (ctx) => ctx.bindValue(ToolSources, source) });
    return { plugin, runs, release: () => release(), started: () => slowStarted };
  }

  async function boot(store: 'memory' | 'sqlite', plugin: ReturnType<typeof tools>['plugin']): Promise<Kernel> {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-review-race-')));
    const config = loadConfig({ cwd: dir, env: store === 'memory' ? { HOOKGATE_STORE__DRIVER: 'memory' } : {} });
    kernel = createKernel({ config, plugins: [plugin], env: {} });
    await kernel.start();
    return kernel;
  }

  const within = <T>(p: Promise<T>, ms: number, what: string) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`never happened: ${what}`)), ms))]);

  for (const store of ['memory', 'sqlite'] as const) {
    it(`${store}: kernel.completeToolCall while the next call of the turn runs; the operation still finishes, each call ran once`, async () => {
      const t = tools();
      const k = await boot(store, t.plugin);
      k.agents.define({
        id: 'racer',
        tools: ['async/*', 'slow/*'],
        model: {
          provider: 'scripted',
          turns: [
            { toolCalls: [{ id: 'job-1', identifier: 'async', apiName: 'job', args: {} }, { id: 'slow-1', identifier: 'slow', apiName: 'run', args: {} }] },
            { text: 'all done' },
          ],
        },
      });
      const handle = await k.execAgent({ agentId: 'racer', prompt: 'go' });
      await eventually(() => t.started(), 'slow/run started');
      const jobId = callIdOf(await k.listMessages(handle.operationId), 'job-1');
      // Arrives while slow/run runs; it is published once that step has committed.
      const completion = k.completeToolCall(handle.operationId, jobId, 'job result');
      t.release();
      assert.deepEqual(await within(completion, 3000, 'the completion was published'), { published: true });
      let record: OperationRecord;
      try {
        record = await within(handle.completed(), 3000, 'the operation finished');
      } catch (err) {
        const stuck = await k.getOperation(handle.operationId);
        assert.fail(`${(err as Error).message}; stuck as ${stuck?.status} with deferredToolCallIds ${JSON.stringify(stuck?.state.deferredToolCallIds)}`);
      }
      assert.equal(record.status, 'done');
      assert.deepEqual(t.runs, ['async/job', 'slow/run']);
      const toolMessages = (await k.listMessages(handle.operationId)).filter((m) => m.role === 'tool');
      assert.deepEqual(toolMessages.map((m) => m.content).sort(), ['job result', 'slow done']);
    });
  }

  it('memory, a slow store write: a completion whose write lands after the next call committed does not bring that call back; it runs once', async () => {
    const t = tools();
    const k = await boot('memory', t.plugin);
    // A failing environment: the store takes a while to write the published result (a remote database under load).
    const store = k.store as unknown as { publishToolResult: (...a: unknown[]) => Promise<boolean> };
    const original = store.publishToolResult.bind(store);
    let releaseWrite: () => void = () => undefined;
    const writeGate = new Promise<void>((r) => (releaseWrite = r));
    let writing = false;
    store.publishToolResult = async (...a: unknown[]) => {
      writing = true;
      await writeGate;
      return original(...a);
    };
    k.agents.define({
      id: 'racer',
      tools: ['async/*', 'slow/*'],
      model: {
        provider: 'scripted',
        turns: [
          { toolCalls: [{ id: 'job-1', identifier: 'async', apiName: 'job', args: {} }, { id: 'slow-1', identifier: 'slow', apiName: 'run', args: {} }] },
          { text: 'all done' },
        ],
      },
    });
    const handle = await k.execAgent({ agentId: 'racer', prompt: 'go' });
    await eventually(() => t.started(), 'slow/run started');
    const jobId = callIdOf(await k.listMessages(handle.operationId), 'job-1');
    const completion = k.completeToolCall(handle.operationId, jobId, 'job result');
    t.release();
    await eventually(async () => (await k.listMessages(handle.operationId)).some((m) => m.role === 'tool' && m.content === 'slow done'), 'slow/run committed');
    await eventually(() => writing, 'the completion is being written, after the step');
    releaseWrite();
    assert.deepEqual(await completion, { published: true });
    await within(handle.completed(), 3000, 'the operation finished').catch(() => undefined);
    assert.deepEqual(t.runs, ['async/job', 'slow/run'], `slow/run ran ${t.runs.filter((r) => r === 'slow/run').length} times`);
    const record = await k.getOperation(handle.operationId);
    assert.equal(record?.status, 'done');
  });

  it('a sub-agent that finishes while its parent runs the next call of the same turn hands its answer over and the parent finishes', async () => {
    const t = tools();
    const k = await boot('memory', t.plugin);
    k.agents.define({ id: 'helper', model: { provider: 'scripted', turns: [{ text: 'helper answer' }] } });
    k.agents.define({
      id: 'lead',
      tools: ['slow/*'],
      subagents: ['helper'],
      model: {
        provider: 'scripted',
        turns: [
          { toolCalls: [{ id: 'sub-1', identifier: 'agents', apiName: 'helper', args: { instruction: 'help' } }, { id: 'slow-1', identifier: 'slow', apiName: 'run', args: {} }] },
          { text: 'all done' },
        ],
      },
    });
    const handle = await k.execAgent({ agentId: 'lead', prompt: 'go' });
    await eventually(() => t.started(), 'slow/run started');
    const [child] = await k.listOperations({ parentOperationId: handle.operationId });
    assert.ok(child);
    await within(k.waitForOperation(child.id, 'terminal'), 3000, 'the child finished');
    t.release();
    await eventually(async () => (await k.listMessages(handle.operationId)).some((m) => m.role === 'tool' && m.content === 'helper answer'), 'the child answer was published');
    let record: OperationRecord;
    try {
      record = await within(handle.completed(), 3000, 'the parent finished');
    } catch (err) {
      const stuck = await k.getOperation(handle.operationId);
      assert.fail(`${(err as Error).message}; parent stuck as ${stuck?.status} with deferredToolCallIds ${JSON.stringify(stuck?.state.deferredToolCallIds)}`);
    }
    assert.equal(record.status, 'done');
    assert.deepEqual(t.runs, ['slow/run']);
  });
});
