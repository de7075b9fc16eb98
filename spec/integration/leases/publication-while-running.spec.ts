import assert from 'node:assert/strict';
import type { Kernel } from '../../../kernel/kernel.js';
import type { LogRecord } from '../../../kernel/logger.js';
import type { ToolDefinition, ToolSource } from '../../../kernel/tools.js';
import { scripted, until, useKernelsOnOneFile } from '../../helpers/runtime-fixtures.js';

/** `t/later` answers later (deferred); `t/slow` answers once the spec lets it (`release`), counting its runs. */
class Tools implements ToolSource {
  readonly id = 'publication-spec-tools';
  slowRuns = 0;
  private gate!: () => void;
  readonly entered: Promise<void>;
  private enter!: () => void;
  constructor() {
    this.entered = new Promise((resolve) => (this.enter = resolve));
  }
  list(): ToolDefinition[] {
    const parameters = { type: 'object', properties: {}, additionalProperties: true };
    return [
      { identifier: 't', apiName: 'later', description: 'answers later', parameters, toolSource: 'spec' },
      { identifier: 't', apiName: 'slow', description: 'waits for the spec', parameters, toolSource: 'spec' },
    ];
  }
  release(): void {
    this.gate();
  }
  async execute(call: { apiName: string }): Promise<string | { deferred: true }> {
    if (call.apiName === 'later') return { deferred: true };
    this.slowRuns += 1;
    const released = new Promise<void>((resolve) => (this.gate = resolve));
    this.enter();
    await released;
    return 'slow result';
  }
}

const STALE_LOG = 'operation changed by another writer; this process stops running it';

/**
 * Issue 11 item 2, the deferred completion from another process: while
 * kernel A runs an operation (it holds the lease, a slow tool is in flight),
 * kernel B publishes a deferred result into it. The publication is a
 * compare-and-swap of its own, so A's next commit meets a moved version; A
 * rebases that commit on the publication instead of stopping, so the slow
 * tool runs once, both results are stored once, and A finishes the run.
 */
// Once per store both kinds of process sharing run on: one SQLite file, one PostgreSQL schema.
for (const store of ['sqlite', 'postgres'] as const) describe(`integration: a deferred result published by another process while the operation runs (${store})`, function () {
  this.timeout(30_000);
  const kernels = useKernelsOnOneFile('publication', store);

  async function start(tools: Tools, logs: LogRecord[]): Promise<Kernel> {
    const kernel = await kernels.start(tools, logs);
    kernel.agents.define({
      id: 'both',
      tools: ['t/*'],
      model: scripted([{ toolCalls: [{ identifier: 't', apiName: 'later', args: {} }, { identifier: 't', apiName: 'slow', args: {} }] }, { text: 'done with both' }]),
    });
    return kernel;
  }

  it('the runner rebases its commit on the publication: the slow tool runs once, each result is stored once, the run finishes', async () => {
    const toolsA = new Tools();
    const logsA: LogRecord[] = [];
    const a = await start(toolsA, logsA);
    const handle = await a.execAgent({ agentId: 'both', prompt: 'go' });
    await toolsA.entered;

    const toolsB = new Tools();
    const logsB: LogRecord[] = [];
    const b = await start(toolsB, logsB);
    const placeholder = (await b.listMessages(handle.operationId)).find((m) => m.role === 'tool' && m.content === '');
    assert.ok(placeholder?.toolCallId, 'the deferred call has its empty placeholder');
    assert.deepEqual(await b.completeToolCall(handle.operationId, placeholder.toolCallId, 'LATE RESULT'), { published: true });
    // A second, duplicate completion changes nothing.
    assert.deepEqual(await b.completeToolCall(handle.operationId, placeholder.toolCallId, 'AGAIN'), { published: false });

    toolsA.release();
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'done with both');
    assert.deepEqual(final.state.deferredToolCallIds ?? [], []);
    assert.equal(toolsA.slowRuns, 1);
    assert.equal(toolsB.slowRuns, 0);
    const tools = (await a.listMessages(handle.operationId)).filter((m) => m.role === 'tool');
    assert.deepEqual(tools.map((m) => m.content).sort(), ['LATE RESULT', 'slow result']);
    assert.deepEqual([...logsA.map((l) => ['A', l.msg]), ...logsB.map((l) => ['B', l.msg])].filter(([, m]) => m === STALE_LOG), [], 'nobody stopped as a stale writer');
    // B waits on the store for the outcome A committed.
    assert.equal((await b.waitForOperation(handle.operationId, 'terminal')).status, 'done');
    const steps = (await a.listSteps(handle.operationId)).map((s) => s.stepIndex);
    assert.equal(new Set(steps).size, steps.length, `no step twice: ${steps.join(',')}`);
  });

  it('the model of the next turn sees the published result', async () => {
    const toolsA = new Tools();
    const a = await start(toolsA, []);
    const handle = await a.execAgent({ agentId: 'both', prompt: 'go' });
    await toolsA.entered;
    const b = await start(new Tools(), []);
    const placeholder = (await b.listMessages(handle.operationId)).find((m) => m.role === 'tool' && m.content === '')!;
    await b.completeToolCall(handle.operationId, placeholder.toolCallId!, 'SEEN BY THE MODEL');
    toolsA.release();
    await until(async () => (await a.getOperation(handle.operationId))?.status === 'done', 10_000);
    // A's in-memory conversation took the stored result: the final assistant turn came after both results.
    const messages = await a.listMessages(handle.operationId);
    assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'tool', 'tool', 'assistant']);
    assert.equal(messages.find((m) => m.toolCallId === placeholder.toolCallId)!.content, 'SEEN BY THE MODEL');
  });
});
