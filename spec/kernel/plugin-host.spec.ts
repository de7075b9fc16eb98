import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { container as globalContainer } from 'tsyringe';
import { withDefaults } from '../../config/defaults.js';
import { HookgateError, isHookgateError } from '../../kernel/errors.js';
import { Kernel } from '../../kernel/kernel.js';
import { definePlugin, type Plugin, type PluginContext } from '../../kernel/plugin.js';
import { PluginHost } from '../../kernel/plugin-host.js';
import { createToken, type Token } from '../../kernel/token.js';
import { Config, Logger, Secrets, Store } from '../../kernel/tokens.js';
import storeMemory from '../../plugins/store-memory/index.js';

const CORE: readonly Token<unknown>[] = [Config, Logger, Secrets];
const A = createToken<string>('spec.a');
const B = createToken<string>('spec.b');
const C = createToken<string>('spec.c');

interface Options {
  requires?: Token<unknown>[];
  provides?: Token<unknown>[];
  start?: (ctx: PluginContext) => void | Promise<void>;
  stop?: (ctx: PluginContext) => void | Promise<void>;
}

/** A plugin that binds `<id>` to every token it provides and records its lifecycle calls in `calls`. */
function plugin(calls: string[], id: string, options: Options = {}): Plugin {
  const provides = options.provides ?? [];
  return definePlugin({
    id,
    requires: options.requires,
    provides,
    register: (ctx) => {
      for (const t of provides) ctx.bindValue(t, id);
    },
    start: async (ctx) => {
      calls.push(`start:${id}`);
      await options.start?.(ctx);
    },
    stop: async (ctx) => {
      calls.push(`stop:${id}`);
      await options.stop?.(ctx);
    },
  });
}

function hostWith(...plugins: Plugin[]): PluginHost {
  const host = new PluginHost(CORE);
  for (const p of plugins) host.add(p);
  return host;
}

async function caught(promise: Promise<unknown>): Promise<HookgateError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(isHookgateError(err), `expected a HookgateError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

describe('plugin host lifecycle', () => {
  it('starts plugins in dependency order, whatever order they were added in', async () => {
    const calls: string[] = [];
    const host = hostWith(
      plugin(calls, 'web', { requires: [B] }),
      plugin(calls, 'cache', { requires: [A], provides: [B] }),
      plugin(calls, 'db', { provides: [A] }),
    );
    await host.start();
    assert.deepEqual(calls, ['start:db', 'start:cache', 'start:web']);
  });

  it('stops plugins in reverse start order', async () => {
    const calls: string[] = [];
    const host = hostWith(plugin(calls, 'web', { requires: [A] }), plugin(calls, 'db', { provides: [A] }), plugin(calls, 'other'));
    await host.start();
    calls.length = 0;
    await host.stop();
    assert.deepEqual(calls, ['stop:other', 'stop:web', 'stop:db']);
  });

  it('marks every plugin started, then stopped', async () => {
    const host = hostWith(plugin([], 'one'), plugin([], 'two'));
    await host.start();
    assert.deepEqual(host.status().map((s) => s.state), ['started', 'started']);
    await host.stop();
    assert.deepEqual(host.status().map((s) => s.state), ['stopped', 'stopped']);
  });

  it('calls each plugin stop once, however often stop() is called', async () => {
    const calls: string[] = [];
    const host = hostWith(plugin(calls, 'one'), plugin(calls, 'two'));
    await host.start();
    await Promise.all([host.stop(), host.stop()]);
    await host.stop();
    assert.deepEqual(calls.filter((c) => c.startsWith('stop:')), ['stop:two', 'stop:one']);
  });

  it('after a failed start, stops what started (and the failing plugin), never starts the rest, and wraps the error', async () => {
    const calls: string[] = [];
    const boom = new Error('disk full');
    const host = hostWith(
      plugin(calls, 'first'),
      plugin(calls, 'second'),
      plugin(calls, 'broken', { start: () => Promise.reject(boom) }),
      plugin(calls, 'later'),
    );
    const err = await caught(host.start());
    assert.equal(err.code, 'PLUGIN_START_FAILED');
    assert.match(err.message, /'broken'/);
    assert.match(err.message, /disk full/);
    assert.equal(err.cause, boom);
    assert.equal(err.details.pluginId, 'broken');
    // The failing plugin's stop runs too, so it can release what it acquired before failing (an open file, say).
    assert.deepEqual(calls, ['start:first', 'start:second', 'start:broken', 'stop:broken', 'stop:second', 'stop:first']);
    assert.deepEqual(
      host.status().map((s) => [s.id, s.state]),
      [['first', 'stopped'], ['second', 'stopped'], ['broken', 'failed'], ['later', 'registered']],
    );
  });

  it('lets stop() be called again after a failed start without stopping anything twice', async () => {
    const calls: string[] = [];
    const host = hostWith(plugin(calls, 'first'), plugin(calls, 'broken', { start: () => { throw new Error('no'); } }));
    await caught(host.start());
    await host.stop();
    assert.deepEqual(calls.filter((c) => c === 'stop:first'), ['stop:first']);
  });

  it('waits for a start in progress when stopped mid-start, stops it, and starts nothing after it', async () => {
    const calls: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let startedSignal!: () => void;
    const slowStarted = new Promise<void>((resolve) => (startedSignal = resolve));
    const host = hostWith(
      plugin(calls, 'first'),
      plugin(calls, 'slow', {
        start: async () => {
          startedSignal();
          await gate;
          calls.push('slow:ready');
        },
      }),
      plugin(calls, 'later'),
    );
    const starting = host.start();
    await slowStarted;
    const stopping = host.stop();
    release();
    const err = await caught(starting);
    await stopping;
    assert.equal(err.code, 'KERNEL_STOPPED');
    assert.match(err.message, /'slow'/);
    assert.deepEqual(calls, ['start:first', 'start:slow', 'slow:ready', 'stop:slow', 'stop:first']);
    assert.deepEqual(host.status().map((s) => s.state), ['stopped', 'stopped', 'registered']);
  });

  it('runs every stop even when one fails, then throws PLUGIN_STOP_FAILED naming that plugin', async () => {
    const calls: string[] = [];
    const boom = new Error('socket stuck');
    const host = hostWith(plugin(calls, 'first'), plugin(calls, 'sticky', { stop: () => { throw boom; } }), plugin(calls, 'last'));
    await host.start();
    calls.length = 0;
    const err = await caught(host.stop());
    assert.equal(err.code, 'PLUGIN_STOP_FAILED');
    assert.match(err.message, /'sticky'/);
    assert.equal(err.cause, boom);
    assert.deepEqual(calls, ['stop:last', 'stop:sticky', 'stop:first']);
    assert.equal(host.status().find((s) => s.id === 'sticky')?.state, 'failed');
  });

  it('wraps a failing register with PLUGIN_REGISTER_FAILED and the plugin id, starting nothing', async () => {
    const calls: string[] = [];
    const bad = definePlugin({ id: 'bad-register', register: () => { throw new Error('oops'); } });
    const err = await caught(hostWith(plugin(calls, 'fine'), bad).start());
    assert.equal(err.code, 'PLUGIN_REGISTER_FAILED');
    assert.match(err.message, /'bad-register'/);
    assert.deepEqual(calls, []);
  });

  it('refuses a binding for a token the plugin does not list in provides (PLUGIN_UNDECLARED_BINDING)', async () => {
    let bindError: unknown;
    const sneaky = definePlugin({
      id: 'sneaky',
      provides: [A],
      register: (ctx) => {
        try {
          ctx.bindValue(B, 'not mine');
        } catch (err) {
          bindError = err;
          throw err;
        }
      },
    });
    const host = hostWith(sneaky);
    const err = await caught(host.start());
    assert.equal(err.code, 'PLUGIN_REGISTER_FAILED');
    assert.ok(isHookgateError(bindError, 'PLUGIN_UNDECLARED_BINDING'));
    assert.match(bindError.message, /"sneaky"/);
    assert.match(bindError.message, /"spec\.b"/);
    assert.equal(host.has(B), false);
  });

  it('refuses a binding made outside register, even for a provided token (KERNEL_FROZEN)', async () => {
    let saved: PluginContext | undefined;
    let startError: unknown;
    const late = definePlugin({
      id: 'late-binder',
      provides: [A],
      register: (ctx) => {
        saved = ctx;
        ctx.bindValue(A, 'at register');
      },
      start: (ctx) => {
        try {
          ctx.bindValue(A, 'at start');
        } catch (err) {
          startError = err;
        }
      },
    });
    const host = hostWith(late);
    await host.start();
    assert.ok(isHookgateError(startError, 'KERNEL_FROZEN'));
    assert.throws(() => saved!.bindFactory(A, () => 'after start'), (err: unknown) => isHookgateError(err, 'KERNEL_FROZEN'));
    assert.equal(host.resolve(A), 'at register');
  });

  it('refuses a plugin added after start (KERNEL_FROZEN)', async () => {
    const host = hostWith(plugin([], 'one'));
    await host.start();
    assert.throws(() => host.add(plugin([], 'two')), (err: unknown) => isHookgateError(err, 'KERNEL_FROZEN') && /"two"/.test(err.message));
  });

  it('refuses a second start (KERNEL_FROZEN)', async () => {
    const host = hostWith(plugin([], 'one'));
    await host.start();
    const err = await caught(host.start());
    assert.equal(err.code, 'KERNEL_FROZEN');
  });

  it('collects every provider of a multi token, in start order', async () => {
    const Multi = createToken<string>('spec.multi', { multi: true });
    let seenByConsumer: string[] = [];
    const host = hostWith(
      plugin([], 'consumer', { requires: [Multi], start: (ctx) => void (seenByConsumer = ctx.resolveAll(Multi)) }),
      plugin([], 'one', { provides: [Multi] }),
      plugin([], 'two', { provides: [Multi] }),
    );
    await host.start();
    assert.deepEqual(host.resolveAll(Multi), ['one', 'two']);
    assert.deepEqual(seenByConsumer, ['one', 'two']);
  });

  it('resolves an unbound token with TOKEN_NOT_BOUND naming it, and an unbound multi token as an empty list', async () => {
    const Multi = createToken<string>('spec.nobody', { multi: true });
    const host = hostWith(plugin([], 'one'));
    await host.start();
    assert.throws(() => host.resolve(C), (err: unknown) => isHookgateError(err, 'TOKEN_NOT_BOUND') && /"spec\.c"/.test(err.message));
    assert.deepEqual(host.resolveAll(Multi), []);
  });
});

describe('kernel container and freeze', () => {
  let dir: string;
  const kernels: Kernel[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hookgate-kernel-'));
  });
  afterEach(async () => {
    for (const k of kernels.splice(0)) await k.stop();
    await rm(dir, { recursive: true, force: true });
  });

  function kernel(...plugins: Plugin[]): Kernel {
    const k = new Kernel({ config: withDefaults({ log: { level: 'silent' } }, dir), plugins: [storeMemory, ...plugins] });
    kernels.push(k);
    return k;
  }

  it('refuses kernel.use after start with KERNEL_FROZEN', async () => {
    const k = kernel();
    await k.start();
    assert.throws(() => k.use(plugin([], 'too-late')), (err: unknown) => isHookgateError(err, 'KERNEL_FROZEN'));
    assert.deepEqual(k.plugins().map((p) => p.id), ['store-memory']);
  });

  it('still accepts hooks for an operation after start', async () => {
    const k = kernel();
    await k.start();
    k.hooks.register('op_after_start', [{ id: 'log-steps', type: 'beforeStep', handler: () => undefined }]);
    assert.equal(k.hooks.hasHooks('op_after_start', 'beforeStep'), true);
  });

  it('gives each kernel its own child container and leaves the global container untouched', async () => {
    const Shared = createToken<string>('spec.shared');
    const provide = (value: string) => definePlugin({ id: 'shared', provides: [Shared], register: (ctx) => ctx.bindValue(Shared, value) });
    const one = kernel(provide('one'));
    const two = kernel(provide('two'));
    await one.start();
    await two.start();
    assert.equal(one.resolve(Shared), 'one');
    assert.equal(two.resolve(Shared), 'two');
    assert.notEqual(one.store, two.store);
    assert.equal(globalContainer.isRegistered(Shared.key, true), false);
    assert.equal(globalContainer.isRegistered(Store.key, true), false);
    assert.equal(globalContainer.isRegistered(Config.key, true), false);
  });

  it('reports a failed plugin start through kernel.start and the plugin list', async () => {
    const k = kernel(plugin([], 'broken', { start: () => { throw new Error('port in use'); } }));
    const err = await caught(k.start());
    assert.equal(err.code, 'PLUGIN_START_FAILED');
    assert.match(err.message, /'broken'.*port in use/);
    const broken = k.plugins().find((p) => p.id === 'broken');
    assert.equal(broken?.state, 'failed');
    assert.match(broken?.error ?? '', /port in use/);
    assert.equal(k.plugins().find((p) => p.id === 'store-memory')?.state, 'stopped');
  });
});
