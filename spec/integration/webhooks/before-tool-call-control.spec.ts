import assert from 'node:assert/strict';
import type { Kernel } from '../../../kernel/kernel.js';
import type { LogRecord } from '../../../kernel/logger.js';
import { hook } from '../../helpers/runtime-fixtures.js';
import { allow, deny, type RecordingReceiver } from '../../helpers/webhook-receiver.js';
import { control, defineAgent, fsCall, toolMessages, useWebhookWorld, type World } from './harness.js';

/**
 * beforeToolCall controls through the real kernel: a real SQLite file, the
 * builtin fs tools writing into the sandbox, and a loopback receiver deciding.
 */
describe('integration: beforeToolCall control webhooks', function () {
  this.timeout(15_000);
  let world: World;
  let kernel: Kernel;
  let receiver: RecordingReceiver;

  useWebhookWorld((s) => ({ world, receiver } = s));
  beforeEach(async () => {
    kernel = await world.boot();
    defineAgent(kernel, 'writer', [fsCall('writeFile', { path: 'out.txt', content: 'hello' }), { text: 'finished' }]);
  });

  async function run(hooks: Parameters<Kernel['execAgent']>[0]['hooks']) {
    const handle = await kernel.execAgent({ agentId: 'writer', prompt: 'write the file', hooks });
    const record = await handle.completed();
    const [tool] = await toolMessages(kernel, handle.operationId);
    return { record, tool: tool!, operationId: handle.operationId };
  }

  it('a deny keeps the tool from running and stores hook_denied with the reason', async () => {
    receiver.route('/gate', deny('writes are frozen'));
    const { record, tool } = await run([control('gate', 'beforeToolCall', receiver.url('/gate'))]);

    assert.equal(record.status, 'done');
    assert.equal(await world.fileExists('out.txt'), false);
    assert.equal(tool.toolResult?.error, 'hook_denied');
    assert.equal(tool.content, 'writes are frozen');
    assert.deepEqual(tool.toolResult?.state, { type: 'blocked', reason: 'writes are frozen' });
    assert.equal(receiver.to('/gate').length, 1);
    assert.equal(receiver.to('/gate')[0]!.body.apiName, 'writeFile');
    assert.deepEqual(receiver.to('/gate')[0]!.body.args, { path: 'out.txt', content: 'hello' });
  });

  it('an allow lets the tool run', async () => {
    receiver.route('/gate', allow());
    const { tool } = await run([control('gate', 'beforeToolCall', receiver.url('/gate'))]);

    assert.equal(await world.readSandbox('out.txt'), 'hello');
    assert.equal(tool.toolResult?.success, true);
    assert.equal(tool.toolResult?.error, undefined);
    assert.equal(receiver.to('/gate').length, 1);
  });

  it('a notification answer (204) moves on to the next control, which denies', async () => {
    receiver.route('/observe', { status: 204 }).route('/gate', deny('second control says no'));
    const { tool } = await run([
      control('observe', 'beforeToolCall', receiver.url('/observe')),
      control('gate', 'beforeToolCall', receiver.url('/gate')),
    ]);

    assert.deepEqual(
      receiver.requests.map((r) => r.path),
      ['/observe', '/gate'],
    );
    assert.equal(await world.fileExists('out.txt'), false);
    assert.equal(tool.toolResult?.error, 'hook_denied');
    assert.equal(tool.content, 'second control says no');
  });

  it('onError block on a 500 gives hook_control_error and the tool does not run', async () => {
    receiver.route('/gate', { status: 500, body: 'internal error' });
    const { record, tool } = await run([control('gate', 'beforeToolCall', receiver.url('/gate'), { onError: 'block' })]);

    assert.equal(record.status, 'done');
    assert.equal(await world.fileExists('out.txt'), false);
    assert.equal(tool.toolResult?.error, 'hook_control_error');
    assert.equal(tool.content, 'hook_control_error');
  });

  it('a timeout (receiver hangs, timeout 1 s) with onError continue lets the tool run', async () => {
    receiver.route('/gate', { hang: true });
    // A local beforeToolCall handler runs after the control walk and before the tool: what it sees is the order of events.
    let beforeTool: { gateFailure: unknown; fileExisted: boolean } | undefined;
    const observeBeforeTool = hook('beforeToolCall', async () => {
      const failure = world.logLines.map((l) => JSON.parse(l) as LogRecord).find((r) => r.msg === 'control webhook failed' && r.hookId === 'gate');
      // Waits until the client (not the receiver) has closed the hanging request; if it never does, the handler fails and beforeTool stays unset.
      await receiver.waitFor(([gate]) => gate?.abandoned === true);
      beforeTool = { gateFailure: failure?.reason, fileExisted: await world.fileExists('out.txt') };
    });
    const { tool } = await run([control('gate', 'beforeToolCall', receiver.url('/gate'), { timeout: 1, onError: 'continue' }), observeBeforeTool]);

    assert.equal(receiver.to('/gate').length, 1);
    assert.deepEqual(beforeTool, { gateFailure: 'timeout', fileExisted: false }, 'the runtime waited for the timeout, gave up the request, then ran the tool');
    assert.equal(await world.readSandbox('out.txt'), 'hello');
    assert.equal(tool.toolResult?.success, true);
  });
});
