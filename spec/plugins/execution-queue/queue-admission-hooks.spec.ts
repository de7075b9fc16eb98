import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, type Kernel } from '../../../index.js';
import { defineHook } from '../../../threads.js';
import { loadConfig } from '../../../config/load-config.js';
import { loadAgentFile } from '../../../config/agent-file.js';
import type { HookgateConfig } from '../../../config/defaults.js';
import { isHookgateError } from '../../../kernel/errors.js';
import { dropPrefix, killWorker, startWorker, uniquePrefix, until, writeProbePlugin, writeQueueConfig, type WorkerProcess } from './queue-fixtures.js';

/** Answers once; its assistant message goes through the thread hooks of whichever process runs the step. */
const TAGGED_AGENT = `id: tagged
model:
  provider: scripted
  turns:
    - text: answered
threadHooks: [mark_runner]
`;

const PLAIN_AGENT = `id: plain
model:
  provider: scripted
  turns:
    - text: answered
`;

/** A hooks-folder thread hook: the assistant message it stores names the process that ran the step. */
const MARK_HOOK = `import { defineHook } from 'hookgate/threads';
export default defineHook({
  hook: 'before_create_message',
  id: 'mark_runner',
  execute: async (_state, message) => (message.role === 'assistant' ? { ...message, content: message.content + ' [pid ' + process.pid + ']' } : message),
});
`;

/**
 * Issue 16 item 3 and document 000's queue mode: steps run in workers, so
 * hooks that exist only as functions in the admitting process are refused
 * at admission, naming the hook, instead of being skipped; hooks workers
 * load themselves (the hooks folder) run in the worker.
 */
describe('execution-queue: hooks that exist only in the admitting process', function () {
  this.timeout(60_000);
  let dir: string;
  let prefix: string;
  let api: Kernel<HookgateConfig> | undefined;
  let worker: WorkerProcess | undefined;

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-queue-admission-')));
    prefix = uniquePrefix();
    await writeQueueConfig(dir, prefix, await writeProbePlugin(dir));
    await writeFile(path.join(dir, 'tagged.yaml'), TAGGED_AGENT);
    await writeFile(path.join(dir, 'plain.yaml'), PLAIN_AGENT);
    await mkdir(path.join(dir, 'agents', 'hooks'), { recursive: true });
    await writeFile(path.join(dir, 'agents', 'hooks', 'mark-runner.mjs'), MARK_HOOK);
    api = createKernel({ config: loadConfig({ cwd: dir, env: {} }), env: {} });
    await api.start();
    loadAgentFile(path.join(dir, 'tagged.yaml'), api.agents);
    loadAgentFile(path.join(dir, 'plain.yaml'), api.agents);
  });
  afterEach(async () => {
    if (worker) await killWorker(worker);
    worker = undefined;
    await api?.stop();
    api = undefined;
    await dropPrefix(prefix);
    await rm(dir, { recursive: true, force: true });
  });

  it('a lifecycle hook with only a handler is refused at admission with QUEUE_HOOK_UNAVAILABLE naming it; nothing is stored', async () => {
    let called = 0;
    await assert.rejects(
      api!.execAgent({
        agentId: 'plain',
        prompt: 'hi',
        hooks: [
          { id: 'audit-webhook', type: 'onComplete', webhook: { url: 'http://127.0.0.1:9/hook' } },
          { id: 'audit-in-memory', type: 'onComplete', handler: () => void (called += 1) },
        ],
      }),
      (err: unknown) => {
        assert.ok(isHookgateError(err, 'QUEUE_HOOK_UNAVAILABLE'), String(err));
        assert.match(err.message, /hooks\[1\] "audit-in-memory" \(onComplete\) has a handler and no webhook/);
        assert.match(err.message, /execution: queue/);
        assert.equal(err.details.hookId, 'audit-in-memory');
        return true;
      },
    );
    assert.deepEqual(await api!.store.listOperations(), [], 'nothing was stored');
    assert.equal(called, 0);
  });

  it('a thread hook given in code is refused at admission naming its id; nothing is stored', async () => {
    await assert.rejects(
      api!.execAgent({ agentId: 'plain', prompt: 'hi', threadHooks: [defineHook({ hook: 'before_create_message', id: 'code_only', execute: (_s, m) => m })] }),
      (err: unknown) => {
        assert.ok(isHookgateError(err, 'QUEUE_HOOK_UNAVAILABLE'), String(err));
        assert.match(err.message, /threadHooks\[0\] "code_only" is given in code/);
        assert.match(err.message, /hooks folder/);
        return true;
      },
    );
    assert.deepEqual(await api!.store.listOperations(), [], 'nothing was stored');
  });

  it('a thread hook from the hooks folder, selected by the agent, runs in the worker that runs the step', async () => {
    worker = await startWorker(dir);
    const { operationId } = await api!.execAgent({ agentId: 'tagged', prompt: 'hi' });
    await until(async () => (await api!.getOperation(operationId))?.status === 'done', 30_000, 'the operation to finish');
    const assistant = (await api!.store.listMessages(operationId)).filter((m) => m.role === 'assistant');
    assert.deepEqual(assistant.map((m) => m.content), [`answered [pid ${worker.child.pid}]`]);
  });
});
