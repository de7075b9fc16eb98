import assert from 'node:assert/strict';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createKernel, definePlugin, Hooks, isHookgateError, loadConfig, Operations, Store, type Kernel, type Plugin } from '../../index.js';
import { HookDispatcher } from '../../kernel/hooks/hook-dispatcher.js';

const SCRIPTED = { id: 'from-ready', model: { provider: 'scripted', turns: [{ text: 'hello from ready' }] } };

/** Issue 11 item 5: a `ready` phase with the runtime-facing tokens, and the stop order after it. */
describe('kernel: the ready phase', () => {
  let dir: string;
  const kernels: Kernel[] = [];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-ready-')));
    await writeFile(path.join(dir, 'hookgate.config.yaml'), 'store: { driver: memory }\n');
  });
  afterEach(async () => {
    for (const k of kernels.splice(0)) await k.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  function kernelWith(plugins: Plugin[]): Kernel {
    const k = createKernel({ config: loadConfig({ cwd: dir, env: {} }), plugins, env: {} });
    kernels.push(k);
    return k;
  }

  it('runs after every plugin started, in start order, with Operations, Hooks and Store resolvable; an operation it starts runs to done', async () => {
    const calls: string[] = [];
    let started: string | undefined;
    const first = definePlugin({
      id: 'first',
      register() {},
      start: () => void calls.push('start:first'),
      ready: () => void calls.push('ready:first'),
    });
    const second = definePlugin({
      id: 'second',
      requires: [Store],
      register() {},
      start: () => void calls.push('start:second'),
      async ready(ctx) {
        calls.push('ready:second');
        assert.ok(ctx.resolve(Hooks) instanceof HookDispatcher);
        assert.equal(typeof ctx.resolve(Store).getOperation, 'function');
        const run = await ctx.resolve(Operations).execAgent({ agent: SCRIPTED as never, prompt: 'go' });
        started = run.operationId;
      },
    });
    const k = kernelWith([first, second]);
    await k.start();
    assert.deepEqual(calls, ['start:first', 'start:second', 'ready:first', 'ready:second']);
    assert.ok(started);
    const done = await k.waitForOperation(started);
    assert.equal(done.status, 'done');
    const messages = await k.listMessages(started);
    assert.equal(messages.at(-1)?.content, 'hello from ready');
    assert.equal(k.resolve(Operations), k.operations);
  });

  it('Operations and Hooks are not resolvable in register or start, with a message that says when they are', async () => {
    const errors: string[] = [];
    const early = definePlugin({
      id: 'early',
      requires: [Operations],
      register(ctx) {
        try {
          ctx.resolve(Operations);
        } catch (err) {
          errors.push(String((err as Error).message));
        }
      },
      start(ctx) {
        try {
          ctx.resolve(Hooks);
        } catch (err) {
          errors.push(String((err as Error).message));
        }
      },
    });
    await kernelWith([early]).start();
    assert.equal(errors.length, 2);
    assert.match(errors[0]!, /"kernel\.operations" is bound once the agent runtime is built: resolve it in a plugin's ready phase/);
    assert.match(errors[1]!, /"kernel\.hooks" is bound once the agent runtime is built/);
  });

  it('a failing ready fails kernel.start() naming the plugin (PLUGIN_READY_FAILED) and stops everything that started', async () => {
    const calls: string[] = [];
    const ok = definePlugin({ id: 'fine', register() {}, stop: () => void calls.push('stop:fine') });
    const bad = definePlugin({
      id: 'broken-ready',
      register() {},
      stop: () => void calls.push('stop:broken-ready'),
      ready() {
        throw new Error('no queue to listen on');
      },
    });
    const late = definePlugin({ id: 'late', register() {}, ready: () => void calls.push('ready:late') });
    const k = kernelWith([ok, bad, late]);
    await assert.rejects(k.start(), (err: unknown) => {
      assert.ok(isHookgateError(err));
      assert.equal(err.code, 'PLUGIN_READY_FAILED');
      assert.equal(err.message, "plugin 'broken-ready' failed in its ready phase: no queue to listen on");
      assert.deepEqual(err.details, { pluginId: 'broken-ready' });
      return true;
    });
    assert.ok(!calls.includes('ready:late'), 'a plugin after the failing one never gets ready');
    assert.ok(calls.includes('stop:fine') && calls.includes('stop:broken-ready'), calls.join(', '));
    assert.equal(k.plugins().find((p) => p.id === 'broken-ready')?.state, 'failed');
    await assert.rejects(k.execAgent({ agent: SCRIPTED as never, prompt: 'x' }), (err: unknown) => isHookgateError(err) && err.code === 'KERNEL_STOPPED');
  });

  it('stop: new work is refused before any plugin stops, so a plugin stopping after its ready cannot start more', async () => {
    let refused: unknown;
    let resolvedWait: unknown;
    let opId = '';
    const worker = definePlugin({
      id: 'queue-worker',
      state: (): { operations?: Operations } => ({}),
      register() {},
      async ready(ctx) {
        ctx.state.operations = ctx.resolve(Operations);
        opId = (await ctx.state.operations.execAgent({ agent: SCRIPTED as never, prompt: 'one' })).operationId;
        resolvedWait = (await ctx.state.operations.wait(opId)).status;
      },
      async stop(ctx) {
        try {
          await ctx.state.operations!.execAgent({ agent: SCRIPTED as never, prompt: 'two' });
        } catch (err) {
          refused = err;
        }
      },
    });
    const k = kernelWith([worker]);
    await k.start();
    assert.equal(resolvedWait, 'done');
    await k.stop();
    assert.ok(isHookgateError(refused), `expected a refusal, got ${String(refused)}`);
    assert.equal(refused.code, 'KERNEL_STOPPED');
    assert.match(refused.message, /stopping; it accepts no new work/);
  });
});

/** Issue 11 item 5: plugin state lives with the plugin instance of one kernel, never in a module-level map. */
describe('kernel: per-kernel plugin state', () => {
  const dirs: string[] = [];
  const kernels: Kernel[] = [];
  afterEach(async () => {
    for (const k of kernels.splice(0)) await k.stop().catch(() => undefined);
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  async function kernelIn(yaml: string, plugins: Plugin[] = []): Promise<Kernel> {
    const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'hookgate-state-')));
    dirs.push(dir);
    await writeFile(path.join(dir, 'hookgate.config.yaml'), yaml);
    const k = createKernel({ config: loadConfig({ cwd: dir, env: {} }), plugins, env: {} });
    kernels.push(k);
    return k;
  }

  it('one plugin object in two kernels: each kernel gets its own state, made once, the same in every phase', async () => {
    let made = 0;
    const seen: Array<[string, { n: number; phases: string[] }]> = [];
    const counter = definePlugin({
      id: 'counter',
      state: () => ({ n: ++made, phases: [] as string[] }),
      register: (ctx) => void ctx.state.phases.push('register'),
      start: (ctx) => void ctx.state.phases.push('start'),
      ready: (ctx) => void ctx.state.phases.push('ready'),
      stop: (ctx) => void seen.push([ctx.pluginId, ctx.state]),
    });
    const a = await kernelIn('store: { driver: memory }\n', [counter]);
    const b = await kernelIn('store: { driver: memory }\n', [counter]);
    await a.start();
    await b.start();
    await a.stop();
    await b.stop();
    assert.equal(made, 2);
    assert.deepEqual(seen.map(([, s]) => s.n), [1, 2]);
    for (const [, s] of seen) assert.deepEqual(s.phases, ['register', 'start', 'ready']);
    assert.notEqual(seen[0]![1], seen[1]![1]);
  });

  it('two kernels in one process keep their own policy engine and sandbox: stopping one leaves the other working', async () => {
    const agent = {
      id: 'writer',
      tools: ['fs/*'],
      model: { provider: 'scripted', turns: [{ toolCalls: [{ identifier: 'fs', apiName: 'writeFile', args: { path: 'a.txt', content: 'x' } }] }, { text: 'written' }] },
    };
    const a = await kernelIn('store: { driver: memory }\n');
    const b = await kernelIn('store: { driver: memory }\n');
    await a.start();
    await b.start();
    await a.stop();
    const run = await b.execAgent({ agent: agent as never, prompt: 'write' });
    const final = await run.completed();
    assert.equal(final.status, 'done');
    const tool = (await b.listMessages(run.operationId)).find((m) => m.role === 'tool');
    assert.match(String(tool?.content), /a\.txt/);
    const bConfig = b.config as { sandbox?: { root: string } };
    assert.notEqual(bConfig.sandbox?.root, (a.config as { sandbox?: { root: string } }).sandbox?.root);
  });
});
