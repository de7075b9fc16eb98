import 'reflect-metadata';
import { container as rootContainer } from 'tsyringe';
import type { PluginContext, Plugin } from '../../../kernel/plugin.js';
import type { Token } from '../../../kernel/token.js';

/**
 * A minimal stand-in for the kernel's plugin context (a real tsyringe child
 * container), so a plugin's register/start can run without the whole kernel.
 */
export function createPluginContext(plugin: Plugin, values: Array<[Token<unknown>, unknown]>): PluginContext {
  const container = rootContainer.createChildContainer();
  for (const [token, value] of values) container.register(token.key, { useValue: value });
  const ctx: PluginContext = {
    container,
    pluginId: plugin.id,
    settings: undefined,
    state: plugin.state?.(),
    resolve: <T>(token: Token<T>) => container.resolve<T>(token.key),
    resolveAll: <T>(token: Token<T>) => (container.isRegistered(token.key, true) ? container.resolveAll<T>(token.key) : []),
    has: (token) => container.isRegistered(token.key, true),
    bindValue: (token, value) => {
      if (!plugin.provides?.includes(token)) throw new Error(`${plugin.id} bound ${token.id} without providing it`);
      container.register(token.key, { useValue: value });
    },
    bindFactory: (token, factory) => {
      if (!plugin.provides?.includes(token)) throw new Error(`${plugin.id} bound ${token.id} without providing it`);
      container.register(token.key, { useFactory: () => factory(ctx) });
    },
  };
  return ctx;
}
