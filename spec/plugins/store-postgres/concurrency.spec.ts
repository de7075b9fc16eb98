import assert from 'node:assert/strict';
import { isHookgateError } from '../../../kernel/errors.js';
import type { OperationState } from '../../../kernel/store.js';
import type { PostgresStore } from '../../../plugins/store-postgres/index.js';
import { adminQuery, TEST_POSTGRES, usePostgresSchemas } from '../../helpers/postgres-fixtures.js';

function state(stepIndex = 0): OperationState {
  return { stepIndex, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 }, pendingToolCalls: [], approvedToolCallIds: [], modelTurns: 0, compactions: 0 };
}

/**
 * Two stores on one schema, each with its own pool: what two hookgate
 * processes sharing a PostgreSQL see. Every race is started with both sides
 * in flight at once (Promise.allSettled), many times over.
 */
describe('store-postgres: two pools on one schema', function () {
  this.timeout(60_000);
  const schemas = usePostgresSchemas('race');
  let a: PostgresStore;
  let b: PostgresStore;
  let schema: string;

  beforeEach(async () => {
    schema = schemas.schema();
    a = await schemas.store({ schema });
    b = await schemas.store({ schema, poolSize: 8 });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });

  it('compare-and-swap: of two commits expecting the same version exactly one lands, the other is STORE_VERSION_CONFLICT and wrote nothing', async () => {
    for (let round = 0; round < 20; round++) {
      const id = `op-cas-${round}`;
      await a.createOperation({ id, agentId: 'x', agent: {}, context: {}, state: state() }, [{ role: 'user', content: 'go' }], []);
      const results = await Promise.allSettled([
        a.commitStep(id, { expectedVersion: 0, state: state(1), messages: [{ role: 'assistant', content: 'from a' }] }),
        b.commitStep(id, { expectedVersion: 0, state: state(2), messages: [{ role: 'assistant', content: 'from b' }] }),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(won.length, 1, `round ${round}: one commit lands`);
      assert.ok(isHookgateError(lost[0]!.reason, 'STORE_VERSION_CONFLICT'), `round ${round}: ${String(lost[0]!.reason)}`);
      const op = (await b.getOperation(id))!;
      assert.equal(op.version, 1);
      const messages = await a.listMessages(id);
      assert.deepEqual(messages.map((m) => [m.seq, m.position]), [[1, 1], [2, 2]], 'no message of the losing commit, no gap');
      assert.equal(op.state.stepIndex, messages[1]!.content === 'from a' ? 1 : 2, 'the state is the winner\'s');
    }
  });

  it('commits without a version from both pools serialize: every message stored once, seqs and positions without gaps or repeats', async () => {
    const id = 'op-many';
    await a.createOperation({ id, agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
    await Promise.all(Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? a : b).commitStep(id, { state: state(i), messages: [{ role: 'assistant', content: `m${i}` }, { role: 'tool', toolCallId: `c${i}`, content: 'r' }] })));
    const messages = await b.listThreadMessages((await a.getOperation(id))!.threadId);
    assert.equal(messages.length, 80);
    assert.deepEqual(messages.map((m) => m.position), Array.from({ length: 80 }, (_, i) => i + 1));
    assert.deepEqual(messages.map((m) => m.seq), Array.from({ length: 80 }, (_, i) => i + 1));
    assert.equal((await a.getOperation(id))!.version, 40);
    // Each commit's two messages stay next to each other.
    for (let i = 0; i < 80; i += 2) assert.equal(messages[i]!.content.slice(1), messages[i + 1]!.toolCallId!.slice(1));
  });

  it('leases: of two owners claiming a free operation at once exactly one is granted, the other sees that holder', async () => {
    for (let round = 0; round < 20; round++) {
      const id = `op-lease-${round}`;
      await a.createOperation({ id, agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
      const now = Date.now();
      const [x, y] = await Promise.all([a.claimOperation(id, { owner: 'A', ttlMs: 5_000, now }), b.claimOperation(id, { owner: 'B', ttlMs: 5_000, now })]);
      assert.equal([x, y].filter((c) => c.claimed).length, 1, `round ${round}`);
      const winner = x.claimed ? 'A' : 'B';
      const loser = x.claimed ? y : x;
      assert.equal(loser.claimed ? undefined : loser.holder.owner, winner);
      assert.equal((await b.getLease(id))!.owner, winner);
    }
  });

  it('a deferred result published from both pools at once is written once', async () => {
    for (let round = 0; round < 10; round++) {
      const id = `op-pub-${round}`;
      await a.createOperation({ id, agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
      await a.commitStep(id, { state: state(1), status: 'waiting_tool', messages: [{ role: 'tool', toolCallId: 'call_1', content: '' }] });
      const results = await Promise.all([
        a.publishToolResult(id, 'call_1', { content: 'A', success: true }, { state: state(2), status: 'running' }),
        b.publishToolResult(id, 'call_1', { content: 'B', success: true }, { state: state(3), status: 'running' }),
      ]);
      assert.equal(results.filter(Boolean).length, 1, `round ${round}`);
      const [tool] = await b.listMessages(id);
      assert.equal(tool!.content, results[0] ? 'A' : 'B');
      assert.equal((await a.getOperation(id))!.version, 2);
    }
  });

  it('two admissions racing to create one instance: one creates the thread, the other continues it; with uid null the other is refused', async () => {
    const admit = (store: PostgresStore, n: number, thread: string, uid?: null) => store.admitSubmission({
      submission: { id: `sub-${thread}-${n}`, dispatchId: `dsp-${thread}-${n}`, agentId: 'T', message: { n }, acceptedAt: new Date().toISOString() },
      thread: { id: thread, agentId: 'T', instanceId: thread, uid: thread },
      ...(uid === null ? { uid: null } : {}),
    });
    for (let round = 0; round < 10; round++) {
      const [x, y] = await Promise.all([admit(a, 1, `t-${round}`), admit(b, 2, `t-${round}`)]);
      assert.deepEqual([x.outcome, y.outcome], ['admitted', 'admitted']);
      const created = [x, y].map((r) => (r.outcome === 'admitted' ? r.created : undefined));
      assert.deepEqual(created.sort(), [false, true], `round ${round}: exactly one created the thread`);
      const [p, q] = await Promise.all([admit(a, 1, `u-${round}`, null), admit(b, 2, `u-${round}`, null)]);
      assert.deepEqual([p.outcome, q.outcome].sort(), ['admitted', 'instance_exists'], `round ${round}`);
    }
    assert.equal((await a.listSubmissions()).length, 30);
  });

  it('a durable tool step recorded from both pools at once: the first record wins, both get it back', async () => {
    await a.createOperation({ id: 'op-steps', agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
    for (let round = 0; round < 20; round++) {
      const [x, y] = await Promise.all([
        a.recordToolStep({ operationId: 'op-steps', toolCallId: 'c', name: `s${round}`, value: { by: 'a' } }),
        b.recordToolStep({ operationId: 'op-steps', toolCallId: 'c', name: `s${round}`, value: { by: 'b' } }),
      ]);
      assert.equal([x, y].filter((r) => r.recorded).length, 1);
      assert.deepEqual(x.step.value, y.step.value);
    }
    assert.equal((await b.listToolSteps('op-steps', 'c')).length, 20);
  });

  it('writes into its configured schema: the rows are there, read over a plain connection', async () => {
    assert.match(a.where, new RegExp(`${TEST_POSTGRES.host}:${TEST_POSTGRES.port}/${TEST_POSTGRES.database} \\(schema ${schema}\\)`));
    await a.createOperation({ id: 'op-where', agentId: 'x', agent: {}, context: {}, state: state() }, [], []);
    const { rows } = await adminQuery(`SELECT id, status FROM ${schema}.operations`);
    assert.deepEqual(rows, [{ id: 'op-where', status: 'running' }]);
  });
});

describe('store-postgres: values PostgreSQL text cannot hold', function () {
  this.timeout(30_000);
  const schemas = usePostgresSchemas('nul');

  it('message content and a published tool result with NUL characters (a binary tool output) are stored and read back as given', async () => {
    const store = await schemas.store();
    try {
      const binary = 'PNG\u0000\u0001\u0000end';
      await store.createOperation({ id: 'op-nul', agentId: 'x', agent: {}, context: {}, state: state() }, [{ role: 'user', content: `read \u0000 this` }], []);
      const [written] = await store.commitStep('op-nul', { state: state(1), messages: [{ role: 'tool', toolCallId: 'c1', content: binary, toolResult: { content: binary, success: true } }] });
      assert.equal(written!.content, binary);
      await store.commitStep('op-nul', { state: state(2), status: 'waiting_tool', messages: [{ role: 'tool', toolCallId: 'c2', content: '' }] });
      assert.equal(await store.publishToolResult('op-nul', 'c2', { content: `late\u0000`, success: true }, { state: state(3), status: 'running' }), true);
      const messages = await store.listMessages('op-nul');
      assert.deepEqual(messages.map((m) => m.content), ['read \u0000 this', binary, 'late\u0000']);
      assert.equal(messages[1]!.toolResult!.content, binary);
    } finally {
      await store.close();
    }
  });
});
