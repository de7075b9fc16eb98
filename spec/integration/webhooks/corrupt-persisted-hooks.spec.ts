import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { allow, RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { control, defineAgent, fsCall, World } from './harness.js';

/**
 * A parked operation whose persisted hook list was damaged on disk: a new
 * kernel that approves it must fail the operation rather than run the tool
 * without the caller's policy.
 */
describe('integration: corrupt persisted hooks fail the operation', function () {
  this.timeout(15_000);
  let world: World;
  let receiver: RecordingReceiver;

  beforeEach(async () => {
    receiver = await RecordingReceiver.start();
    receiver.route('/gate', allow());
    world = await World.create();
  });

  afterEach(async () => {
    await world.cleanup();
    await receiver.close();
  });

  /** Parks an operation guarded by a beforeToolCall control, stops the kernel, overwrites the hook row. */
  async function parkAndCorrupt(garbage: string): Promise<string> {
    const kernelA = await world.boot();
    defineAgent(kernelA, 'careful', [fsCall('writeFile', { path: 'unguarded.txt', content: 'should not exist' }), { text: 'finished' }], { approval: ['fs/writeFile'] });
    const handle = await kernelA.execAgent({ agentId: 'careful', prompt: 'write', hooks: [control('gate', 'beforeToolCall', receiver.url('/gate'))] });
    assert.equal((await handle.settled()).status, 'waiting_approval');
    await kernelA.stop();

    const db = new Database(world.dbPath);
    try {
      const changed = db.prepare('UPDATE hook_registrations SET hook = ? WHERE operation_id = ?').run(garbage, handle.operationId);
      assert.equal(changed.changes, 1, 'the parked operation had one persisted hook row');
    } finally {
      db.close();
    }
    return handle.operationId;
  }

  /** Approves on a fresh kernel; waits for a terminal state (an approve that throws is tolerated and reported). */
  async function approveOnNewKernel(operationId: string) {
    const kernelB = await world.boot();
    let approveError: unknown;
    try {
      await (await kernelB.approve(operationId)).completed();
    } catch (err) {
      approveError = err;
    }
    // Give a background loop a moment to (wrongly) run the tool, then read the persisted state.
    await new Promise((r) => setTimeout(r, 100));
    return { kernelB, approveError, record: (await kernelB.getOperation(operationId))! };
  }

  // BUG (reported, not fixed here: kernel/runtime/* is being edited by someone else):
  // AgentRuntime.decide() -> load() -> store.loadHooks() rejects (JSON.parse of the
  // row) before anything is committed, so approve() throws and the operation stays
  // `waiting_approval` forever instead of ending with status `error`. The tool does
  // not run (safe), but the operation never fails. Proposed fix in the report.
  it.skip('a row that is not JSON: approve on a new kernel ends the operation with status error, tool not run', async () => {
    const operationId = await parkAndCorrupt('{ this is not json');
    const { record } = await approveOnNewKernel(operationId);

    assert.equal(await world.fileExists('unguarded.txt'), false);
    assert.equal(receiver.to('/gate').length, 0);
    assert.equal(record.status, 'error');
  });

  // BUG (reported): valid JSON that is not a serialized webhook hook passes
  // store.loadHooks(); decide() then commits status `running`, and the
  // afterHumanIntervention dispatch rejects with HOOK_RESTORE_FAILED out of
  // decide() before launch(): approve() throws and the operation is stuck in
  // `running` with no loop (only kernel.resume() would pick it up, and the next
  // dispatch fails again). The tool does not run, but the operation never fails.
  it.skip('a row that is JSON but not a webhook hook: approve on a new kernel ends the operation with status error, tool not run', async () => {
    const operationId = await parkAndCorrupt(JSON.stringify({ id: 'gate', type: 'beforeToolCall', handler: 'gone' }));
    const { record } = await approveOnNewKernel(operationId);

    assert.equal(await world.fileExists('unguarded.txt'), false);
    assert.equal(receiver.to('/gate').length, 0);
    assert.equal(record.status, 'error');
    assert.equal(record.error?.code, 'HOOK_RESTORE_FAILED');
  });

  it('either way, the tool never runs without its policy (the approve is refused)', async () => {
    for (const garbage of ['{ this is not json', JSON.stringify({ id: 'gate', type: 'beforeToolCall', handler: 'gone' })]) {
      const operationId = await parkAndCorrupt(garbage);
      const { approveError, record } = await approveOnNewKernel(operationId);
      assert.ok(approveError !== undefined || record.status === 'error', `approve with ${garbage} neither failed nor errored the operation`);
      assert.notEqual(record.status, 'done');
      assert.equal(await world.fileExists('unguarded.txt'), false);
      assert.equal(receiver.to('/gate').length, 0);
    }
  });
});
