import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { allow, type RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { control, defineAgent, fsCall, useWebhookWorld, type World } from './harness.js';

/**
 * A parked operation whose persisted hook list was damaged on disk: a new
 * kernel that approves it must fail the operation (status `error`) rather
 * than run the tool without the caller's policy.
 */
describe('integration: corrupt persisted hooks fail the operation', function () {
  this.timeout(15_000);
  let world: World;
  let receiver: RecordingReceiver;

  useWebhookWorld((s) => {
    ({ world, receiver } = s);
    receiver.route('/gate', allow());
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

  /** Approves on a fresh kernel and waits for the terminal state. */
  async function approveOnNewKernel(operationId: string) {
    const kernelB = await world.boot();
    const record = await (await kernelB.approve(operationId)).completed();
    return { kernelB, record };
  }

  it('a row that is not JSON: approve on a new kernel ends the operation with status error, tool not run', async () => {
    const operationId = await parkAndCorrupt('{ this is not json');
    const { kernelB, record } = await approveOnNewKernel(operationId);

    assert.equal(record.status, 'error');
    assert.equal(record.reason, 'error');
    assert.equal(await world.fileExists('unguarded.txt'), false);
    assert.equal(receiver.to('/gate').length, 0);
    assert.equal((await kernelB.getOperation(operationId))!.status, 'error', 'the error is persisted');
  });

  it('a row that is JSON but not a webhook hook: approve on a new kernel ends the operation with HOOK_RESTORE_FAILED, tool not run', async () => {
    const operationId = await parkAndCorrupt(JSON.stringify({ id: 'gate', type: 'beforeToolCall', handler: 'gone' }));
    const { record } = await approveOnNewKernel(operationId);

    assert.equal(record.status, 'error');
    assert.equal(record.error?.code, 'HOOK_RESTORE_FAILED');
    assert.equal(await world.fileExists('unguarded.txt'), false);
    assert.equal(receiver.to('/gate').length, 0);
  });

  // A store read failure (here JSON.parse) must not surface as a parser message that may quote the row.
  it('a row that is not JSON: the operation error is HOOK_RESTORE_FAILED', async () => {
    const operationId = await parkAndCorrupt('{ this is not json');
    const { record } = await approveOnNewKernel(operationId);

    assert.equal(record.error?.code, 'HOOK_RESTORE_FAILED');
  });
});
