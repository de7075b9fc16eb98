import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import type { Kernel } from '../../../kernel/kernel.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import type { OperationEvent } from '../../../kernel/runtime/operation-events.js';
import { definePlugin } from '../../../kernel/plugin.js';
import { ToolSources } from '../../../kernel/tokens.js';
import type { ToolDefinition, ToolSource } from '../../../kernel/tools.js';
import { callIdOf, hook } from '../../helpers/runtime-fixtures.js';

/** `t/later` answers later (deferred); `t/ok` needs approval and counts its runs. */
class Tools implements ToolSource {
  readonly id = 'decision-spec-tools';
  okRuns = 0;
  list(): ToolDefinition[] {
    const parameters = { type: 'object', properties: {}, additionalProperties: true };
    return [
      { identifier: 't', apiName: 'later', description: 'answers later', parameters, toolSource: 'spec' },
      { identifier: 't', apiName: 'ok', description: 'needs approval', parameters, toolSource: 'spec' },
    ];
  }
  async execute(call: { apiName: string }): Promise<string | { deferred: true }> {
    if (call.apiName === 'later') return { deferred: true };
    this.okRuns += 1;
    return 'ok';
  }
}

/**
 * Review of issue 11: a human decision's observers (afterHumanIntervention)
 * now run after the decision's commit, outside the operation's turn. A
 * deferred result published meanwhile, in the same process, finds the
 * operation `running` with no loop and launches one; the decision must not
 * launch a second loop on the same operation when its observers return.
 */
describe('runtime: a deferred completion while a decision is announced', function () {
  this.timeout(20_000);
  let dir: string;
  let kernel: Kernel | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-decision-')));
  });
  afterEach(async () => {
    await kernel?.stop();
    kernel = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('one loop runs the operation: no step twice, the approved tool once, no stale writer, one end', async () => {
    const tools = new Tools();
    const logs: LogRecord[] = [];
    const plugin = definePlugin({ id: 'decision-spec', provides: [ToolSources], register: (ctx) => ctx.bindValue(ToolSources, tools) });
    const k = createKernel({ config: loadConfig({ cwd: dir, env: { HOOKGATE_STORE__DRIVER: 'memory' } }), plugins: [plugin], logger: createLogger({ level: 'debug', sink: (_l, r) => logs.push(r) }), env: {} });
    kernel = k;
    await k.start();
    k.agents.define({
      id: 'both',
      tools: ['t/*'],
      approval: { tools: ['t/ok'] },
      model: {
        provider: 'scripted',
        turns: [
          { toolCalls: [{ id: 'job', identifier: 't', apiName: 'later', args: {} }, { id: 'w', identifier: 't', apiName: 'ok', args: {} }] },
          { text: 'done with both' },
        ],
      },
    });
    // Each loop the runtime launches on an operation keeps its lease once (OperationDriver.keep): counted per operation.
    const driver = (k as unknown as { runtime: { driver: { keep: (id: string, onLost: unknown) => void } } }).runtime.driver;
    const kept = new Map<string, number>();
    const keep = driver.keep.bind(driver);
    driver.keep = (id, onLost) => {
      kept.set(id, (kept.get(id) ?? 0) + 1);
      keep(id, onLost);
    };
    const events: OperationEvent[] = [];
    k.events.on((e) => events.push(e));
    let completion: { published: boolean } | undefined;
    const completeWhileAnnounced = hook('afterHumanIntervention', async (event) => {
      completion = await k.completeToolCall(event.operationId, callIdOf(await k.listMessages(event.operationId), 'job'), 'LATE RESULT');
    });
    const handle = await k.execAgent({ agentId: 'both', prompt: 'go', hooks: [completeWhileAnnounced] });
    assert.equal((await handle.settled()).status, 'waiting_approval');
    await k.approve(handle.operationId);
    const final = await handle.completed();
    // The first run up to the approval, then one loop after the decision (not one per writer that found it running).
    assert.equal(kept.get(handle.operationId), 2, 'loops launched on the operation');
    assert.deepEqual(completion, { published: true });
    assert.equal(final.status, 'done');
    assert.equal(final.state.lastText, 'done with both');
    assert.equal(tools.okRuns, 1);
    const steps = (await k.listSteps(handle.operationId)).map((s) => s.stepIndex);
    assert.equal(new Set(steps).size, steps.length, `no step twice: ${steps.join(',')}`);
    assert.deepEqual(logs.filter((l) => l.level === 'warn' || l.level === 'error').map((l) => l.msg), []);
    assert.equal(events.filter((e) => e.type === 'operation_finished').length, 1);
    const started = events.filter((e) => e.type === 'step_started').map((e) => (e as { stepIndex: number }).stepIndex);
    assert.equal(new Set(started).size, started.length, `no step started twice: ${started.join(',')}`);
  });
});
