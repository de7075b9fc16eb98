import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { AgentRunError, InvalidRequestError } from '../../../plugins/agent-api/agent-errors.js';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { dispatch } from '../../../plugins/agent-api/dispatch.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import type { ConversationStreamChunk } from '../../../plugins/agent-api/conversation-stream.js';
import { formatOffset } from '../../../plugins/agent-api/conversation-stream.js';
import { currentRuntime } from '../../../plugins/agent-api/start.js';
import type { SubmissionRecord } from '../../../kernel/submissions.js';
import { SPEC_AGENT_SOURCE, specAgentsPlugin, type SpecAgentScript } from '../../helpers/agent-api-fixtures.js';

function Echo(): void {}
function Tools(): void {}
function Broken(): void {}
function Slow(): void {}
function Hurried(): void {}
Hurried.durability = { timeoutMs: 150 };

const SCRIPTS: Record<string, SpecAgentScript> = {
  Echo: { turns: [{ text: 'first answer' }, { text: 'second answer' }, { text: 'third answer' }] },
  Tools: { turns: [{ toolCalls: [{ identifier: 'side', apiName: 'record', args: { line: 'a' } }] }, { text: 'recorded it' }], tools: ['side/record'] },
  Broken: { turns: [{ error: 'the provider is down' }] },
  Slow: { turns: [{ text: 'slow answer', delayMs: 400 }], onEnd: 'repeat-last' },
  Hurried: { turns: [{ toolCalls: [{ identifier: 'side', apiName: 'record', args: { line: 'h' } }], delayMs: 300 }, { text: 'too late' }], tools: ['side/record'] },
};

/** Document 001 "init()", "AgentReply", "AgentRunError" and the durable submissions behind every send. */
describe('agent-api: submissions and init() handles', function () {
  this.timeout(30_000);
  let dir: string;
  let runtime: AgentRuntimeHandle;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-subs-')));
    runtime = await start({ agents: [Echo, Tools, Broken, Slow, Hurried], env: {}, plugins: [specAgentsPlugin(SCRIPTS, path.join(dir, 'record.txt'))], agentSource: SPEC_AGENT_SOURCE });
  });
  afterEach(async () => {
    await runtime.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function settled(submissionId: string): Promise<SubmissionRecord> {
    for (;;) {
      const record = await runtime.kernel.store.getSubmission(submissionId);
      if (record && ['completed', 'failed', 'aborted'].includes(record.status)) return record;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('handle.dispatch resolves the AgentReply of the settled submission: text, data, uid and submission id', async () => {
    const reply = await init(Echo, { id: 'e-1' }).dispatch('hi');
    assert.equal(reply.text, 'first answer');
    assert.deepEqual(reply.data, {});
    assert.match(reply.uid ?? '', /^inst_/);
    const record = await runtime.kernel.store.getSubmission(reply.submissionId);
    assert.deepEqual([record?.status, record?.attempts, record?.result?.text], ['completed', 1, 'first answer']);
    assert.ok(record?.operationId, 'the submission names its operation');
    assert.equal((await runtime.kernel.getOperation(record.operationId))?.threadId, agentThreadId('Echo', 'e-1'), 'the operation runs on the instance thread');
  });

  it('a bare string and { message } are the same payload; init() without id mints a fresh instance id', async () => {
    const handle = init(Echo);
    assert.match(handle.id, /^anon_/);
    assert.notEqual(init(Echo).id, handle.id);
    assert.equal((await handle.dispatch({ message: 'hi' })).text, 'first answer');
  });

  it('sends to one instance run one at a time in admission order; the conversation carries on', async () => {
    const handle = init(Echo, { id: 'e-2' });
    const replies = await Promise.all([handle.dispatch('one'), handle.dispatch('two'), handle.dispatch('three')]);
    assert.deepEqual(replies.map((r) => r.text), ['first answer', 'second answer', 'third answer']);
    const ops = await runtime.kernel.store.listThreadOperations(agentThreadId('Echo', 'e-2'));
    assert.equal(ops.length, 3);
    const prompts = (await runtime.kernel.store.listThreadMessages(agentThreadId('Echo', 'e-2'))).filter((m) => m.role === 'user').map((m) => m.content);
    assert.deepEqual(prompts, ['one', 'two', 'three']);
  });

  it('dispatch() resolves before the model answered; the queued submission still runs', async () => {
    const receipt = await dispatch(Slow, { id: 's-1', message: 'hi' });
    const now = await runtime.kernel.store.getSubmission(receipt.submissionId);
    assert.ok(now && ['queued', 'running'].includes(now.status), `admitted, not settled: ${now?.status}`);
    assert.equal((await settled(receipt.submissionId)).result?.text, 'slow answer');
  });

  it('a signal is rendered into the model context as an XML block', async () => {
    await init(Echo, { id: 'e-3' }).dispatch({ message: { kind: 'signal', type: 'cron', body: 'tick <now>', attributes: { at: '9:00' } } });
    const prompt = (await runtime.kernel.store.listThreadMessages(agentThreadId('Echo', 'e-3'))).find((m) => m.role === 'user');
    assert.equal(prompt?.content, '<signal type="cron" at="9:00">\ntick &lt;now&gt;\n</signal>');
  });

  it('a failed submission rejects with AgentRunError (outcome failed) carrying the recorded error as cause', async () => {
    const err = await init(Broken, { id: 'b-1' }).dispatch('hi').then(() => assert.fail('resolved'), (e: unknown) => e);
    assert.ok(err instanceof AgentRunError);
    assert.equal(err.outcome, 'failed');
    assert.match(String((err.cause as Error).message), /the provider is down/);
    assert.equal((await runtime.kernel.store.getSubmission(err.submissionId))?.status, 'failed');
  });

  it('onEvent receives the conversation stream chunks recorded after the send, each positioned, ending with its settlement', async () => {
    const chunks: ConversationStreamChunk[] = [];
    const all: ConversationStreamChunk[] = [];
    const reply = await init(Tools, { id: 't-1' }).dispatch('go', { onEvent: (c) => all.push(c) });
    // Live-only chunks (the model's text deltas) are never stored: the rest is what a history read returns.
    assert.ok(all.filter((c) => c.position.live !== undefined).every((c) => c.type === 'text-delta' || c.type === 'tool-log'));
    chunks.push(...all.filter((c) => c.position.live === undefined));
    const types = chunks.map((c) => c.type);
    assert.deepEqual(types.slice(0, 2), ['message-appended', 'message-started'], types.join(','));
    assert.ok(types.includes('tool-input') && types.includes('tool-output'), types.join(','));
    const last = chunks.at(-1);
    assert.equal(last?.type, 'submission-settled');
    assert.equal(last?.type === 'submission-settled' && last.submissionId, reply.submissionId);
    const offsets = chunks.map((c) => formatOffset(c.position));
    assert.deepEqual([...offsets].sort(), offsets, 'positions increase');
    assert.equal(new Set(offsets).size, offsets.length, 'no position twice');
    // The same chunks, with the same positions, are what a history read of the instance returns.
    const history = await currentRuntime('spec').feed.read(agentThreadId('Tools', 't-1'));
    assert.deepEqual(history.chunks, chunks);
  });

  it('firing the signal requests a durable abort: the send rejects with the aborted settlement', async () => {
    const controller = new AbortController();
    const pending = init(Slow, { id: 's-2' }).dispatch('hi', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user cancelled')), 100);
    const err = await pending.then(() => assert.fail('resolved'), (e: unknown) => e);
    assert.ok(err instanceof AgentRunError);
    assert.equal(err.outcome, 'aborted');
    const record = await runtime.kernel.store.getSubmission(err.submissionId);
    assert.equal(record?.status, 'aborted');
    assert.ok(record?.abortRequestedAt, 'the abort request is stored');
  });

  it('aborting a send queued behind another settles it aborted without running it', async () => {
    const handle = init(Slow, { id: 's-4' });
    const first = handle.dispatch('first');
    const controller = new AbortController();
    const second = handle.dispatch('second', { signal: controller.signal }).then(() => assert.fail('resolved'), (e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    const err = await second;
    assert.ok(err instanceof AgentRunError);
    assert.equal(err.outcome, 'aborted');
    assert.equal((await first).text, 'slow answer');
    const record = await runtime.kernel.store.getSubmission(err.submissionId);
    assert.deepEqual([record?.status, record?.attempts, record?.operationId], ['aborted', 0, undefined]);
  });

  it('many concurrent sends, to one instance and to many: every admitted one settles exactly once', async () => {
    const receipts = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => dispatch(Echo, { id: 'crowd', message: `m${i}` })),
      ...Array.from({ length: 20 }, (_, i) => dispatch(Echo, { id: `solo-${i}`, message: 'hi' })),
    ]);
    assert.equal(new Set(receipts.map((r) => r.submissionId)).size, 40);
    const final = await Promise.all(receipts.map((r) => settled(r.submissionId)));
    // Echo's script has three turns: the crowd's first three complete, the rest fail (no turn left); none is lost or run twice.
    assert.deepEqual([final.filter((f) => f.status === 'completed').length, final.filter((f) => f.status === 'failed').length], [23, 17]);
    assert.ok(final.every((f) => f.attempts === 1));
    const crowd = await runtime.kernel.store.listThreadOperations(agentThreadId('Echo', 'crowd'));
    const joined = final.filter((f) => f.joinedInto !== undefined).length;
    assert.equal(crowd.length + joined, 20, 'each crowd send ran once, as its own operation or joined into one');
  });

  it('an already-aborted signal rejects at once with its reason and admits nothing', async () => {
    const controller = new AbortController();
    const reason = new Error('never mind');
    controller.abort(reason);
    await assert.rejects(init(Echo, { id: 'e-4' }).dispatch('hi', { signal: controller.signal }), (e: unknown) => e === reason);
    assert.equal(await runtime.kernel.store.getThread(agentThreadId('Echo', 'e-4')), undefined);
  });

  it('a payload carrying id or uid, or no message, throws InvalidRequestError', async () => {
    const handle = init(Echo, { id: 'e-5' });
    await assert.rejects(handle.dispatch({ message: 'x', id: 'other' } as never), InvalidRequestError);
    await assert.rejects(handle.dispatch({ message: 'x', uid: null } as never), InvalidRequestError);
    await assert.rejects(handle.dispatch({ text: 'x' } as never), InvalidRequestError);
    assert.equal(await runtime.kernel.store.getThread(agentThreadId('Echo', 'e-5')), undefined);
  });

  it('init() does no I/O and checks its arguments: a non-function agent or a bad id throws InvalidRequestError', () => {
    assert.throws(() => init(42 as unknown as Agent), InvalidRequestError);
    assert.throws(() => init(Echo, { id: '' }), InvalidRequestError);
    function Unregistered(): void {}
    assert.equal(init(Unregistered, { id: 'later' }).id, 'later', 'an unregistered agent is only refused at its first send');
  });

  it('the deadline is checked before each turn: past durability.timeoutMs the submission fails with SubmissionTimeoutError', async () => {
    const err = await init(Hurried, { id: 'h-1' }).dispatch('go').then(() => assert.fail('resolved'), (e: unknown) => e);
    assert.ok(err instanceof AgentRunError);
    assert.equal(err.outcome, 'failed');
    assert.equal((err.cause as { code?: string }).code, 'SUBMISSION_TIMEOUT');
    const op = (await runtime.kernel.store.getSubmission(err.submissionId))!.operationId!;
    assert.equal((await runtime.kernel.getOperation(op))?.status, 'interrupted');
    assert.equal(await readFile(path.join(dir, 'record.txt'), 'utf8'), 'h\n', 'the turn in flight finished; no turn started after the deadline');
  });

  it('stop() drains: a submission in flight settles before stop resolves, and later sends are refused', async () => {
    let text: string | undefined;
    const pending = init(Slow, { id: 's-3' }).dispatch('hi').then((r) => (text = r.text));
    await new Promise((r) => setTimeout(r, 50));
    await runtime.stop();
    assert.equal(text, 'slow answer', 'settled before stop() resolved');
    await pending;
    await assert.rejects(dispatch(Echo, { id: 'e-6', message: 'late' }), (e: unknown) => (e as { code?: string }).code === 'AGENT_RUNTIME_NOT_STARTED');
  });
});
