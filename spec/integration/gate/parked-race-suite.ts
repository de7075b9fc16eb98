import assert from 'node:assert/strict';
import type { Kernel } from '../../../kernel/kernel.js';
import { useKernelsOnOneFile } from '../../helpers/runtime-fixtures.js';
import { codeOf, GAPS, onFinished, parkedJob, parkedPayment, paymentResults, PaymentTools, race, terminal } from './parked-race-fixtures.js';

/**
 * What the loser of a race may be told: the operation was decided or moved on
 * first (OPERATION_NOT_WAITING), or another process runs it now
 * (OPERATION_LEASED, only when the two calls come from two kernels).
 */
const LOSING = ['OPERATION_NOT_WAITING', 'OPERATION_LEASED'];

/** Where the kernels of a race come from: `start` starts one more kernel on the suite's SQLite file (with the spec tools). */
export type Setup = (start: () => Promise<Kernel>) => Promise<{ parker: Kernel; first: Kernel; second: Kernel }>;

/**
 * Attack: two calls on one parked operation at once (a `hookgate serve`
 * operator route and a library caller, the takeover watch, the agent-api
 * coordinator, a queue worker). Each pair is repeated many times, in the
 * same tick, after a microtask and after a setImmediate, so the
 * interleavings between a decision's claim, commit, observers and launch are
 * hit. A tool run twice after one approval is a payment sent twice.
 */
export function parkedRaceSuite(title: string, setup: Setup, store: 'sqlite' | 'postgres' = 'sqlite'): void {
describe(title, function () {
  this.timeout(120000);
  const ROUNDS = 12;
  const kernels = useKernelsOnOneFile('parked-race', store);
  let tools: PaymentTools;
  // `k` parks the operations and is asked how they end; `a` makes the first call of each race, `b` the second.
  let k: Kernel;
  let a: Kernel;
  let b: Kernel;
  let losing: string[];

  beforeEach(async () => {
    tools = new PaymentTools();
    ({ parker: k, first: a, second: b } = await setup(() => kernels.start(tools)));
    losing = a === b ? ['OPERATION_NOT_WAITING'] : LOSING;
  });

  for (const gap of GAPS) {
    it(`approve + resume (${gap}): the approved payment is sent once, one result stored, the operation completes once`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const id = await parkedPayment(k);
        const finished: string[] = [];
        const off = onFinished([k, a, b], id, finished);
        const [approved, resumed] = await race(() => a.approve(id), () => b.resume(id), gap);
        assert.equal(approved.status, 'fulfilled', `round ${round}: approve lost to a resume: ${codeOf(approved)}`);
        assert.ok(resumed.status === 'fulfilled' || losing.includes(codeOf(resumed)!), `round ${round}: resume failed with ${codeOf(resumed)}`);
        const done = await terminal(k, id);
        await new Promise((r) => setTimeout(r, 5));
        off();
        assert.equal(done.status, 'done', `round ${round}`);
        assert.equal(tools.count(id), 1, `round ${round}: the payment ran ${tools.count(id)} times`);
        assert.deepEqual(await paymentResults(k, id), ['payment sent'], `round ${round}`);
        assert.deepEqual(finished, ['done'], `round ${round}: finished ${finished.length} times`);
      }
    });

    it(`approve + approve of the same call (${gap}): one decision wins, the loser is told, the payment is sent once`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const id = await parkedPayment(k);
        const callId = (await k.getOperation(id))!.state.approval!.pendingTools[0]!.toolCallId;
        const results = await race(() => a.approve(id, { toolCallId: callId }), () => b.approve(id, { toolCallId: callId }), gap);
        const won = results.filter((r) => r.status === 'fulfilled').length;
        assert.equal(won, 1, `round ${round}: ${won} approvals won (${results.map(codeOf).join(', ')})`);
        const lost = results.map(codeOf).filter((c) => c !== undefined);
        assert.ok(lost.length === 1 && losing.includes(lost[0]!), `round ${round}: the loser got ${lost.join(', ')}`);
        assert.equal((await terminal(k, id)).status, 'done');
        assert.equal(tools.count(id), 1, `round ${round}: the payment ran ${tools.count(id)} times`);
        assert.deepEqual(await paymentResults(k, id), ['payment sent']);
      }
    });

    it(`approve + reject (${gap}): exactly one decision wins; the payment is sent only if approve won`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const id = await parkedPayment(k);
        const [approved, rejected] = await race(() => a.approve(id), () => b.reject(id, { reason: 'no' }), gap);
        assert.equal([approved, rejected].filter((r) => r.status === 'fulfilled').length, 1, `round ${round}: ${codeOf(approved)} / ${codeOf(rejected)}`);
        assert.ok(losing.includes((codeOf(approved) ?? codeOf(rejected))!), `round ${round}: the loser got ${codeOf(approved) ?? codeOf(rejected)}`);
        const done = await terminal(k, id);
        if (approved.status === 'fulfilled') {
          assert.equal(done.status, 'done', `round ${round}`);
          assert.equal(tools.count(id), 1, `round ${round}`);
          assert.deepEqual(await paymentResults(k, id), ['payment sent']);
        } else {
          assert.equal(done.status, 'interrupted', `round ${round}`);
          assert.equal(tools.count(id), 0, `round ${round}: rejected, yet the payment ran`);
          assert.deepEqual(await paymentResults(k, id), ['The user rejected this tool call: no']);
        }
      }
    });

    it(`approve + abort (${gap}): interrupted with no payment after the abort, or done with one payment; never both`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const id = await parkedPayment(k);
        const [approved, aborted] = await race(
          () => a.approve(id),
          () => b.abort(id).then(() => void tools.aborted.add(id)),
          gap,
        );
        assert.ok(approved.status === 'fulfilled' || losing.includes(codeOf(approved)!), `round ${round}: approve ${codeOf(approved)}`);
        assert.ok(aborted.status === 'fulfilled' || losing.includes(codeOf(aborted)!), `round ${round}: abort ${codeOf(aborted)}`);
        const done = await terminal(k, id);
        await new Promise((r) => setTimeout(r, 5));
        const runs = tools.runs.get(id) ?? [];
        assert.ok(runs.length <= 1, `round ${round}: the payment ran ${runs.length} times`);
        assert.deepEqual(runs.filter((r) => r.afterAbort), [], `round ${round}: the payment ran after the abort was acknowledged`);
        if (done.status === 'interrupted') {
          assert.equal(aborted.status, 'fulfilled', `round ${round}: interrupted, yet the abort failed`);
        } else {
          // The abort lost cleanly: refused, or it came once the run had ended (an abort of an ended run is a no-op).
          assert.equal(done.status, 'done', `round ${round}`);
          assert.equal(runs.length, 1);
        }
      }
    });

    it(`completeToolCall + resume of a deferred-parked operation (${gap}): published once, the run goes on once`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const { operationId: id, callId } = await parkedJob(k);
        const [completed, resumed] = await race(() => a.completeToolCall(id, callId, 'job result'), () => b.resume(id), gap);
        assert.deepEqual(completed.status === 'fulfilled' ? completed.value : codeOf(completed), { published: true }, `round ${round}`);
        assert.ok(resumed.status === 'fulfilled' || losing.includes(codeOf(resumed)!), `round ${round}: resume failed with ${codeOf(resumed)}`);
        const done = await terminal(k, id);
        assert.equal(done.status, 'done', `round ${round}`);
        assert.equal(done.state.lastText, 'job done');
        assert.deepEqual(await paymentResults(k, id), ['job result'], `round ${round}`);
      }
    });

    it(`completeToolCall twice (${gap}): one publication, the other { published: false }; the run goes on once`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const { operationId: id, callId } = await parkedJob(k);
        const finished: string[] = [];
        const off = onFinished([k, a, b], id, finished);
        const results = await race(() => a.completeToolCall(id, callId, 'first'), () => b.completeToolCall(id, callId, 'second'), gap);
        const values = results.map((r) => (r.status === 'fulfilled' ? r.value.published : codeOf(r)));
        assert.deepEqual([...values].sort(), [false, true], `round ${round}: ${JSON.stringify(values)}`);
        const done = await terminal(k, id);
        await new Promise((r) => setTimeout(r, 5));
        off();
        assert.equal(done.status, 'done');
        assert.deepEqual(await paymentResults(k, id), [values[0] === true ? 'first' : 'second'], `round ${round}`);
        assert.deepEqual(finished, ['done'], `round ${round}`);
      }
    });
  }
});
}
