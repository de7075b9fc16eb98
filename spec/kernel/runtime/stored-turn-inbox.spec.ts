import assert from 'node:assert/strict';
import { OperationEvents } from '../../../kernel/runtime/operation-events.js';
import type { RunningOperation } from '../../../kernel/runtime/running-operation.js';
import { decideStoredDelivery, deliverThroughStore, takeStoredDeliveries, TURN_INBOX_CALL_ID } from '../../../kernel/runtime/stored-turn-inbox.js';
import type { OperationState, Store } from '../../../kernel/store.js';
import type { PostgresStore } from '../../../plugins/store-postgres/index.js';
import { usePostgresSchemas } from '../../helpers/postgres-fixtures.js';

function state(stepIndex = 0): OperationState {
  return { stepIndex, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
}

/** A worker's copy of the operation as the store has it now (what a queued step loads). */
async function copyOf(store: Store, id: string): Promise<RunningOperation> {
  return { record: (await store.getOperation(id))!, inbox: [] } as unknown as RunningOperation;
}

const offer = (store: Store, operationId: string, id: string, value: unknown = { content: `hello ${id}` }) =>
  store.recordToolStep({ operationId, toolCallId: TURN_INBOX_CALL_ID, name: `offer:${id}`, value });

/**
 * Queue mode's turn inbox in the store (issue 16 item 4): two pools on one
 * PostgreSQL schema play the sending API process and the worker; every race
 * has both sides in flight at once.
 */
describe('kernel: the stored turn inbox (joins across processes)', function () {
  this.timeout(60_000);
  const schemas = usePostgresSchemas('inbox');
  let sender: PostgresStore;
  let worker: PostgresStore;

  beforeEach(async () => {
    const schema = schemas.schema();
    sender = await schemas.store({ schema });
    worker = await schemas.store({ schema, poolSize: 8 });
  });
  afterEach(async () => {
    await sender.close();
    await worker.close();
  });

  it('a withdrawal and a take racing: exactly one wins, and the sender\'s answer matches what the commit stored', async () => {
    for (let round = 0; round < 20; round++) {
      const id = `op-race-${round}`;
      const op = await sender.createOperation({ id, agentId: 'x', agent: {}, context: {}, state: state() }, [{ role: 'user', content: 'go' }], []);
      const joinId = `join_a${round}`;
      await offer(sender, id, joinId);
      const copy = await copyOf(worker, id);
      const [decided] = await Promise.all([decideStoredDelivery(sender, id, op.threadId, joinId, true), takeStoredDeliveries(worker, copy)]);
      const took = copy.inbox!.length === 1;
      if (took) {
        assert.equal(decided, undefined, `round ${round}: taken, so undecided until the commit`);
        await worker.commitStep(id, { expectedVersion: 0, state: state(1), messages: [{ id: joinId, role: 'user', content: `hello ${joinId}` }, { role: 'assistant', content: 'ok' }] });
        assert.equal(await decideStoredDelivery(sender, id, op.threadId, joinId, true), true, `round ${round}: the commit stored it: joined`);
      } else {
        assert.equal(decided, false, `round ${round}: withdrawn`);
        assert.equal((await takeStoredDeliveries(worker, copy), copy.inbox!.length), 0, 'a withdrawn offer is never taken later');
      }
    }
  });

  it('a worker killed after its take runs the step again on the same version and takes it again; a later version does not, and a commit without it answers false', async () => {
    const op = await sender.createOperation({ id: 'op-retake', agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
    await offer(sender, op.id, 'join_b');
    const first = await copyOf(worker, op.id);
    await takeStoredDeliveries(worker, first);
    assert.deepEqual(first.inbox!.map((d) => [d.id, d.content]), [['join_b', 'hello join_b']]);
    // The first worker died before committing: the same step runs again elsewhere.
    const again = await copyOf(worker, op.id);
    await takeStoredDeliveries(worker, again);
    assert.deepEqual(again.inbox!.map((d) => d.id), ['join_b']);
    // Taking twice into one copy adds it once.
    await takeStoredDeliveries(worker, again);
    assert.equal(again.inbox!.length, 1);
    assert.equal(await decideStoredDelivery(sender, op.id, op.threadId, 'join_b'), undefined, 'undecided while the version is the take\'s');
    // Another writer (an abort) wins the compare-and-swap: the message was never stored.
    await sender.commitStep(op.id, { expectedVersion: 0, state: state(1), status: 'interrupted', reason: 'interrupted' });
    const later = await copyOf(worker, op.id);
    await takeStoredDeliveries(worker, later);
    assert.equal(later.inbox!.length, 0, 'the take names another version');
    assert.equal(await decideStoredDelivery(sender, op.id, op.threadId, 'join_b'), false);
  });

  it('deliverThroughStore answers false at once for an operation that is not running, with nothing stored; an open offer is withdrawn when the operation ends', async () => {
    const done = await sender.createOperation({ id: 'op-done', agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
    await sender.commitStep(done.id, { state: state(1), status: 'done', reason: 'done' });
    assert.equal(await deliverThroughStore(sender, new OperationEvents(), done.id, { id: 'join_c', content: 'hi' }, () => false), false);
    assert.deepEqual(await sender.listToolSteps(done.id, TURN_INBOX_CALL_ID), []);
    assert.equal(await deliverThroughStore(sender, new OperationEvents(), 'op-missing', { id: 'join_c', content: 'hi' }, () => false), false);

    const op = await sender.createOperation({ id: 'op-ends', agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
    const answer = deliverThroughStore(sender, new OperationEvents(), op.id, { id: 'join_d', content: 'hi' }, () => false);
    // The response ends without a model turn taking it.
    await new Promise((r) => setTimeout(r, 300));
    await worker.commitStep(op.id, { expectedVersion: 0, state: state(1), status: 'done', reason: 'done' });
    assert.equal(await answer, false);
    const records = await sender.listToolSteps(op.id, TURN_INBOX_CALL_ID);
    assert.deepEqual(records.map((r) => [r.name, r.value]), [['offer:join_d', { content: 'hi' }], ['take:join_d', { withdrawn: true }]]);
  });

  it('deliverThroughStore resolves true once the taking step\'s commit stored the message, woken by the operation\'s event', async () => {
    const op = await sender.createOperation({ id: 'op-joins', agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
    const events = new OperationEvents();
    const answer = deliverThroughStore(sender, events, op.id, { id: 'join_e', content: 'also this' }, () => false);
    let copy: RunningOperation;
    do {
      await new Promise((r) => setTimeout(r, 50));
      copy = await copyOf(worker, op.id);
      await takeStoredDeliveries(worker, copy);
    } while (copy.inbox!.length === 0);
    await worker.commitStep(op.id, { expectedVersion: 0, state: state(1), messages: [{ id: 'join_e', role: 'user', content: 'also this' }] });
    events.emit({ type: 'step_finished', operationId: op.id, stepIndex: 0, kind: 'call_llm', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, durationMs: 1 });
    assert.equal(await answer, true);
  });

  it('attack: malformed offers and takes written by hand are skipped, never joined and never thrown on', async () => {
    const op = await sender.createOperation({ id: 'op-bad', agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
    await offer(sender, op.id, 'join_n', { content: 42 });
    await offer(sender, op.id, 'join_i', { content: 'x', images: [{ mediaType: 'text/html', data: '<script>' }] });
    await offer(sender, op.id, 'join_s', 'just a string');
    await offer(sender, op.id, 'join_ok');
    await sender.recordToolStep({ operationId: op.id, toolCallId: TURN_INBOX_CALL_ID, name: 'take:join_ok', value: { version: 'zero' } });
    const copy = await copyOf(worker, op.id);
    await takeStoredDeliveries(worker, copy);
    assert.deepEqual(copy.inbox, [], 'nothing malformed joins, and a malformed take is not a take at this version');
    assert.equal(await decideStoredDelivery(sender, op.id, op.threadId, 'join_ok'), false, 'a malformed take decides nothing joined');
  });
});
