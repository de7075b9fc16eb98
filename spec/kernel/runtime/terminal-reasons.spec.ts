import assert from 'node:assert/strict';
import { recordHooks, scripted, startKernel, toolTurn, until, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** Every terminal reason of issue 3 item 1: done, error, interrupted, max_steps, cost_limit. */
describe('runtime: terminal reasons', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  it('done: the model answers without tool calls', async () => {
    fx.kernel.agents.define({ id: 'a', model: scripted([{ text: 'hello' }]) });
    const rec = recordHooks(['onComplete', 'onError']);
    const final = await (await fx.kernel.execAgent({ agentId: 'a', prompt: 'hi', hooks: rec.hooks })).completed();
    assert.equal(final.status, 'done');
    assert.equal(final.reason, 'done');
    assert.equal(final.state.lastText, 'hello');
    assert.deepEqual(rec.sequence(), ['onComplete']);
    assert.equal(rec.of('onComplete')[0]!.reason, 'done');
  });

  it('error: a failing model turn ends the operation with the error stored, after onError', async () => {
    fx.kernel.agents.define({ id: 'a', tools: ['test/*'], model: scripted([toolTurn('test', 'echo'), { error: 'rate limited' }]) });
    const rec = recordHooks(['onComplete', 'onError']);
    const final = await (await fx.kernel.execAgent({ agentId: 'a', prompt: 'hi', hooks: rec.hooks })).completed();
    assert.equal(final.status, 'error');
    assert.equal(final.reason, 'error');
    assert.match(final.error!.message, /rate limited/);
    assert.equal(final.error!.code, 'MODEL_FAILED');
    assert.deepEqual(rec.sequence(), ['onError', 'onComplete']);
    assert.equal(rec.of('onComplete')[0]!.reason, 'error');
    assert.equal(fx.tools.calls.length, 1, 'the step before the failure ran');
  });

  it('error: an agent naming a model provider nobody provides fails with MODEL_NOT_FOUND', async () => {
    fx.kernel.agents.define({ id: 'a', model: { provider: 'nobody' } });
    const final = await (await fx.kernel.execAgent({ agentId: 'a', prompt: 'hi' })).completed();
    assert.equal(final.reason, 'error');
    assert.equal(final.error!.code, 'MODEL_NOT_FOUND');
  });

  it('interrupted: kernel.abort during a slow model turn ends the run promptly, without onError', async () => {
    // Ten minutes: waiting for the turn would hit mocha's timeout; only a cancelled turn lets the run end.
    fx.kernel.agents.define({ id: 'slow', model: scripted([{ text: 'too late', delayMs: 600_000 }]) });
    const rec = recordHooks(['beforeStep', 'afterStep', 'onComplete', 'onError']);
    const handle = await fx.kernel.execAgent({ agentId: 'slow', prompt: 'hi', hooks: rec.hooks });
    await until(() => rec.of('beforeStep').length === 1);
    await fx.kernel.abort(handle.operationId);
    const final = await handle.completed();
    assert.equal(final.status, 'interrupted');
    assert.equal(final.reason, 'interrupted');
    assert.equal(final.state.lastText, undefined);
    assert.deepEqual(rec.sequence(), ['beforeStep', 'onComplete']);
    assert.equal(rec.of('onComplete')[0]!.reason, 'interrupted');
    assert.equal((await fx.kernel.getOperation(handle.operationId))?.status, 'interrupted');
  });

  it('abort of a finished operation changes nothing', async () => {
    fx.kernel.agents.define({ id: 'a', model: scripted([{ text: 'hello' }]) });
    const handle = await fx.kernel.execAgent({ agentId: 'a', prompt: 'hi' });
    await handle.completed();
    await fx.kernel.abort(handle.operationId);
    assert.equal((await fx.kernel.getOperation(handle.operationId))?.reason, 'done');
  });

  it('max_steps: the run stops after limits.maxSteps steps', async () => {
    fx.kernel.agents.define({
      id: 'looper',
      tools: ['test/*'],
      limits: { maxSteps: 5 },
      model: { provider: 'scripted', turns: [toolTurn('test', 'echo')], onEnd: 'repeat-last' },
    });
    const rec = recordHooks(['onComplete']);
    const handle = await fx.kernel.execAgent({ agentId: 'looper', prompt: 'hi', hooks: rec.hooks });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal(final.reason, 'max_steps');
    assert.equal(final.state.stepIndex, 5);
    assert.equal((await fx.kernel.listSteps(handle.operationId)).length, 5);
    assert.equal(fx.tools.calls.length, 2);
    assert.equal(rec.of('onComplete')[0]!.reason, 'max_steps');
  });

  it('cost_limit: the run stops once the token total reaches limits.maxTotalTokens', async () => {
    fx.kernel.agents.define({
      id: 'spender',
      tools: ['test/*'],
      limits: { maxTotalTokens: 100 },
      model: { provider: 'scripted', turns: [{ ...toolTurn('test', 'echo'), usage: { promptTokens: 50, completionTokens: 10 } }], onEnd: 'repeat-last' },
    });
    const rec = recordHooks(['onComplete', 'afterStep']);
    const final = await (await fx.kernel.execAgent({ agentId: 'spender', prompt: 'hi', hooks: rec.hooks })).completed();
    assert.equal(final.reason, 'cost_limit');
    assert.equal(final.state.usage.totalTokens, 120);
    assert.equal(fx.tools.calls.length, 1, 'no tool runs after the budget is spent');
    assert.equal(rec.of('onComplete')[0]!.reason, 'cost_limit');
    assert.equal(rec.of('onComplete')[0]!.totalUsage.totalTokens, 120);
  });

  it('cost_limit: limits.maxCost with model pricing', async () => {
    fx.kernel.agents.define({
      id: 'priced',
      tools: ['test/*'],
      limits: { maxCost: 0.01 },
      model: {
        provider: 'scripted',
        pricing: { inputPerMillion: 1000, outputPerMillion: 1000 },
        turns: [{ ...toolTurn('test', 'echo'), usage: { promptTokens: 8, completionTokens: 2 } }],
        onEnd: 'repeat-last',
      },
    });
    const final = await (await fx.kernel.execAgent({ agentId: 'priced', prompt: 'hi' })).completed();
    assert.equal(final.reason, 'cost_limit');
    assert.ok(Math.abs(final.state.usage.cost - 0.01) < 1e-9, `cost ${final.state.usage.cost}`);
    assert.equal(final.state.usage.totalTokens, 10);
  });

  it('settled() and completed() resolve with the record; a finished operation resolves at once', async () => {
    fx.kernel.agents.define({ id: 'a', model: scripted([{ text: 'hello' }]) });
    const handle = await fx.kernel.execAgent({ agentId: 'a', prompt: 'hi' });
    const [settled, completed] = await Promise.all([handle.settled(), handle.completed()]);
    assert.equal(settled.status, 'done');
    assert.equal(completed.id, handle.operationId);
    assert.equal((await handle.completed()).status, 'done');
  });

  it('waiting on an unknown operation rejects with OPERATION_NOT_FOUND', async () => {
    await assert.rejects(fx.kernel.waitForOperation('op_missing'), { code: 'OPERATION_NOT_FOUND' });
  });
});
