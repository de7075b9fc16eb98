import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, loadConfig } from '../../../index.js';
import { HookDispatcher } from '../../../kernel/hooks/hook-dispatcher.js';
import type { BeforeToolCallEvent } from '../../../kernel/hooks/hook-types.js';
import type { Kernel } from '../../../kernel/kernel.js';
import type { HookgateConfig } from '../../../config/defaults.js';
import { createLogger, type LogRecord } from '../../../kernel/logger.js';
import { hook, recordHooks } from '../../helpers/runtime-fixtures.js';

const never = () => new Promise<never>(() => undefined);

/**
 * Issue 9, item 12 (hook part): a local handler that never settles is bounded
 * by `hooks.handlerTimeoutMs` (here 200 ms, set the way an operator would, via
 * HOOKGATE_HOOKS__HANDLER_TIMEOUT_MS). It is logged as that hook's error and
 * treated like a handler that threw: the run goes on.
 */
describe('hook handler timeout (hooks.handlerTimeoutMs)', function () {
  this.timeout(20_000);
  let dir: string;
  let kernel: Kernel<HookgateConfig>;
  let logs: LogRecord[];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-hook-timeout-')));
    const config = loadConfig({ cwd: dir, env: { HOOKGATE_STORE__DRIVER: 'memory', HOOKGATE_HOOKS__HANDLER_TIMEOUT_MS: '200' } });
    assert.equal(config.hooks.handlerTimeoutMs, 200);
    logs = [];
    kernel = createKernel({ config, env: {}, logger: createLogger({ level: 'debug', sink: (_l, r) => logs.push(r) }) });
    await kernel.start();
    kernel.agents.define({
      id: 'writer',
      tools: ['fs/*'],
      model: { provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'fs', apiName: 'writeFile', args: { path: 'out.txt', content: 'real' } }] }, { text: 'done' }] },
    });
  });
  afterEach(async () => {
    await kernel.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a notification handler that never settles is logged with its id and type, and later hooks and the run go on', async () => {
    const rec = recordHooks(['afterStep', 'onComplete']);
    const handle = await kernel.execAgent({
      agentId: 'writer',
      prompt: 'go',
      hooks: [hook('afterStep', never, { id: 'hangs-after-step' }), hook('onComplete', never, { id: 'hangs-on-complete' }), ...rec.hooks],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal(final.reason, 'done');
    assert.ok(rec.of('afterStep').length >= 2, 'the recorder after the hung hook still got every afterStep');
    assert.equal(rec.of('onComplete').length, 1);
    const timedOut = logs.filter((l) => l.level === 'error' && l.hookId === 'hangs-after-step');
    assert.ok(timedOut.length >= 2);
    for (const l of timedOut) {
      assert.equal(l.hookType, 'afterStep');
      assert.equal(l.operationId, handle.operationId);
      assert.match(String(l.error), /hook "hangs-after-step" \(afterStep\) handler did not settle within 200 ms/);
    }
  });

  it('a beforeToolCall handler that never settles does not mock: the tool runs, and its late mock() is refused', async () => {
    let saved: BeforeToolCallEvent | undefined;
    const rec = recordHooks(['afterToolCall']);
    const handle = await kernel.execAgent({
      agentId: 'writer',
      prompt: 'go',
      hooks: [
        hook('beforeToolCall', (e) => {
          saved = e;
          return never();
        }, { id: 'hangs-before-tool' }),
        ...rec.hooks,
      ],
    });
    const final = await handle.completed();
    assert.equal(final.status, 'done');
    assert.equal(rec.of('afterToolCall')[0]!.mocked, false);
    assert.equal(existsSync(path.join(kernel.config.sandbox.root, 'out.txt')), true);
    assert.equal(saved!.mock({ content: 'too late' }), false);
    const [tool] = (await kernel.listMessages(handle.operationId)).filter((m) => m.role === 'tool');
    assert.notEqual(tool!.content, 'too late');
    const log = logs.find((l) => l.level === 'error' && l.hookId === 'hangs-before-tool');
    assert.equal(log?.hookType, 'beforeToolCall');
    assert.match(String(log?.error), /did not settle within 200 ms/);
  });

  it('a handler that settles in time is not affected, and the default bound is 30,000 ms', async () => {
    assert.equal(loadConfig({ cwd: dir, env: {} }).hooks.handlerTimeoutMs, 30_000);
    const d = new HookDispatcher({ logger: createLogger({ level: 'silent' }), handlerTimeoutMs: 200 });
    const seen: string[] = [];
    d.register('op', [hook('afterStep', async () => void seen.push('async')), hook('afterStep', () => void seen.push('sync'))]);
    await d.dispatch('op', 'afterStep', { operationId: 'op' } as never);
    assert.deepEqual(seen, ['async', 'sync']);
  });

  for (const bad of ['0', '-5', '2.5', 'soon', '3600001']) {
    it(`refuses hooks.handlerTimeoutMs = ${bad}, naming the variable and the key`, () => {
      assert.throws(
        () => loadConfig({ cwd: dir, env: { HOOKGATE_HOOKS__HANDLER_TIMEOUT_MS: bad } }),
        (err: Error & { code?: string }) => err.code === 'CONFIG_INVALID' && /HOOKGATE_HOOKS__HANDLER_TIMEOUT_MS: hooks\.handlerTimeoutMs: expected /.test(err.message),
      );
    });
  }
});
