import assert from 'node:assert/strict';
import { isHookgateError } from '../../kernel/errors.js';
import type { Store } from '../../kernel/store.js';
import type { SubmissionAdmission } from '../../kernel/submissions.js';

function admission(n: number, overrides: { uid?: string | null; threadId?: string; threadUid?: string; message?: unknown; dispatchId?: string; initialData?: unknown } = {}): SubmissionAdmission {
  const threadId = overrides.threadId ?? 'agent:Triage:inst-1';
  const out: SubmissionAdmission = {
    submission: { id: `sub_${n}`, dispatchId: overrides.dispatchId ?? `dsp_${n}`, agentId: 'Triage', message: overrides.message ?? { kind: 'user', body: `m${n}` }, acceptedAt: `2026-01-01T00:00:0${n % 10}.000Z` },
    thread: { id: threadId, agentId: 'Triage', instanceId: 'inst-1', uid: overrides.threadUid ?? `inst_${n}`, ...(overrides.initialData !== undefined ? { initialData: overrides.initialData } : {}) },
  };
  if ('uid' in overrides) out.uid = overrides.uid;
  return out;
}

async function rejectsCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => isHookgateError(err, code as never));
}

/** Document 001's durable submissions, for every store (run by the store contract). */
export function describeSubmissionsContract(current: () => Store): void {
  describe('submissions (document 001)', () => {
    let store: Store;
    beforeEach(() => {
      store = current();
    });

    it('admits a first delivery: creates the instance thread with its uid and initial data, the submission queued', async () => {
      const result = await store.admitSubmission(admission(1, { initialData: { issue: 7 } }));
      assert.equal(result.outcome, 'admitted');
      if (result.outcome !== 'admitted') return;
      assert.equal(result.created, true);
      assert.deepEqual([result.thread.id, result.thread.instanceId, result.thread.uid, result.thread.initialData], ['agent:Triage:inst-1', 'inst-1', 'inst_1', { issue: 7 }]);
      const s = result.submission;
      assert.deepEqual([s.id, s.dispatchId, s.threadId, s.instanceId, s.status, s.attempts, s.firstStartedAt, s.operationId], ['sub_1', 'dsp_1', 'agent:Triage:inst-1', 'inst-1', 'queued', 0, undefined, undefined]);
      assert.deepEqual(await store.getSubmission('sub_1'), s);
      assert.deepEqual((await store.getThread('agent:Triage:inst-1'))!.uid, 'inst_1');
    });

    it('a later delivery continues the thread: its uid and initial data stay those of the first', async () => {
      await store.admitSubmission(admission(1, { initialData: { issue: 7 } }));
      const second = await store.admitSubmission(admission(2, { initialData: { issue: 99 } }));
      assert.equal(second.outcome, 'admitted');
      if (second.outcome !== 'admitted') return;
      assert.equal(second.created, false);
      assert.deepEqual([second.thread.uid, second.thread.initialData], ['inst_1', { issue: 7 }]);
      assert.deepEqual((await store.listSubmissions({ threadId: 'agent:Triage:inst-1' })).map((x) => x.id), ['sub_1', 'sub_2']);
    });

    it('a string uid continues only that incarnation; a missing instance or another uid stores nothing', async () => {
      const missing = await store.admitSubmission(admission(1, { uid: 'inst_x' }));
      assert.deepEqual(missing, { outcome: 'instance_not_found' });
      assert.equal(await store.getThread('agent:Triage:inst-1'), undefined);
      assert.deepEqual(await store.listSubmissions(), []);
      await store.admitSubmission(admission(2));
      const wrong = await store.admitSubmission(admission(3, { uid: 'inst_other' }));
      assert.equal(wrong.outcome, 'instance_not_found');
      assert.equal(await store.getSubmission('sub_3'), undefined);
      assert.equal((await store.admitSubmission(admission(4, { uid: 'inst_2' }))).outcome, 'admitted');
    });

    it('uid null creates only: an existing instance is refused with its thread (uid) and nothing stored', async () => {
      assert.equal((await store.admitSubmission(admission(1, { uid: null }))).outcome, 'admitted');
      const again = await store.admitSubmission(admission(2, { uid: null }));
      assert.equal(again.outcome, 'instance_exists');
      assert.equal(again.outcome === 'instance_exists' && again.thread.uid, 'inst_1');
      assert.deepEqual((await store.listSubmissions()).map((x) => x.id), ['sub_1']);
    });

    it('admitting one dispatch id again is idempotent; with another message it is a STORE_CONFLICT', async () => {
      const first = await store.admitSubmission(admission(1));
      const again = await store.admitSubmission({ ...admission(1), submission: { ...admission(1).submission, id: 'sub_other' } });
      assert.equal(again.outcome, 'duplicate');
      assert.equal(again.outcome === 'duplicate' && again.submission.id, first.outcome === 'admitted' ? first.submission.id : '');
      assert.equal((await store.listSubmissions()).length, 1);
      await rejectsCode(store.admitSubmission(admission(5, { dispatchId: 'dsp_1', message: 'other' })), 'STORE_CONFLICT');
    });

    it('racing first contacts on one instance: one creates the thread, the other continues it', async () => {
      const results = await Promise.all([store.admitSubmission(admission(1)), store.admitSubmission(admission(2))]);
      assert.deepEqual(results.map((r) => r.outcome), ['admitted', 'admitted']);
      assert.deepEqual(results.map((r) => r.outcome === 'admitted' && r.created).sort(), [false, true]);
      const uids = new Set(results.map((r) => (r.outcome === 'admitted' ? r.thread.uid : '')));
      assert.equal(uids.size, 1);
    });

    it('an attempt makes the submission running, counts attempts and keeps the first start time', async () => {
      await store.admitSubmission(admission(1));
      const first = await store.beginSubmissionAttempt('sub_1', '2026-01-01T00:00:10.000Z');
      assert.deepEqual([first.status, first.attempts, first.firstStartedAt], ['running', 1, '2026-01-01T00:00:10.000Z']);
      const linked = await store.linkSubmissionOperation('sub_1', 'op_1');
      assert.equal(linked.operationId, 'op_1');
      const second = await store.beginSubmissionAttempt('sub_1', '2026-01-01T00:05:00.000Z');
      assert.deepEqual([second.status, second.attempts, second.firstStartedAt, second.operationId], ['running', 2, '2026-01-01T00:00:10.000Z', 'op_1']);
    });

    it('settles once: the first terminal state wins, and a settled submission begins no attempt', async () => {
      await store.admitSubmission(admission(1));
      await store.beginSubmissionAttempt('sub_1');
      const done = await store.settleSubmission('sub_1', { status: 'completed', result: { text: 'hi', data: { part: [1] } } });
      assert.equal(done.settled, true);
      assert.deepEqual([done.submission.status, done.submission.result], ['completed', { text: 'hi', data: { part: [1] } }]);
      assert.ok(done.submission.settledAt);
      const late = await store.settleSubmission('sub_1', { status: 'failed', error: { message: 'late' } });
      assert.equal(late.settled, false);
      assert.deepEqual([late.submission.status, late.submission.error], ['completed', undefined]);
      await rejectsCode(store.beginSubmissionAttempt('sub_1'), 'STORE_CONFLICT');
      await rejectsCode(store.linkSubmissionOperation('sub_1', 'op_9'), 'STORE_CONFLICT');
    });

    it('a queued submission joins another: joined with joinedInto, never begins an attempt, settles once', async () => {
      await store.admitSubmission(admission(1));
      await store.admitSubmission(admission(2));
      await store.beginSubmissionAttempt('sub_1');
      const joined = await store.joinSubmission('sub_2', 'sub_1');
      assert.deepEqual([joined.status, joined.joinedInto], ['joined', 'sub_1']);
      await rejectsCode(store.beginSubmissionAttempt('sub_2'), 'STORE_CONFLICT');
      await rejectsCode(store.joinSubmission('sub_1', 'sub_2'), 'STORE_CONFLICT');
      assert.deepEqual((await store.listSubmissions({ statuses: ['joined'] })).map((s) => s.id), ['sub_2']);
      assert.equal((await store.settleSubmission('sub_2', { status: 'completed', result: { text: 'coalesced' } })).submission.joinedInto, 'sub_1');
    });

    it('an abort request is stamped once on an unsettled submission and never on a settled one', async () => {
      await store.admitSubmission(admission(1));
      const stamped = await store.requestSubmissionAbort('sub_1', '2026-01-01T00:01:00.000Z');
      assert.equal(stamped.abortRequestedAt, '2026-01-01T00:01:00.000Z');
      assert.equal((await store.requestSubmissionAbort('sub_1', '2026-01-01T00:02:00.000Z')).abortRequestedAt, '2026-01-01T00:01:00.000Z');
      await store.admitSubmission(admission(2));
      await store.settleSubmission('sub_2', { status: 'aborted', error: { message: 'aborted', code: 'X' } });
      assert.equal((await store.requestSubmissionAbort('sub_2')).abortRequestedAt, undefined);
    });

    it('lists by status in admission order, with a limit', async () => {
      for (let n = 1; n <= 4; n++) await store.admitSubmission(admission(n));
      await store.beginSubmissionAttempt('sub_2');
      await store.settleSubmission('sub_3', { status: 'failed', error: { message: 'x' } });
      assert.deepEqual((await store.listSubmissions({ statuses: ['queued', 'running'] })).map((s) => s.id), ['sub_1', 'sub_2', 'sub_4']);
      assert.deepEqual((await store.listSubmissions({ statuses: ['queued'], limit: 1 })).map((s) => s.id), ['sub_1']);
      assert.deepEqual(await store.listSubmissions({ statuses: [] }), []);
      assert.deepEqual((await store.listSubmissions({ threadId: 'nope' })), []);
    });

    it('unknown submissions: undefined from get, STORE_NOT_FOUND from every change', async () => {
      assert.equal(await store.getSubmission('nope'), undefined);
      await rejectsCode(store.beginSubmissionAttempt('nope'), 'STORE_NOT_FOUND');
      await rejectsCode(store.settleSubmission('nope', { status: 'completed' }), 'STORE_NOT_FOUND');
      await rejectsCode(store.requestSubmissionAbort('nope'), 'STORE_NOT_FOUND');
    });

    it('returned records are copies: changing one changes nothing stored', async () => {
      const result = await store.admitSubmission(admission(1, { message: { kind: 'user', body: 'orig' } }));
      if (result.outcome !== 'admitted') assert.fail('admitted');
      (result.submission.message as { body: string }).body = 'changed';
      assert.deepEqual((await store.getSubmission('sub_1'))!.message, { kind: 'user', body: 'orig' });
    });

    it('prune keeps a thread with an unsettled submission and removes settled ones with their thread', async () => {
      await store.admitSubmission(admission(1));
      await store.admitSubmission(admission(2, { threadId: 'agent:Triage:inst-2' }));
      await store.settleSubmission('sub_2', { status: 'completed', result: { text: '' } });
      await new Promise((r) => setTimeout(r, 5));
      await store.prune({ maxAgeMs: 1 });
      assert.ok(await store.getThread('agent:Triage:inst-1'), 'the queued delivery keeps its instance');
      assert.ok(await store.getSubmission('sub_1'));
      assert.equal(await store.getThread('agent:Triage:inst-2'), undefined);
      assert.equal(await store.getSubmission('sub_2'), undefined);
    });
  });
}
