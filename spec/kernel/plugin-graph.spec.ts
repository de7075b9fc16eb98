import assert from 'node:assert/strict';
import { isHookgateError } from '../../kernel/errors.js';
import { definePlugin, type Plugin } from '../../kernel/plugin.js';
import { orderPlugins } from '../../kernel/plugin-graph.js';
import { PluginHost } from '../../kernel/plugin-host.js';
import { createToken, type Token } from '../../kernel/token.js';
import { Config, Logger, Secrets } from '../../kernel/tokens.js';

const CORE: readonly Token<unknown>[] = [Config, Logger, Secrets];

/** A plugin that records register/start/stop calls into `calls`. */
function recording(calls: string[], id: string, requires: Token<unknown>[] = [], provides: Token<unknown>[] = []): Plugin {
  return definePlugin({
    id,
    requires,
    provides,
    register: (ctx) => {
      calls.push(`register:${id}`);
      for (const t of provides) ctx.bindValue(t, `${id}:${t.id}`);
    },
    start: () => void calls.push(`start:${id}`),
    stop: () => void calls.push(`stop:${id}`),
  });
}

/** Asserts that starting a host with these plugins fails with `code`, ran no plugin code, and returns the error. */
async function rejectsGraph(plugins: Plugin[], code: string): Promise<Error> {
  const calls: string[] = [];
  const host = new PluginHost(CORE);
  for (const p of plugins) host.add(spy(p, calls));
  let caught: unknown;
  await host.start().catch((err: unknown) => (caught = err));
  assert.ok(isHookgateError(caught), `expected a HookgateError, got ${String(caught)}`);
  assert.equal(caught.code, code);
  assert.deepEqual(calls, [], 'no plugin registered, started or stopped');
  return caught;
}

/** Wraps a plugin so every lifecycle call is recorded. */
function spy(p: Plugin, calls: string[]): Plugin {
  return {
    ...p,
    register: (ctx) => {
      calls.push(`register:${p.id}`);
      p.register(ctx);
    },
    start: (ctx) => {
      calls.push(`start:${p.id}`);
      return p.start?.(ctx);
    },
    stop: (ctx) => {
      calls.push(`stop:${p.id}`);
      return p.stop?.(ctx);
    },
  };
}

describe('plugin graph validation', () => {
  const A = createToken<string>('spec.a');
  const B = createToken<string>('spec.b');
  const C = createToken<string>('spec.c');
  const none: string[] = [];

  it('rejects a missing requirement, naming the plugin and the token', async () => {
    const err = await rejectsGraph([recording(none, 'needs-a', [A])], 'PLUGIN_MISSING_REQUIREMENT');
    assert.match(err.message, /"needs-a"/);
    assert.match(err.message, /"spec\.a"/);
  });

  it('rejects a two-plugin cycle and shows its path a -> b -> a', async () => {
    const err = await rejectsGraph([recording(none, 'a', [B], [A]), recording(none, 'b', [A], [B])], 'PLUGIN_CYCLE');
    assert.match(err.message, /a -> b -> a/);
  });

  it('rejects a three-plugin cycle and shows the whole path', async () => {
    const err = await rejectsGraph(
      [recording(none, 'a', [B], [A]), recording(none, 'b', [C], [B]), recording(none, 'c', [A], [C])],
      'PLUGIN_CYCLE',
    );
    assert.match(err.message, /a -> b -> c -> a/);
  });

  it('rejects two plugins with one id, naming the id', async () => {
    const err = await rejectsGraph([recording(none, 'twin'), recording(none, 'twin')], 'PLUGIN_DUPLICATE_ID');
    assert.match(err.message, /"twin"/);
  });

  it('rejects an id that is not kebab-case, naming it', async () => {
    const err = await rejectsGraph([recording(none, 'Store_SQLite')], 'PLUGIN_INVALID_ID');
    assert.match(err.message, /"Store_SQLite"/);
  });

  it('rejects an empty id', async () => {
    const err = await rejectsGraph([recording(none, '')], 'PLUGIN_INVALID_ID');
    assert.match(err.message, /""/);
  });

  it('rejects two providers of a single token, naming both plugins and the token', async () => {
    const err = await rejectsGraph([recording(none, 'first', [], [A]), recording(none, 'second', [], [A])], 'PLUGIN_DUPLICATE_PROVIDER');
    assert.match(err.message, /"first"/);
    assert.match(err.message, /"second"/);
    assert.match(err.message, /"spec\.a"/);
  });

  it('counts a plugin that lists a single token twice in provides as one provider', () => {
    const order = orderPlugins([recording(none, 'listed-twice', [], [A, A]), recording(none, 'consumer', [A])], CORE);
    assert.deepEqual(order.map((p) => p.id), ['listed-twice', 'consumer']);
  });

  it('rejects a plugin that provides a token the kernel binds itself', async () => {
    const err = await rejectsGraph([recording(none, 'fake-config', [], [Config])], 'PLUGIN_DUPLICATE_PROVIDER');
    assert.match(err.message, /"fake-config"/);
    assert.match(err.message, /"kernel\.config"/);
  });

  it('starts nothing when a later plugin makes the graph invalid', async () => {
    // Valid plugins come first, so a host that started eagerly would have called them.
    await rejectsGraph([recording(none, 'fine', [], [A]), recording(none, 'also-fine', [A]), recording(none, 'broken', [C])], 'PLUGIN_MISSING_REQUIREMENT');
  });

  it('accepts a requirement on a core token without any provider', () => {
    const order = orderPlugins([recording(none, 'uses-core', [Config, Logger])], CORE);
    assert.deepEqual(order.map((p) => p.id), ['uses-core']);
  });

  it('accepts a missing optional requirement, and orders an optional provider first', () => {
    const consumer = definePlugin({ id: 'consumer', optional: [A], register: () => undefined });
    assert.deepEqual(orderPlugins([consumer], CORE).map((p) => p.id), ['consumer']);
    const provider = recording(none, 'provider', [], [A]);
    assert.deepEqual(orderPlugins([consumer, provider], CORE).map((p) => p.id), ['provider', 'consumer']);
  });

  it('orders providers before consumers and keeps the given order otherwise', () => {
    const order = orderPlugins(
      [recording(none, 'needs-b', [B]), recording(none, 'free'), recording(none, 'gives-b', [A], [B]), recording(none, 'gives-a', [], [A])],
      CORE,
    );
    assert.deepEqual(order.map((p) => p.id), ['gives-a', 'gives-b', 'needs-b', 'free']);
  });

  it('lets several plugins provide a multi token and orders all of them before the consumer', () => {
    const Multi = createToken<string>('spec.multi', { multi: true });
    const order = orderPlugins([recording(none, 'consumer', [Multi]), recording(none, 'one', [], [Multi]), recording(none, 'two', [], [Multi])], CORE);
    assert.deepEqual(order.map((p) => p.id), ['one', 'two', 'consumer']);
  });
});
