/**
 * hookgate's library surface: `createKernel(config)` with the plugins the
 * config selects, the Kernel and HookDispatcher of document 000, and the
 * contracts a plugin author needs.
 */
import type { HookgateConfig } from './config/defaults.js';
import { loadConfig, type LoadConfigOptions } from './config/load-config.js';
import { Kernel, type KernelOptions } from './kernel/kernel.js';
import type { Plugin } from './kernel/plugin.js';
import { pluginsForConfig } from './plugins/catalog.js';

export * from './kernel/index.js';
export { loadConfig, type LoadConfigOptions } from './config/load-config.js';
export { loadAgentFile } from './config/agent-file.js';
export type { HookgateConfig } from './config/defaults.js';
export { pluginsForConfig } from './plugins/catalog.js';

export interface CreateKernelOptions extends Omit<KernelOptions, 'config' | 'plugins'> {
  /** A loaded config, or how to load one (file, cwd, env); default: ./hookgate.config.yaml or embedded defaults. */
  config?: HookgateConfig | LoadConfigOptions;
  /** Plugins added after the ones the config selects. */
  plugins?: readonly Plugin[];
  /** Replaces the config's plugin selection entirely. */
  replacePlugins?: readonly Plugin[];
}

/** Builds a kernel with the plugins the config selects (not started: call `start()`). */
export function createKernel(options: CreateKernelOptions = {}): Kernel {
  const config = isLoaded(options.config) ? options.config : loadConfig(options.config ?? {});
  const plugins = options.replacePlugins ?? [...pluginsForConfig(config), ...(options.plugins ?? [])];
  return new Kernel({ ...options, config, plugins });
}

function isLoaded(c: CreateKernelOptions['config']): c is HookgateConfig {
  return typeof c === 'object' && c !== null && 'dataDir' in c && 'baseDir' in c;
}
