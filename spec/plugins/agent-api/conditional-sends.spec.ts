import assert from 'node:assert/strict';
import * as v from 'valibot';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { AgentInstanceExistsError, AgentInstanceNotFoundError, InvalidRequestError } from '../../../plugins/agent-api/agent-errors.js';
import { agentThreadId } from '../../../plugins/agent-api/agent-thread-id.js';
import { dispatch } from '../../../plugins/agent-api/dispatch.js';
import { getAgentInstance } from '../../../plugins/agent-api/get-agent-instance.js';
import { init } from '../../../plugins/agent-api/init.js';
import { start, type AgentRuntimeHandle } from '../../../plugins/agent-api/start.js';
import { SPEC_AGENT_SOURCE, specAgentsPlugin } from '../../helpers/agent-api-fixtures.js';

function Triage(): void {}
function Seeded(): void {}
Seeded.initialData = v.object({ issue: v.pipe(v.number(), v.integer()), label: v.optional(v.string(), 'none') });

const reply = { turns: [{ text: 'ok' }], onEnd: 'repeat-last' as const };

/** Document 001 "Conditional sends" and "dispatch()": the uid as an ETag, initialData at first contact, nothing stored on rejection. */
describe('agent-api: dispatch() and conditional sends', () => {
  let runtime: AgentRuntimeHandle;

  beforeEach(async () => {
    runtime = await start({ agents: [Triage, Seeded], env: {}, plugins: [specAgentsPlugin({ Triage: reply, Seeded: reply })], agentSource: SPEC_AGENT_SOURCE });
  });
  afterEach(async () => {
    await runtime.stop();
  });

  async function nothingStoredFor(identity: string, id: string): Promise<void> {
    assert.equal(await runtime.kernel.store.getThread(agentThreadId(identity, id)), undefined, 'no instance thread');
    assert.deepEqual(await runtime.kernel.store.listSubmissions({ threadId: agentThreadId(identity, id) }), [], 'no submission');
  }

  it('resolves at admission with a receipt: dispatch id, ISO acceptedAt, the minted uid and the submission id', async () => {
    const before = Date.now();
    const receipt = await dispatch(Triage, { id: 'case-1', message: 'hello' });
    assert.match(receipt.dispatchId, /^dsp_/);
    assert.match(receipt.uid ?? '', /^inst_[A-Za-z0-9_-]{20,}$/);
    assert.match(receipt.submissionId, /^sub_/);
    assert.ok(Date.parse(receipt.acceptedAt) >= before - 1 && new Date(receipt.acceptedAt).toISOString() === receipt.acceptedAt);
    const stored = await runtime.kernel.store.getSubmission(receipt.submissionId);
    assert.deepEqual(stored?.message, { kind: 'user', body: 'hello' }, 'the message is snapshotted at admission');
  });

  it('mints the uid on the first send and echoes the same uid on later sends', async () => {
    const first = await dispatch(Triage, { id: 'case-1', message: 'one' });
    const second = await dispatch(Triage, { id: 'case-1', message: 'two' });
    assert.equal(second.uid, first.uid);
    assert.deepEqual(await getAgentInstance(Triage, 'case-1'), { id: 'case-1', uid: first.uid });
    const other = await dispatch(Triage, { id: 'case-2', message: 'x' });
    assert.notEqual(other.uid, first.uid, 'each instance has its own uid');
  });

  it('uid string: continues that incarnation; a missing instance rejects 404 and stores nothing', async () => {
    const err = await dispatch(Triage, { id: 'case-1', message: 'hi', uid: 'inst_nope' }).then(() => assert.fail('resolved'), (e: unknown) => e);
    assert.ok(err instanceof AgentInstanceNotFoundError);
    assert.deepEqual([err.type, err.status], ['agent_instance_not_found', 404]);
    await nothingStoredFor('Triage', 'case-1');
    assert.equal(await getAgentInstance(Triage, 'case-1'), null, 'getAgentInstance returns null, not an instance without a uid');
  });

  it('uid string: another incarnation uid rejects 404 and stores nothing; the right uid is admitted', async () => {
    const { uid } = await dispatch(Triage, { id: 'case-1', message: 'hi' });
    const count = (await runtime.kernel.store.listSubmissions()).length;
    await assert.rejects(dispatch(Triage, { id: 'case-1', message: 'again', uid: `${uid!}x` }), AgentInstanceNotFoundError);
    assert.equal((await runtime.kernel.store.listSubmissions()).length, count);
    assert.equal((await dispatch(Triage, { id: 'case-1', message: 'again', uid: uid! })).uid, uid);
  });

  it('uid null: creates only; an existing instance rejects 409 with its uid on .uid and in details, nothing stored', async () => {
    const { uid } = await dispatch(Triage, { id: 'case-1', message: 'hi', uid: null });
    const count = (await runtime.kernel.store.listSubmissions()).length;
    const err = await dispatch(Triage, { id: 'case-1', message: 'again', uid: null }).then(() => assert.fail('resolved'), (e: unknown) => e);
    assert.ok(err instanceof AgentInstanceExistsError);
    assert.deepEqual([err.type, err.status, err.uid, err.details?.uid], ['agent_instance_exists', 409, uid, uid]);
    assert.equal((await runtime.kernel.store.listSubmissions()).length, count);
  });

  it('initialData with a string uid is an InvalidRequestError before anything is stored', async () => {
    const err = await dispatch(Seeded, { id: 'case-1', message: 'hi', uid: 'inst_x', initialData: { issue: 1 } }).then(() => assert.fail('resolved'), (e: unknown) => e);
    assert.ok(err instanceof InvalidRequestError);
    assert.equal(err.type, 'invalid_request');
    await nothingStoredFor('Seeded', 'case-1');
  });

  it('initialData is validated at first contact and its parsed output recorded (schema defaults applied)', async () => {
    await dispatch(Seeded, { id: 'case-1', message: 'hi', initialData: { issue: 7 } });
    const thread = await runtime.kernel.store.getThread(agentThreadId('Seeded', 'case-1'));
    assert.deepEqual(thread?.initialData, { issue: 7, label: 'none' });
  });

  it('initialData failing the schema (absence included) rejects with the issue path and stores nothing', async () => {
    const err = await dispatch(Seeded, { id: 'case-1', message: 'hi', initialData: { issue: 1.5 } }).then(() => assert.fail('resolved'), (e: unknown) => e);
    assert.ok(err instanceof InvalidRequestError);
    assert.match(err.message, /issue/);
    await assert.rejects(dispatch(Seeded, { id: 'case-1', message: 'hi' }), InvalidRequestError);
    await nothingStoredFor('Seeded', 'case-1');
  });

  it('initialData is ignored for an existing instance (not validated, not recorded)', async () => {
    await dispatch(Seeded, { id: 'case-1', message: 'hi', initialData: { issue: 7 } });
    await dispatch(Seeded, { id: 'case-1', message: 'again', initialData: 'not even an object' });
    const thread = await runtime.kernel.store.getThread(agentThreadId('Seeded', 'case-1'));
    assert.deepEqual(thread?.initialData, { issue: 7, label: 'none' });
  });

  it('without a schema, initialData is recorded as given; non-JSON data is refused', async () => {
    await dispatch(Triage, { id: 'case-1', message: 'hi', initialData: { free: ['form', 1] } });
    assert.deepEqual((await runtime.kernel.store.getThread(agentThreadId('Triage', 'case-1')))?.initialData, { free: ['form', 1] });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await assert.rejects(dispatch(Triage, { id: 'case-2', message: 'hi', initialData: cyclic }), InvalidRequestError);
    await nothingStoredFor('Triage', 'case-2');
  });

  it('a missing, empty, non-string or oversized id rejects with InvalidRequestError naming id', async () => {
    for (const id of [undefined, '', 42, 'x'.repeat(513)]) {
      await assert.rejects(dispatch(Triage, { id: id as string, message: 'hi' }), (e: unknown) => e instanceof InvalidRequestError && e.details?.field === 'id');
    }
  });

  it('a malformed message rejects with InvalidRequestError and stores nothing', async () => {
    await assert.rejects(dispatch(Triage, { id: 'case-1', message: { kind: 'signal', type: '', body: 'x' } }), InvalidRequestError);
    await nothingStoredFor('Triage', 'case-1');
  });

  it('a non-function agent rejects with InvalidRequestError; an unregistered function rejects naming the registered ones', async () => {
    await assert.rejects(dispatch('Triage' as unknown as Agent, { id: 'a', message: 'hi' }), InvalidRequestError);
    function Stranger(): void {}
    await assert.rejects(dispatch(Stranger, { id: 'a', message: 'hi' }), (e: unknown) => e instanceof Error && (e as { code?: string }).code === 'AGENT_NOT_REGISTERED' && /Triage/.test(e.message));
  });

  it('a bad uid value (number, empty string) is an InvalidRequestError', async () => {
    await assert.rejects(dispatch(Triage, { id: 'a', message: 'hi', uid: 5 as unknown as string }), InvalidRequestError);
    await assert.rejects(dispatch(Triage, { id: 'a', message: 'hi', uid: '' }), InvalidRequestError);
  });

  it('init: the handle pins the incarnation of its first contact (uid null, then continues it)', async () => {
    const handle = init(Triage, { id: 'case-9', uid: null });
    const first = await handle.dispatch('one');
    const second = await handle.dispatch('two');
    assert.equal(second.uid, first.uid);
    await assert.rejects(init(Triage, { id: 'case-9', uid: null }).dispatch('three'), AgentInstanceExistsError);
  });
});
