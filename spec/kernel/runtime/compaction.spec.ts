import assert from 'node:assert/strict';
import { nativeIdOf, recordHooks, scripted, startKernel, toolTurn, type RuntimeFixture } from '../../helpers/runtime-fixtures.js';

/** Compaction past the token threshold, and its failure path (issue 3 item 7). */
describe('runtime: compaction', () => {
  let fx: RuntimeFixture;

  beforeEach(async () => {
    fx = await startKernel();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  /** Two tool rounds with large arguments, then an answer; the second round pushes the context past the threshold. */
  async function run(summaries: unknown[], compaction: Record<string, number> = { thresholdTokens: 10, keepRecent: 2 }) {
    fx.kernel.agents.define({
      id: 'chatty',
      tools: ['test/*'],
      compaction,
      model: scripted(
        [toolTurn('test', 'echo', { text: 'x'.repeat(200) }, 'c1'), toolTurn('test', 'echo', { text: 'y'.repeat(200) }, 'c2'), { text: 'finished' }],
        { summaries, provider: 'recorded' },
      ),
    });
    const rec = recordHooks();
    const handle = await fx.kernel.execAgent({ agentId: 'chatty', prompt: 'ORIGINAL PROMPT', hooks: rec.hooks });
    const final = await handle.completed();
    const requests = fx.model.requests.filter((r) => r.operationId === handle.operationId);
    return { rec, final, handle, requests };
  }

  it('a summary replaces the older messages; listMessages excludes compacted messages by default', async () => {
    const { handle, final } = await run([{ text: 'SUMMARY: the user asked for echoes' }]);
    assert.equal(final.status, 'done');
    const active = await fx.kernel.listMessages(handle.operationId);
    assert.deepEqual(active.map((m) => m.role).sort(), ['assistant', 'assistant', 'summary', 'tool']);
    assert.equal(active.find((m) => m.role === 'summary')!.content, 'SUMMARY: the user asked for echoes');
    assert.equal(active.some((m) => m.content === 'ORIGINAL PROMPT'), false);
    const all = await fx.kernel.listMessages(handle.operationId, { includeCompacted: true });
    assert.equal(all.length, 7);
    const summaryId = active.find((m) => m.role === 'summary')!.id;
    const compacted = all.filter((m) => m.compactedInto !== undefined);
    assert.deepEqual(compacted.map((m) => m.role), ['user', 'assistant', 'tool']);
    assert.ok(compacted.every((m) => m.compactedInto === summaryId));
  });

  it('the summarizing call sees the older messages, and the next turn sees the summary instead of them', async () => {
    const { requests } = await run([{ text: 'SUMMARY-TEXT' }]);
    assert.deepEqual(requests.map((r) => r.purpose), ['turn', 'turn', 'summarize', 'turn']);
    const summarize = requests[2]!;
    assert.ok(summarize.messages.some((m) => m.content.includes('ORIGINAL PROMPT')));
    assert.equal(summarize.toolNames.length, 0);
    const next = requests[3]!;
    assert.ok(next.messages.some((m) => m.role === 'summary' && m.content === 'SUMMARY-TEXT'));
    assert.equal(next.messages.some((m) => m.content === 'ORIGINAL PROMPT'), false);
    assert.ok(next.messages.some((m) => m.role === 'tool' && nativeIdOf(next.messages, m.toolCallId) === 'c2'), 'the kept recent messages stay');
    assert.equal(next.messages.some((m) => m.toolCalls?.some((c) => c.nativeId === 'c1')), false);
  });

  it('fires beforeCompact, then afterCompact with the counts and the summary, inside a compress_context step', async () => {
    const { rec } = await run([{ text: 'S' }]);
    const seq = rec.sequence();
    const i = seq.indexOf('beforeCompact');
    assert.deepEqual(seq.slice(i - 1, i + 3), ['beforeStep', 'beforeCompact', 'afterCompact', 'afterStep']);
    assert.equal(rec.of('beforeStep').find((e) => e.stepType === 'compress_context')?.stepIndex, 4);
    const after = rec.of('afterCompact')[0]!;
    assert.equal(after.messagesBefore, 5);
    assert.equal(after.messagesAfter, 3);
    assert.equal(after.summary, 'S');
    assert.equal(rec.of('onCompactError').length, 0);
  });

  it('the summarizing call\'s usage counts towards the operation total', async () => {
    const { rec, final } = await run([{ text: 'S' }]);
    const step = rec.of('afterStep').find((e) => e.stepType === 'compress_context')!;
    assert.ok(step.usage.totalTokens > 0);
    assert.equal(final.state.usage.totalTokens, rec.of('afterStep').reduce((sum, e) => sum + e.usage.totalTokens, 0));
  });

  it('a failed compaction fires onCompactError; the run continues uncompressed and completes', async () => {
    const { rec, final, handle, requests } = await run([{ error: 'summarizer unavailable' }]);
    assert.equal(final.status, 'done');
    assert.equal(final.reason, 'done');
    assert.equal(final.state.lastText, 'finished');
    assert.equal(rec.of('onCompactError').length, 1);
    assert.match(rec.of('onCompactError')[0]!.error, /summarizer unavailable/);
    assert.equal(rec.of('afterCompact').length, 0);
    assert.equal(rec.of('onError').length, 0);
    const active = await fx.kernel.listMessages(handle.operationId);
    assert.equal(active.length, 6);
    assert.equal(active.some((m) => m.role === 'summary'), false);
    const last = requests.at(-1)!;
    assert.equal(last.purpose, 'turn');
    assert.ok(last.messages.some((m) => m.content === 'ORIGINAL PROMPT'), 'the next turn sees the uncompressed conversation');
  });

  it('a failed compaction is not retried on every step below a higher token count', async () => {
    const { requests } = await run([{ error: 'summarizer unavailable' }]);
    assert.equal(requests.filter((r) => r.purpose === 'summarize').length, 1);
  });

  it('no compaction below the threshold', async () => {
    const { rec, requests } = await run([{ text: 'S' }], { thresholdTokens: 100_000, keepRecent: 2 });
    assert.equal(rec.of('beforeCompact').length, 0);
    assert.equal(requests.some((r) => r.purpose === 'summarize'), false);
  });
});
