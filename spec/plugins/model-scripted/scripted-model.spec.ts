import assert from 'node:assert/strict';
import type { ModelRequest } from '../../../kernel/model.js';
import { ScriptedModel } from '../../../plugins/model-scripted/scripted-model.js';

function request(turnIndex: number, signal: AbortSignal, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: '', purpose: 'turn', messages: [{ role: 'user', content: 'hi' }], tools: [], signal, operationId: 'op-1', turnIndex, ...extra };
}

/** The scripted model: deterministic turns by index, scripted errors, delays and summaries. */
describe('ScriptedModel', () => {
  it('plays turns by turn index, with generated tool call ids and the scripted usage', async () => {
    const model = new ScriptedModel({ turns: [{ toolCalls: [{ identifier: 'fs', apiName: 'readFile', args: { path: 'a' } }] }, { text: 'bye', usage: { promptTokens: 3, completionTokens: 2 } }] });
    const signal = new AbortController().signal;
    const first = await model.complete(request(0, signal));
    assert.deepEqual(first.toolCalls, [{ id: 'call_0_0', identifier: 'fs', apiName: 'readFile', args: { path: 'a' } }]);
    assert.equal(first.finishReason, 'tool_calls');
    const second = await model.complete(request(1, signal));
    assert.equal(second.text, 'bye');
    assert.deepEqual(second.usage, { promptTokens: 3, completionTokens: 2, totalTokens: 5 });
  });

  it('fails with MODEL_FAILED past the last turn, unless onEnd is repeat-last', async () => {
    const signal = new AbortController().signal;
    await assert.rejects(new ScriptedModel({ turns: [{ text: 'one' }] }).complete(request(1, signal)), { code: 'MODEL_FAILED' });
    const repeat = await new ScriptedModel({ turns: [{ text: 'one' }], onEnd: 'repeat-last' }).complete(request(5, signal));
    assert.equal(repeat.text, 'one');
  });

  it('a delayed turn rejects promptly when the signal aborts', async () => {
    const ac = new AbortController();
    // Ten minutes: waiting out the delay would hit mocha's timeout long before the turn could answer.
    const model = new ScriptedModel({ turns: [{ text: 'late', delayMs: 600_000 }] });
    const pending = model.complete(request(0, ac.signal));
    setTimeout(() => ac.abort(new Error('stop')), 10);
    await assert.rejects(pending, /stop/);
  });

  it('many delayed turns on one operation signal leave no abort listeners behind (no leak warning)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const ac = new AbortController();
      const model = new ScriptedModel({ turns: [{ text: 'x', delayMs: 1 }], onEnd: 'repeat-last' });
      for (let i = 0; i < 15; i++) await model.complete(request(i, ac.signal));
      await new Promise((r) => setTimeout(r, 10));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings.filter((n) => n === 'MaxListenersExceededWarning'), []);
  });

  it('summaries: scripted text, scripted error, else a deterministic summary', async () => {
    const signal = new AbortController().signal;
    const model = new ScriptedModel({ summaries: [{ text: 'S1' }, { error: 'down' }] });
    assert.equal((await model.complete(request(0, signal, { purpose: 'summarize' }))).text, 'S1');
    await assert.rejects(model.complete(request(1, signal, { purpose: 'summarize' })), /down/);
    assert.match((await model.complete(request(2, signal, { purpose: 'summarize' }))).text, /^Summary of the earlier conversation/);
  });

  it('reads the script from the agent file\'s model block and rejects an invalid one with AGENT_INVALID', async () => {
    const signal = new AbortController().signal;
    const model = new ScriptedModel();
    const ok = await model.complete(request(0, signal, { modelOptions: { provider: 'scripted', turns: [{ text: 'from file' }] } }));
    assert.equal(ok.text, 'from file');
    await assert.rejects(model.complete(request(0, signal, { modelOptions: { provider: 'scripted', turns: [{ txet: 'typo' }] } })), { code: 'AGENT_INVALID' });
  });
});
